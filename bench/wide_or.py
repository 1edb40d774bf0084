"""Issue 45's wide input: a 20,000-term OR chain answered in under 2 s in pure Python, timed as ``POST /optimize``
answers it.

    python bench/wide_or.py [--runs 3] [--sizes 5000,10000,20000]

Each size's OR chain (``c = 0 OR c = 1 OR ...``), and a 20,000-value IN list beside it, goes through
``service.optimize.answer_body`` from the body's bytes to the answer's bytes (the cache off), ``--runs`` times in
one process after a warm-up at the smallest size; the figure is the minimum of the runs, in wall-clock seconds and
in the process's CPU seconds (on a shared machine the wall clock counts the time other processes hold the cores;
the CPU seconds do not, though the caches they share still slow it). Prints and writes bench/results/wide_or.json
with the load average before and after, and the log-log slope of the OR chain's time against its size (1.0 is
linear).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.optimize import OptimizeService, answer_body  # noqa: E402
from service.request import parse_ordinary_request  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "wide_or.json"
TARGET_SECONDS = 2.0
CATALOG = {
    "tables": {
        "t": {
            "columns": [{"name": n, "type": t} for n, t in (("a", "int"), ("b", "string"), ("c", "int"))],
            "row_count": 1_000_000,
        }
    }
}


def or_chain(n: int) -> str:
    return "SELECT a FROM t WHERE " + " OR ".join(f"c = {i}" for i in range(n))


def in_list(n: int) -> str:
    return "SELECT a FROM t WHERE c IN (" + ", ".join(str(i) for i in range(n)) + ")"


def timed(optimizer: OptimizeService, sql: str, runs: int) -> dict[str, Any]:
    """The minimum wall-clock and CPU seconds of ``runs`` answers to ``sql``, and the answer's size."""
    raw = json.dumps({"sql": sql, "catalog": CATALOG}).encode()
    walls, cpus, size = [], [], 0
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        body = parse_ordinary_request(raw, max_json_depth=2500)
        size = len(answer_body(optimizer, body, (None, None), use_cache=False, full=False).payload)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return {"wall_s": round(min(walls), 3), "cpu_s": round(min(cpus), 3), "answer_bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="5000,10000,20000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    optimizer = OptimizeService()
    load_before = os.getloadavg()
    timed(optimizer, or_chain(sizes[0]), 1)  # imports and first-call work out of the figures
    rows: dict[str, Any] = {}
    for n in sizes:
        rows[f"or_{n}"] = timed(optimizer, or_chain(n), args.runs)
        print(f"OR chain of {n}: {rows[f'or_{n}']}  (load {os.getloadavg()[0]:.1f})", flush=True)
    rows["in_20000"] = timed(optimizer, in_list(20_000), args.runs)
    print(f"IN list of 20000: {rows['in_20000']}  (load {os.getloadavg()[0]:.1f})")
    first, last = rows[f"or_{sizes[0]}"], rows[f"or_{sizes[-1]}"]
    slope = math.log(last["cpu_s"] / first["cpu_s"]) / math.log(sizes[-1] / sizes[0]) if len(sizes) > 1 else None
    biggest = rows.get("or_20000")
    result = {
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
        },
        "runs": args.runs,
        "sizes": rows,
        "or_cpu_slope": round(slope, 2) if slope is not None else None,
        "target_s": TARGET_SECONDS,
        "or_20000_within_target": None if biggest is None else biggest["wall_s"] < TARGET_SECONDS,
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"slope (CPU seconds against size): {result['or_cpu_slope']}; wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
