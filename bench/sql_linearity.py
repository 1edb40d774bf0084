"""SQL adapter scaling: time per term / join / union branch from small to hostile sizes.

Builds wide queries (flat OR and AND chains, join chains, UNION ALL chains, a
multi-MiB IN list), runs SQL -> plan -> SQL through the adapter alone (no
engine: its own scaling is bench/optimize_latency.py's), and reports each
size's time and the log-log slope of time against size per shape (1.0 is
linear). Writes bench/results/sql_linearity.json.

    python bench/sql_linearity.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.sql import SqlError, plan_to_sql, sql_to_plan  # noqa: E402

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


SHAPES = {
    "or_terms": (ors, [500, 2000, 5000, 20000]),
    "and_terms": (ands, [500, 2000, 5000, 20000]),
    "joins": (joins, [50, 100, 250, 500]),
    "union_branches": (unions, [100, 300, 1000, 3000]),
    "in_list_items": (in_list, [10000, 100000, 440000]),  # 440,000 items is a 5 MiB body
}


def measure(sql: str) -> dict[str, float | str]:
    start = time.perf_counter()
    try:
        plan = sql_to_plan(sql, CATALOG, "spark")
        mid = time.perf_counter()
        plan_to_sql(plan, "spark")
    except SqlError as err:
        return {"refused": err.code, "seconds": round(time.perf_counter() - start, 3)}
    end = time.perf_counter()
    return {"to_plan": round(mid - start, 3), "to_sql": round(end - mid, 3), "seconds": round(end - start, 3)}


def slope(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(time) against log(size)."""
    pts = [(math.log(n), math.log(t)) for n, t in points if t > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return round(sum((x - mx) * (y - my) for x, y in pts) / den, 2) if den else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the two smallest sizes of each shape")
    args = parser.parse_args()
    results: dict[str, dict] = {}
    for shape, (build, sizes) in SHAPES.items():
        rows = []
        for n in sizes[:2] if args.quick else sizes:
            sql = build(n)
            row = {"size": n, "bytes": len(sql), **measure(sql)}
            rows.append(row)
            print(f"{shape:15} {n:>7} {len(sql):>9} bytes  {row}", flush=True)
        results[shape] = {
            "runs": rows,
            "loglog_slope": slope([(r["size"], r["seconds"]) for r in rows if "refused" not in r]),
        }
    out = {
        "machine": {"python": platform.python_version(), "cpu_count": __import__("os").cpu_count()},
        "shapes": results,
    }
    path = ROOT / "bench" / "results" / "sql_linearity.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
