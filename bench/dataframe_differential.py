"""The long DataFrame differential campaign: random DataFrame pipelines (tests/correctness/dataframe_gen.py), each
run as written and as ``run_dataframe`` optimizes it on local Spark (one session, ``local[2]``), compared as
multisets of rows and by schema (names, order, types, nullability); a pipeline the answer runs as written is also
compared with the answer's Spark SQL applied to its leaves (what the runner does when an answer has barriers).

    PYTHONPATH=. python bench/dataframe_differential.py [--pipelines 500] [--first-seed 1000]

Writes bench/results/dataframe_differential.json: pipelines run, how many the answer rewrote (not the caller's own
DataFrame), predicates moved down and pulled up, mismatches (each with its seed: ``DataFrameGenerator(spark, udfs,
seed)`` rebuilds it), errors by reason, the nodes the translation kept opaque, the operators written, seconds per
phase, and the machine's load before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.client import PushdownClient  # noqa: E402
from tests.correctness.dataframe_check import Outcome, check_seed  # noqa: E402
from tests.correctness.dataframe_gen import make_udfs, register_tables  # noqa: E402
from tests.spark_session import get_spark  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "dataframe_differential.json"


def summarize(outcomes: list[Outcome]) -> dict[str, Any]:
    """The campaign's counts from its outcomes.

    >>> summarize([Outcome(1, "same", ["scan"], rewritten=True, downward=2, upward=1)])["rewritten"]
    1
    """
    errors = Counter(o.reason[:160] for o in outcomes if o.status == "error")
    phases: dict[str, list[float]] = {}
    for o in outcomes:
        for phase, seconds in o.seconds.items():
            phases.setdefault(phase, []).append(seconds)
    return {
        "pipelines": len(outcomes),
        "same": sum(o.status == "same" for o in outcomes),
        "rewritten": sum(o.rewritten for o in outcomes),
        "as_written": sum(o.status == "same" and not o.rewritten for o in outcomes),
        "as_written_with_the_answer_applied_too": sum(o.applied for o in outcomes),
        "pipelines_with_downward_moves": sum(1 for o in outcomes if o.downward),
        "downward_decisions": sum(o.downward for o in outcomes),
        "pipelines_with_upward_moves": sum(1 for o in outcomes if o.upward),
        "upward_decisions": sum(o.upward for o in outcomes),
        "rewritten_with_upward_moves": sum(1 for o in outcomes if o.upward and o.rewritten),
        "mismatches": [
            {"seed": o.seed, "reason": o.reason, "ops": o.ops, "detail": o.detail}
            for o in outcomes
            if o.status == "mismatch"
        ],
        "errors": len([o for o in outcomes if o.status == "error"]),
        "errors_by_reason": dict(errors.most_common()),
        "opaque_nodes_by_reason": dict(Counter(r[:100] for o in outcomes for r in o.opaque).most_common()),
        "operators_written": dict(Counter(op for o in outcomes for op in o.ops).most_common()),
        "seconds_median_per_phase": {k: round(statistics.median(v), 3) for k, v in phases.items()},
        "seconds_total_per_phase": {k: round(sum(v), 1) for k, v in phases.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipelines", type=int, default=500)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    load_before = os.getloadavg()
    started = time.perf_counter()
    spark = get_spark()
    register_tables(spark, Path(tempfile.mkdtemp(prefix="dataframe-differential-")))
    udfs = make_udfs()
    client = PushdownClient()
    setup_seconds = time.perf_counter() - started
    outcomes: list[Outcome] = []
    for seed in range(args.first_seed, args.first_seed + args.pipelines):
        outcome = check_seed(spark, udfs, seed, client)
        outcomes.append(outcome)
        if outcome.status != "same":
            print(f"seed {seed}: {outcome.status} {outcome.reason}", flush=True)
        if len(outcomes) % 50 == 0:
            print(f"{len(outcomes)} pipelines, {time.perf_counter() - started:.0f} s", flush=True)
    result = {
        "settings": {
            "pipelines": args.pipelines,
            "seeds": [args.first_seed, args.first_seed + args.pipelines - 1],
            "spark": "local[2], 2 shuffle partitions (tests/spark_session.py)",
            "tables": "3 Parquet tables of 36 rows (30 and 6 duplicates), a fifth NULL, a third of numbers 1",
            "service": "in process (service.client.PushdownClient())",
        },
        **summarize(outcomes),
        "seconds_setup": round(setup_seconds, 1),
        "seconds_total": round(time.perf_counter() - started, 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    shown = {k: v for k, v in result.items() if k not in ("mismatches", "operators_written", "opaque_nodes_by_reason")}
    print(json.dumps(shown, indent=2))
    print(f"mismatches: {len(result['mismatches'])}; written to {args.out}")


if __name__ == "__main__":
    main()
