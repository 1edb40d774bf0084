"""The long differential campaign: random plans, original vs rewritten, on DuckDB and on local Spark.

    python bench/differential.py [--duckdb 20000] [--spark 1000] [--seed 1] [--query-seconds 60]

Every plan is optimized in ``always`` and ``cost`` modes and both results are
compared with the original's as multisets. A mismatch is shrunk to a minimal
plan and saved under tests/correctness/regressions/, where CI replays it.
Prints plans run, mismatches, and the coverage of operators and join types;
writes bench/results/differential.json.

DuckDB runs every query with its optimizer off (the plan's own order), so a generated plan that crosses four
tables under a window function can take minutes. A DuckDB query is interrupted after ``--query-seconds``: a
plan whose original runs that long is skipped, and a rewrite that does is listed under ``timed_out``, not
compared (a rewrite does the same work or less; the list says if one ever does not).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from costmodel import optimize_wire  # noqa: E402
from tests.correctness.plangen import TABLES, PlanGenerator, catalog, make_rows  # noqa: E402
from tests.correctness.shrink import save_regression, shrink  # noqa: E402
from tests.correctness.test_rewrites_preserve_results import _load, _multiset, agrees  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "differential.json"


class TimedOut(Exception):
    """A DuckDB query ran past the campaign's limit per query."""


def within(seconds: float, interrupt: Any, call: Any, interrupted: type[BaseException]) -> Any:
    """``call()``, with ``interrupt()`` called from a timer after ``seconds``: ``TimedOut`` if it raised
    ``interrupted`` after the timer fired.

    >>> within(5, lambda: None, lambda: 42, KeyboardInterrupt)
    42
    """
    timer = threading.Timer(seconds, interrupt)
    timer.start()
    try:
        return call()
    except interrupted as exc:
        if timer.finished.is_set():
            raise TimedOut(f"interrupted after {seconds} s") from exc
        raise
    finally:
        timer.cancel()


def coverage(plan: Any, ops: Counter, joins: Counter) -> None:
    stack = [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "op" in node:
                ops[node["op"]] += 1
                if node["op"] == "join":
                    joins[node["type"] + (" null-aware" if node.get("null_aware") else "")] += 1
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def campaign(engine: str, count: int, seed: int, query_seconds: float = 60.0) -> dict[str, Any]:
    rng = random.Random(seed)
    rows = {name: make_rows(rng, name, 30) for name in TABLES}
    cat = catalog(rows)
    if engine == "duckdb":
        import duckdb

        con = _load(rows)

        def run(plan: dict[str, Any]) -> Counter:
            return within(query_seconds, con.interrupt, lambda: _multiset(con, plan, cat), duckdb.InterruptException)
    else:
        from pyspark.sql.types import IntegerType, StringType, StructField, StructType

        from service.spark_plan import to_dataframe
        from tests.spark_session import get_spark

        spark = get_spark()
        spark.conf.set("spark.sql.ansi.enabled", "false")  # see tests/correctness/test_spark_differential.py
        for name, columns in TABLES.items():
            schema = StructType([StructField(c, IntegerType() if t == "int" else StringType()) for c, t in columns])
            spark.createDataFrame(rows[name], schema).createOrReplaceTempView(name)

        def run(plan: dict[str, Any]) -> Counter:
            return Counter(tuple(row) for row in to_dataframe(spark, plan, cat).collect())

    ops: Counter = Counter()
    joins: Counter = Counter()
    mismatches: list[str] = []
    skipped: list[str] = []
    timed_out: list[str] = []
    moved = 0
    started = time.perf_counter()
    for i in range(count):
        plan = PlanGenerator(random.Random(seed * 1_000_003 + i)).query()
        coverage(plan, ops, joins)
        try:
            expected = run(plan)
        except Exception as exc:  # the engine refuses the plan as written: nothing to compare
            skipped.append(f"plan {i}: {type(exc).__name__}")
            continue
        for mode in ("always", "cost"):
            answer = optimize_wire(plan, cat, {"mode": mode})
            moved += any(d["action"] == "pushed" for d in answer["decisions"])
            try:
                got = run(answer["plan"])
            except TimedOut:  # the original ran within the limit: said, not compared
                timed_out.append(f"plan {i}, mode {mode}")
                continue
            except Exception as exc:  # the original ran: a rewrite the engine refuses is a mismatch
                got = Counter({f"refused: {type(exc).__name__}": 1})
            if not agrees(expected, got):

                def fails(candidate: dict[str, Any], mode: str = mode) -> bool:
                    try:
                        return not agrees(run(candidate), run(optimize_wire(candidate, cat, {"mode": mode})["plan"]))
                    except Exception:  # a variant the engine refuses proves nothing
                        return False

                saved = save_regression(shrink(plan, cat, fails), {"rows": rows}, f"{engine} plan {i}, mode {mode}")
                mismatches.append(str(saved.relative_to(ROOT)))
        if (i + 1) % max(1, count // 10) == 0:
            print(f"  {engine}: {i + 1}/{count} plans, {len(mismatches)} mismatches", flush=True)
    return {
        "plans": count,
        "rewrites_compared": 2 * count,
        "answers_with_a_push": moved,
        "mismatches": mismatches,
        "skipped_as_written": skipped,
        "timed_out": timed_out,
        "seconds": round(time.perf_counter() - started, 1),
        "operators": dict(ops.most_common()),
        "join_types": dict(joins.most_common()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duckdb", type=int, default=20_000)
    parser.add_argument("--spark", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--query-seconds", type=float, default=60.0, help="DuckDB's limit per query (default 60)")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for engine, count in (("duckdb", args.duckdb), ("spark", args.spark)):
        if count:
            print(f"{engine}: {count} plans")
            results[engine] = campaign(engine, count, args.seed, args.query_seconds)
    for engine, r in results.items():
        print(
            f"\n{engine}: {r['plans']} plans ({r['rewrites_compared']} rewrites compared) in {r['seconds']} s,"
            f" {len(r['mismatches'])} mismatches; {r['answers_with_a_push']} answers moved a predicate"
        )
        print(f"  operators: {r['operators']}")
        print(f"  join types: {r['join_types']}")
        if r["timed_out"] or any("TimedOut" in s for s in r["skipped_as_written"]):
            print(f"  past the limit per query: {r['timed_out']} rewrites, as written: {r['skipped_as_written']}")
        for saved in r["mismatches"]:
            print(f"  mismatch kept as {saved}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2))
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    if any(r["mismatches"] for r in results.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
