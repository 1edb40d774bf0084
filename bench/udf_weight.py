"""What ``expensive_check`` really costs on local Spark, in the model's units, at each ``--udf-loops``.

    python bench/udf_weight.py [--loops 0,25,50,100,200,400] [--rows 40000]

The pull-up workload (bench/pullup_workload.py) declares ``expensive_check`` to the service at cost 5000, a
plain comparison being 1. Whether that declaration is true depends on the work per call (``--udf-loops``). One
unit is measured by ``pushdown_client.calibration.calibrate`` (a ``spark.range`` filter on ``id % 7 = 3``,
priced 3 units a row). One call of the UDF is timed as the slope of a ``count`` over ``spark.range(n)`` filtered
by the registered UDF on a 49-character string (an average TPC-H ``o_comment``), between ``rows`` and a
quarter of it (the job's fixed cost cancels), fastest of three runs each. Its units per call are that time over
the unit; a line through them against the loops gives the loops at which the UDF costs its declared 5000.

Writes bench/results/udf_weight.json (with the machine's load average before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.spark_e2e import make_spark  # noqa: E402
from bench.spark_workload import make_check  # noqa: E402
from pushdown_client.calibration import calibrate  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "udf_weight.json"
DECLARED = 5000.0
#: an average TPC-H o_comment is about 49 characters
TEXT = "carefully final deposits detect slyly agai pinto "


def fastest(action: Callable[[], Any], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def per_call_s(spark: Any, loops: int, rows: int) -> float:
    """Seconds one call of ``expensive_check`` at ``loops`` adds to a Spark filter (slope over rows)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    check = F.udf(make_check(loops), BooleanType(), useArrow=False)  # pickled rows, as a registered UDF runs

    def count(n: int) -> int:
        texts = spark.range(n).select(F.concat(F.lit(TEXT), F.col("id").cast("string")).alias("t"))
        return int(texts.filter(check(F.col("t"))).count())

    count(1000)  # Python workers started, the function pickled
    small, big = fastest(lambda: count(rows // 4)), fastest(lambda: count(rows))
    return max(big - small, 0.0) / (rows - rows // 4)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loops", default="0,25,50,100,200,400")
    parser.add_argument("--rows", type=int, default=40_000, help="rows of the UDF's timing")
    parser.add_argument("--unit-rows", type=int, default=4_000_000, help="rows of the comparison's timing")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    spark = make_spark(args.master)
    cal = calibrate(spark, rows=args.unit_rows)
    print(
        f"one unit (a comparison) {cal.unit_s * 1e9:.2f} ns; "
        f"a row through a Python worker {cal.python_row_s * 1e6:.2f} us"
    )
    points: list[dict[str, float]] = []
    for loops in [int(x) for x in args.loops.split(",")]:
        seconds = per_call_s(spark, loops, args.rows)
        units = seconds / cal.unit_s
        points.append({"loops": loops, "per_call_us": seconds * 1e6, "units": units})
        print(f"loops {loops:5d}: {seconds * 1e6:8.2f} us a call = {units:9.0f} units", flush=True)
    n = len(points)
    mean_x = sum(p["loops"] for p in points) / n
    mean_y = sum(p["units"] for p in points) / n
    sxx = sum((p["loops"] - mean_x) ** 2 for p in points)
    slope = sum((p["loops"] - mean_x) * (p["units"] - mean_y) for p in points) / sxx if sxx else 0.0
    intercept = mean_y - slope * mean_x
    matching = (DECLARED - intercept) / slope if slope > 0 else None
    print(
        f"units = {intercept:.0f} + {slope:.1f} x loops; the declared {DECLARED:g} units at "
        f"{'-' if matching is None else f'{matching:.0f}'} loops"
    )
    result = {
        "unit_s": cal.unit_s,
        "unit_interval": list(cal.unit_interval),
        "python_row_s": cal.python_row_s,
        "rows": args.rows,
        "unit_rows": args.unit_rows,
        "points": points,
        "units_per_loop": slope,
        "units_at_zero_loops": intercept,
        "declared_units": DECLARED,
        "loops_matching_declared": matching,
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
        "master": args.master,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2))
    print(f"wrote {args.output}; load average before {load_before}, after {result['loadavg_after']}")
    return result


if __name__ == "__main__":
    main()
