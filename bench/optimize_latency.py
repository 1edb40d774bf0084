"""Latency of optimizing the 22 TPC-H queries: in-process, over HTTP, and the peers in the same run.

    python bench/optimize_latency.py [--iterations 200] [--http-iterations 50]

Ours, per query (median and p99):
  * plan: wire plan in, wire response out (``costmodel.optimize_wire``), in process;
  * sql:  SQL in, optimized SQL out (parse, optimize, render), in process;
  * http: ``POST /optimize`` with the plan against a real ``pushdown serve``; plus requests/s.
Peers, SQL to optimized plan, measured here in the same run when installed:
  sqlglot's optimizer, DataFusion (``optimized_logical_plan``), Spark Catalyst (warm JVM).
Writes bench/results/optimize_latency.json.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from costmodel import optimize_wire  # noqa: E402
from service.sql import plan_to_sql, sql_to_plan  # noqa: E402

TPCH = ROOT / "bench" / "tpch"
RESULTS = ROOT / "bench" / "results" / "optimize_latency.json"
#: The bar from DEVELOPERS.md (2 cores), printed beside the figures measured here.
REFERENCE_MS = {"datafusion": 1.6, "sqlglot": 20.0, "spark": 54.0}
TARGET_PLAN_P50_MS = 1.0
#: issue 3: SQL to SQL at least this many times faster than sqlglot's optimizer, within this factor of DataFusion
TARGET_FASTER_THAN_SQLGLOT = 5.0
TARGET_WITHIN_DATAFUSION = 2.0


def load() -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    catalog = json.loads((TPCH / "catalog.json").read_text())
    queries = {p.stem: p.read_text() for p in sorted((TPCH / "queries").glob("q*.sql"))}
    plans = {p.stem: json.loads(p.read_text()) for p in sorted((TPCH / "plans").glob("q*.json"))}
    return catalog, queries, plans


def timed(fn: Callable[[], Any], iterations: int, warmup: int = 5) -> list[float]:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return {"p50_ms": round(statistics.median(ordered), 4), "p99_ms": round(p99, 4)}


# ------------------------------------------------------------------ peers


def sqlglot_peer(catalog: dict[str, Any]) -> Callable[[str], Callable[[], Any]] | None:
    import sqlglot
    from sqlglot.optimizer import optimize

    schema = {
        t: {c["name"]: c["type"].upper().replace("STRING", "VARCHAR") for c in info["columns"]}
        for t, info in catalog["tables"].items()
    }

    def prepare(sql: str) -> Callable[[], Any]:
        return lambda: optimize(sqlglot.parse_one(sql, read="spark"), schema=schema, dialect="spark")

    return prepare


def datafusion_peer(catalog: dict[str, Any]) -> Callable[[str], Callable[[], Any]] | None:
    try:
        import datafusion
    except ImportError:
        return None
    ctx = datafusion.SessionContext()
    types = {"int": "INT", "bigint": "BIGINT", "double": "DOUBLE", "string": "VARCHAR", "date": "DATE"}
    for table, info in catalog["tables"].items():
        cols = ", ".join(
            f"{c['name']} {types.get(c['type'], 'DECIMAL(15,2)' if c['type'].startswith('decimal') else 'VARCHAR')}"
            for c in info["columns"]
        )
        ctx.sql(f"CREATE TABLE {table} ({cols})").collect()

    def prepare(sql: str) -> Callable[[], Any]:
        return lambda: ctx.sql(sql).optimized_logical_plan()

    return prepare


def spark_peer(catalog: dict[str, Any]) -> Callable[[str], Callable[[], Any]] | None:
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    spark = SparkSession.builder.master("local[2]").appName("optimize-latency").getOrCreate()
    for table, info in catalog["tables"].items():
        cols = ", ".join(f"{c['name']} {c['type'].upper()}" for c in info["columns"])
        spark.sql(f"CREATE OR REPLACE TEMP VIEW {table} AS SELECT * FROM VALUES (NULL) AS x(x) WHERE false")
        spark.sql(f"DROP VIEW {table}")
        spark.sql(f"CREATE TABLE IF NOT EXISTS {table} ({cols}) USING parquet")

    def prepare(sql: str) -> Callable[[], Any]:
        return lambda: spark.sql(sql)._jdf.queryExecution().optimizedPlan()

    return prepare


# ------------------------------------------------------------------ http


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server() -> tuple[subprocess.Popen, str]:
    import httpx

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PUSHDOWN_API_TOKEN": ""},
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if httpx.get(f"{base}/healthz", timeout=0.5).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--http-iterations", type=int, default=50)
    parser.add_argument("--peer-iterations", type=int, default=20)
    parser.add_argument("--no-http", action="store_true")
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()

    catalog, queries, plans = load()
    rows: dict[str, dict[str, Any]] = {}
    print(f"{len(plans)} TPC-H queries; {args.iterations} iterations in process, {args.http_iterations} over HTTP")

    for name, plan in plans.items():
        rows[name] = {"plan": summary(timed(lambda p=plan: optimize_wire(p, catalog), args.iterations))}
        sql = queries[name]
        rows[name]["sql"] = summary(
            timed(
                lambda s=sql: plan_to_sql(optimize_wire(sql_to_plan(s, catalog), catalog)["plan"]),
                max(10, args.iterations // 4),
            )
        )

    throughput = None
    if not args.no_http:
        import httpx

        proc, base = start_server()
        try:
            with httpx.Client(base_url=base, timeout=30) as client:
                for name, plan in plans.items():
                    body = {"plan": plan, "catalog": catalog}
                    rows[name]["http"] = summary(
                        timed(lambda b=body: client.post("/optimize", json=b).raise_for_status(), args.http_iterations)
                    )
                start, count = time.perf_counter(), 0
                while time.perf_counter() - start < 5.0:
                    for plan in plans.values():
                        client.post("/optimize", json={"plan": plan, "catalog": catalog}).raise_for_status()
                        count += 1
                throughput = round(count / (time.perf_counter() - start), 1)
        finally:
            proc.terminate()
            proc.wait(timeout=10)

    peers: dict[str, Callable[[str], Callable[[], Any]] | None] = {
        "sqlglot": sqlglot_peer(catalog),
        "datafusion": datafusion_peer(catalog),
        "spark": None if args.no_spark else spark_peer(catalog),
    }
    for peer, prepare in peers.items():
        if prepare is None:
            continue
        for name, sql in queries.items():
            try:
                rows[name][peer] = summary(timed(prepare(sql), args.peer_iterations, warmup=3))
            except Exception as exc:  # a peer that cannot plan a query is reported, not fatal
                rows[name][peer] = {"error": str(exc).splitlines()[0][:120]}

    columns = ["plan", "sql", "http", "sqlglot", "datafusion", "spark"]
    header = f"{'query':6}" + "".join(f"{c + ' p50/p99 ms':>24}" for c in columns)
    print(header)
    for name, row in rows.items():
        cells = []
        for column in columns:
            value = row.get(column)
            if value is None:
                cells.append(f"{'-':>24}")
            elif "error" in value:
                cells.append(f"{'error':>24}")
            else:
                cells.append(f"{value['p50_ms']:>12.3f}/{value['p99_ms']:<11.3f}")
        print(f"{name:6}" + "".join(cells))

    def median_of(column: str) -> float | None:
        values = [r[column]["p50_ms"] for r in rows.values() if column in r and "p50_ms" in r[column]]
        return round(statistics.median(values), 4) if values else None

    medians = {c: median_of(c) for c in columns}
    print("\nmedian per query (ms):")
    for column in columns:
        reference = REFERENCE_MS.get(column)
        extra = f"   (bar from DEVELOPERS.md: {reference} ms)" if reference else ""
        print(f"  {column:11} {medians[column] if medians[column] is not None else 'not run':>10}{extra}")
    if throughput is not None:
        print(f"  HTTP throughput, one client: {throughput} requests/s")
    ratios: dict[str, float | None] = {"sqlglot_over_ours": None, "ours_over_datafusion": None}
    if medians["sql"] and medians["sqlglot"]:
        ratios["sqlglot_over_ours"] = round(medians["sqlglot"] / medians["sql"], 3)
        verdict3 = "met" if ratios["sqlglot_over_ours"] >= TARGET_FASTER_THAN_SQLGLOT else "missed"
        print(
            f"  SQL to SQL: {ratios['sqlglot_over_ours']}x faster than sqlglot's optimizer"
            f" (target >= {TARGET_FASTER_THAN_SQLGLOT}x: {verdict3})"
        )
    if medians["sql"] and medians["datafusion"]:
        ratios["ours_over_datafusion"] = round(medians["sql"] / medians["datafusion"], 3)
        verdict3 = "met" if ratios["ours_over_datafusion"] <= TARGET_WITHIN_DATAFUSION else "missed"
        print(
            f"  SQL to SQL: {ratios['ours_over_datafusion']}x DataFusion's time"
            f" (target <= {TARGET_WITHIN_DATAFUSION}x: {verdict3})"
        )
    worst_plan_p50 = max(r["plan"]["p50_ms"] for r in rows.values())
    verdict = "met" if worst_plan_p50 < TARGET_PLAN_P50_MS else "missed"
    print(f"  target: in-process p50 < {TARGET_PLAN_P50_MS} ms for every query: {verdict} (worst {worst_plan_p50} ms)")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
                "queries": rows,
                "median_p50_ms": medians,
                "http_requests_per_s": throughput,
                "reference_ms": REFERENCE_MS,
                "target_plan_p50_ms": TARGET_PLAN_P50_MS,
                "target": verdict,
                "ratios": ratios,
            },
            indent=2,
        )
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
