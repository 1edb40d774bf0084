"""Where the engine's time goes: ``optimize_wire`` on the 22 TPC-H plans, stage by stage.

    python bench/engine_stages.py [--iterations 30] [--engine DIR] [--results PATH]

A profiler's view is spread over the engine's many small calls, so this runs ``optimize_wire``'s steps
one by one, as ``costmodel.optimizer`` does (reading the catalog and the plan, the subqueries, the cost table
before, each pass of ``PIPELINE``, the report, the baseline, the answer's wire form, the parts only a full
answer carries), and times each. Its answer is checked against ``optimize_wire``'s, so a change to the
optimizer's steps that this does not follow fails (tests/bench/test_engine_stages_bench.py). Writes
bench/results/engine_stages.json: per stage, its mean time per query and its share.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.engine_path import use_engine_from_argv  # noqa: E402

use_engine_from_argv()

import costmodel  # noqa: E402
from costmodel import optimizer  # noqa: E402
from costmodel.catalog import catalog_from_wire  # noqa: E402
from costmodel.cost import CostModel, column_infos  # noqa: E402
from costmodel.estimate import DEFAULT_SOURCES, Estimator  # noqa: E402
from costmodel.estimate_live import ndv_drops  # noqa: E402
from costmodel.join_order import catalyst_join_order  # noqa: E402
from costmodel.options import options_from_wire  # noqa: E402
from costmodel.passes import PIPELINE, Work  # noqa: E402
from costmodel.passes.report import report  # noqa: E402
from costmodel.passes.rewrite import MINTED_IDS  # noqa: E402
from costmodel.plan import plan_memo  # noqa: E402
from costmodel.robust import savings_interval  # noqa: E402
from costmodel.unique_ids import unique_node_ids  # noqa: E402
from costmodel.wire import plan_from_wire  # noqa: E402

TPCH = ROOT / "bench" / "tpch"
RESULTS = ROOT / "bench" / "results" / "engine_stages.json"


def staged(plan: Any, catalog: Any, times: dict[str, float]) -> dict[str, Any]:
    """``optimize_wire(plan, catalog, baseline=True)``, each step's seconds added to ``times`` by name."""
    clock = time.perf_counter
    started = clock()

    def lap(name: str) -> None:
        nonlocal started
        now = clock()
        times[name] = times.get(name, 0.0) + now - started
        started = now

    token = MINTED_IDS.set(set())
    try:
        cat, opts = catalog_from_wire(catalog), options_from_wire(None)
        lap("read catalog")
        with plan_memo():
            node = plan_from_wire(plan, cat, functions=opts.functions)
            lap("read plan")
            with plan_memo():
                ordered = catalyst_join_order(node)
                lap("join order")
                decided, inner = optimizer._optimize_subqueries(ordered, cat, opts, None)
                lap("subqueries")
                estimator = Estimator(column_infos(decided, cat), DEFAULT_SOURCES)
                model = CostModel(cat, opts, estimator, optimizer._tracked_columns(decided))
                model.drop_unread(ndv_drops(decided, []))
                lap("cost model")
                before = model.table(decided)
                lap("cost table before")
                work = Work(decided, cat, opts, model)
                for name, run in PIPELINE:
                    run(work)
                    lap(name)
                result = report(work, before)
                result.decisions.extend(inner)
                lap("report")
                differs = any(d.get("action") in ("kept", "pulled_up") for d in result.decisions) or any(
                    r.get("rule") == "conjunct_order" for r in result.rewrites
                )
                baseline = optimizer._rule_based_total(work, node, None) if differs else result.total_after
                result.baseline_total = baseline
                if differs and work.final is not None:
                    result.savings_interval = savings_interval(work, work.final, optimizer._rule_based_plan(work))
                lap("baseline")
            brief = result.to_wire_brief()
            lap("answer")
            out = result.full_parts().completed(brief)
            lap("full answer parts")
        if decided is not node:  # as optimize_wire_brief: only a plan with a subquery can repeat a node id
            unique_node_ids(out.get("plan"))
        lap("unique ids")
        return out
    finally:
        MINTED_IDS.reset(token)


def measure(iterations: int, queries: list[str] | None = None) -> tuple[dict[str, float], int]:
    """Seconds per stage summed over ``iterations`` rounds of the TPC-H plans (after a warm-up round)."""
    catalog = json.loads((TPCH / "catalog.json").read_text())
    plans = {p.stem: json.loads(p.read_text()) for p in sorted((TPCH / "plans").glob("q*.json"))}
    chosen = [plans[q] for q in (queries or sorted(plans))]
    for plan in chosen:
        staged(plan, catalog, {})
    times: dict[str, float] = {}
    for _ in range(iterations):
        for plan in chosen:
            staged(plan, catalog, times)
    return times, iterations * len(chosen)


def table(times: dict[str, float], runs: int) -> list[dict[str, Any]]:
    total = sum(times.values())
    return [
        {"stage": name, "ms_per_query": round(seconds / runs * 1000, 4), "share": round(seconds / total, 4)}
        for name, seconds in times.items()
    ]


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--queries", help="comma-separated, e.g. q05,q08 (default: all 22)")
    parser.add_argument("--engine", metavar="DIR", help="the packages from DIR (e.g. an unpacked wheel)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    times, runs = measure(args.iterations, args.queries.split(",") if args.queries else None)
    rows = table(times, runs)
    out(f"engine: {Path(costmodel.__file__).parent}; {runs} optimizations")
    for row in rows:
        out(f"  {row['stage']:<18} {row['ms_per_query']:8.3f} ms  {100 * row['share']:5.1f}%")
    out(f"  {'total':<18} {sum(r['ms_per_query'] for r in rows):8.3f} ms")
    result = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "engine": str(Path(costmodel.__file__).parent),
        },
        "iterations": args.iterations,
        "queries": args.queries or "all 22 TPC-H plans",
        "stages": rows,
    }
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
