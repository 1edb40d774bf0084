"""SQL adapter speed: scaling on wide inputs, and SQL -> SQL against sqlglot's optimizer on TPC-H.

Shapes: wide queries (flat OR and AND chains, join chains, UNION ALL chains,
long IN lists) go SQL -> plan -> engine -> SQL; each size reports the three
parts' seconds, and each shape the log-log slope of the total against size
(1.0 is linear; the target is <= 1.2) and of the adapter alone.

TPC-H: the 22 queries, SQL -> rewritten SQL (adapter + engine) against
``sqlglot.optimizer.optimize`` with the same schema, timed interleaved in one
run (ours, the adapter alone, sqlglot, round-robin), medians and ratios.
The target is sqlglot / ours >= 3 on every query.

Writes bench/results/sql_linearity.json (rewritten on every run).

    python bench/sql_linearity.py [--quick] [--only shapes|tpch]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from costmodel import optimize_wire  # noqa: E402
from service.sql import SqlError, plan_to_sql, sql_to_plan  # noqa: E402

TPCH = ROOT / "bench" / "tpch"
RESULTS = ROOT / "bench" / "results" / "sql_linearity.json"
TARGET_SLOPE = 1.2
TARGET_FASTER_THAN_SQLGLOT = 3.0
CATALOG = {
    "tables": {
        "t": {"columns": [{"name": n, "type": t} for n, t in [("a", "int"), ("b", "string"), ("c", "int")]]},
    }
}


def ors(n: int) -> str:
    return "SELECT a FROM t WHERE " + " OR ".join(f"c = {i}" for i in range(n))


def ands(n: int) -> str:
    return "SELECT a FROM t WHERE " + " AND ".join(f"c <> {i}" for i in range(n))


def joins(n: int) -> str:
    return "SELECT t0.a FROM t t0 " + " ".join(f"JOIN t t{i} ON t{i - 1}.a = t{i}.a" for i in range(1, n + 1))


def unions(n: int) -> str:
    return " UNION ALL ".join(f"SELECT a FROM t WHERE c > {i}" for i in range(n))


def in_list(n: int) -> str:
    return "SELECT a FROM t WHERE b IN (" + ", ".join(f"'v{i:08d}'" for i in range(n)) + ")"


#: shape -> (builder, sizes, quick sizes)
SHAPES: dict[str, tuple[Callable[[int], str], list[int], list[int]]] = {
    "or_terms": (ors, [500, 2000, 5000, 20000], [200, 1000, 4000]),
    "and_terms": (ands, [500, 2000, 5000, 20000], [200, 1000, 4000]),
    "joins": (joins, [50, 100, 250, 500], [25, 50, 100]),
    "union_branches": (unions, [100, 300, 1000, 3000], [50, 150, 500]),
    "in_list_items": (in_list, [10000, 30000, 100000], [3000, 10000, 30000]),
}


def measure(sql: str) -> dict[str, Any]:
    """SQL -> plan -> engine -> SQL once, each part timed; a refusal is reported with its code."""
    start = time.perf_counter()
    try:
        plan = sql_to_plan(sql, CATALOG, "spark")
        planned = time.perf_counter()
        answer = optimize_wire(plan, CATALOG)
        optimized = time.perf_counter()
        plan_to_sql(answer["plan"], "spark")
    except SqlError as err:
        return {"refused": err.code, "seconds": round(time.perf_counter() - start, 3)}
    end = time.perf_counter()
    return {
        "to_plan": round(planned - start, 4),
        "engine": round(optimized - planned, 4),
        "to_sql": round(end - optimized, 4),
        "adapter": round((planned - start) + (end - optimized), 4),
        "seconds": round(end - start, 4),
    }


def slope(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(time) against log(size)."""
    pts = [(math.log(n), math.log(t)) for n, t in points if t > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return round(sum((x - mx) * (y - my) for x, y in pts) / den, 2) if den else None


def shapes(quick: bool) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for shape, (build, sizes, quick_sizes) in SHAPES.items():
        rows = []
        for n in quick_sizes if quick else sizes:
            sql = build(n)
            row = {"size": n, "bytes": len(sql), **measure(sql)}
            rows.append(row)
            print(f"{shape:15} {n:>7} {len(sql):>9} bytes  {row}", flush=True)
        done = [r for r in rows if "refused" not in r]
        results[shape] = {
            "runs": rows,
            "loglog_slope": slope([(r["size"], r["seconds"]) for r in done]),
            "loglog_slope_adapter": slope([(r["size"], r["adapter"]) for r in done]),
            "loglog_slope_engine": slope([(r["size"], r["engine"]) for r in done]),
        }
        print(f"{shape:15} slope {results[shape]['loglog_slope']} (adapter {results[shape]['loglog_slope_adapter']})")
    return results


def tpch(rounds: int) -> dict[str, Any]:
    """Per TPC-H query: medians of ours (SQL -> SQL), the adapter alone, the engine alone and sqlglot."""
    import sqlglot
    from sqlglot.optimizer import optimize

    catalog = json.loads((TPCH / "catalog.json").read_text())
    schema = {
        t: {c["name"]: c["type"].upper().replace("STRING", "VARCHAR") for c in info["columns"]}
        for t, info in catalog["tables"].items()
    }
    out: dict[str, Any] = {}
    for path in sorted((TPCH / "queries").glob("q*.sql")):
        sql = path.read_text()
        optimized = optimize_wire(sql_to_plan(sql, catalog), catalog)["plan"]
        plan = sql_to_plan(sql, catalog)
        runs: dict[str, Callable[[], Any]] = {
            "ours": lambda s=sql: plan_to_sql(optimize_wire(sql_to_plan(s, catalog), catalog)["plan"]),
            "adapter": lambda s=sql, o=optimized: (sql_to_plan(s, catalog), plan_to_sql(o)),
            "engine": lambda p=plan: optimize_wire(p, catalog),
            "sqlglot": lambda s=sql: optimize(sqlglot.parse_one(s, read="spark"), schema=schema, dialect="spark"),
        }
        samples: dict[str, list[float]] = {k: [] for k in runs}
        for fn in runs.values():
            fn()  # warm
        for _ in range(rounds):
            for key, fn in runs.items():
                start = time.perf_counter_ns()
                fn()
                samples[key].append((time.perf_counter_ns() - start) / 1e6)
        row: dict[str, Any] = {f"{k}_ms": round(statistics.median(v), 3) for k, v in samples.items()}
        row["sqlglot_over_ours"] = round(row["sqlglot_ms"] / row["ours_ms"], 2)
        row["sqlglot_over_adapter"] = round(row["sqlglot_ms"] / row["adapter_ms"], 2)
        out[path.stem] = row
        print(f"{path.stem} {row}", flush=True)
    ratios = [r["sqlglot_over_ours"] for r in out.values()]
    adapter = [r["sqlglot_over_adapter"] for r in out.values()]
    summary = {
        "min_sqlglot_over_ours": min(ratios),
        "geomean_sqlglot_over_ours": round(math.exp(sum(map(math.log, ratios)) / len(ratios)), 2),
        "min_sqlglot_over_adapter": min(adapter),
        "geomean_sqlglot_over_adapter": round(math.exp(sum(map(math.log, adapter)) / len(adapter)), 2),
        "target": TARGET_FASTER_THAN_SQLGLOT,
        "met_on_every_query": min(ratios) >= TARGET_FASTER_THAN_SQLGLOT,
    }
    print(f"TPC-H SQL -> SQL: {summary}")
    return {"queries": out, "summary": summary}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer TPC-H rounds (a few minutes)")
    parser.add_argument("--only", choices=["shapes", "tpch"], help="run one part")
    args = parser.parse_args()
    out: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_average": os.getloadavg(),
            "quick": args.quick,
        },
    }
    if args.only in (None, "tpch"):
        out["tpch"] = tpch(rounds=7 if args.quick else 21)
    if args.only in (None, "shapes"):
        out["shapes"] = shapes(args.quick)
    out["machine"]["load_average_after"] = os.getloadavg()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
