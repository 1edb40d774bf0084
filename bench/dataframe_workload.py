"""An expensive-UDF workload written as DataFrame pipelines: the original (C, as Spark runs it) against the
DataFrame ``run_dataframe`` returns (D), D/C per pipeline, the UDF's calls in each, and what optimizing costs
(reading the plan, asking the in-process service, analyzing the answer's SQL). Also the measurements behind
docs/dataframe.md's choice of mechanism: what dropping a temporary view over a cached DataFrame does to the cache,
through the public catalog and through the session catalog.

    PYTHONPATH=. python bench/dataframe_workload.py --orders 20000 --runs 3

Writes bench/results/dataframe_workload.json. The scale is small on purpose (a smoke-sized run on a shared
2-core machine); the ratios are the point, not the seconds.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402 - the pandas UDF's type hints are read from this module's names

from pushdown_client.dataframe import apply_sql, run_dataframe  # noqa: E402
from pushdown_client.dataframe_plan import translate  # noqa: E402
from service.client import PushdownClient  # noqa: E402

SEGMENTS = ["BUILDING", "AUTOMOBILE", "MACHINERY", "HOUSEHOLD", "FURNITURE"]
EXPENSIVE = 5000
CHEAP = 0.1


def session() -> Any:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("dataframe-workload")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def write_data(spark: Any, root: Path, orders: int) -> None:
    customers = max(50, orders // 10)
    o = [
        (i, None if i % 23 == 0 else i % customers, None if i % 19 == 0 else "final deposits " * (1 + i % 4) + str(i))
        + (float(i % 1000) + 0.5,)
        for i in range(orders)
    ]
    c = [(i, SEGMENTS[i % 5], i % 25, f"Customer#{i}") for i in range(customers)]
    n = [(i, (i % 10) // 2, f"NATION{i}") for i in range(25)]
    spark.createDataFrame(o, "o_id INT, o_custkey INT, o_comment STRING, o_totalprice DOUBLE").write.parquet(
        str(root / "orders")
    )
    spark.createDataFrame(c, "c_custkey INT, c_mktsegment STRING, c_nationkey INT, c_name STRING").write.parquet(
        str(root / "customer")
    )
    spark.createDataFrame(n, "n_nationkey INT, n_regionkey INT, n_name STRING").write.parquet(str(root / "nation"))


def table_statistics(orders: int) -> dict[str, Any]:
    """What an analyze of the three files would report, keyed by the leaves' labels (the files' names)."""
    customers = max(50, orders // 10)
    return {
        "tables": {
            "orders": {
                "row_count": orders,
                "column_stats": {"o_custkey": {"ndv": customers, "null_count": orders // 23 + 1}},
            },
            "customer": {
                "row_count": customers,
                "column_stats": {
                    "c_custkey": {"ndv": customers, "null_count": 0},
                    "c_mktsegment": {"ndv": 5, "null_count": 0},
                    "c_nationkey": {"ndv": 25, "null_count": 0},
                },
            },
            "nation": {
                "row_count": 25,
                "column_stats": {"n_nationkey": {"ndv": 25, "null_count": 0}, "n_regionkey": {"ndv": 5}},
            },
        }
    }


def udfs(spark: Any) -> tuple[Any, Any, Any]:
    """A row UDF that costs about what a small model or a parser costs per row, a pandas UDF, and a counter."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    calls = spark.sparkContext.accumulator(0)

    def score(text):
        calls.add(1)
        if text is None:
            return None
        total = 0
        for _ in range(40):
            total = (total * 31 + sum(map(ord, text))) % 1000003
        return total % 3 != 0

    def pandas_score(texts: pd.Series) -> pd.Series:
        calls.add(len(texts))
        return texts.str.count("de").fillna(0) % 3 != 0

    return F.udf(score, BooleanType()), F.pandas_udf(pandas_score, BooleanType()), calls


def pipelines(spark: Any, root: Path, udf: Any, pandas_udf: Any) -> dict[str, tuple[str, Callable[[], Any], Any]]:
    """name -> (what it is, a function making a fresh DataFrame, the UDF whose cost is declared)."""
    from pyspark.sql import functions as F

    def read(name: str) -> Any:
        return spark.read.parquet(str(root / name))

    def joined(orders: Any) -> Any:
        customer = read("customer").filter(F.col("c_mktsegment") == "BUILDING")
        nation = read("nation").filter(F.col("n_regionkey") == 0)
        out = orders.join(customer, F.col("o_custkey") == F.col("c_custkey"))
        return out.join(nation, F.col("c_nationkey") == F.col("n_nationkey"))

    def revenue(frame: Any) -> Any:
        return frame.groupBy("n_name").agg(F.count("*").alias("orders"), F.sum("o_totalprice").alias("revenue"))

    return {
        "d01_udf_after_joins": (
            "F.udf on orders written after joins to BUILDING customers of region 0, revenue per nation",
            lambda: revenue(joined(read("orders")).filter(udf(F.col("o_comment")))),
            udf,
        ),
        "d02_pandas_after_joins": (
            "pandas_udf, same shape",
            lambda: revenue(joined(read("orders")).filter(pandas_udf(F.col("o_comment")))),
            pandas_udf,
        ),
        "d03_udf_with_cached_dimension": (
            "F.udf above a join to a cached, filtered customer DataFrame",
            lambda: (
                read("orders")
                .join(CACHED["customer"], F.col("o_custkey") == F.col("c_custkey"))
                .filter(udf(F.col("o_comment")))
                .groupBy("c_nationkey")
                .count()
            ),
            udf,
        ),
        "d04_udf_written_early": (
            "F.udf written on orders before the joins (needs pull-up, issue 42)",
            lambda: revenue(joined(read("orders").filter(udf(F.col("o_comment"))))),
            udf,
        ),
        "d05_cheap_udf": (
            "the d01 pipeline with the UDF declared cheap: runs as written",
            lambda: revenue(joined(read("orders")).filter(udf(F.col("o_comment")))),
            None,
        ),
    }


CACHED: dict[str, Any] = {}


def timed(makers: list[Callable[[], Any]], calls: Any, runs: int) -> list[tuple[float, int, Counter]]:
    """Per maker: the median seconds of ``runs`` collects, each of a fresh DataFrame (a DataFrame run twice reuses
    its shuffle files and skips the UDF), the UDF calls of one run, and its rows. The makers take turns, run by
    run, so that a warming JVM or a busy neighbour weighs on each alike."""
    seconds: list[list[float]] = [[] for _ in makers]
    counted, rows = [0] * len(makers), [Counter() for _ in makers]
    for _ in range(runs):
        for i, make in enumerate(makers):
            frame = make()
            start_calls, start = calls.value, time.perf_counter()
            result = frame.collect()
            seconds[i].append(time.perf_counter() - start)
            counted[i], rows[i] = calls.value - start_calls, Counter(tuple(r) for r in result)
    return [(statistics.median(s), n, r) for s, n, r in zip(seconds, counted, rows, strict=True)]


def mechanism(spark: Any) -> dict[str, Any]:
    """What dropping a temporary view whose plan is a cached DataFrame's does to the cache, both ways."""
    manager = spark._jsparkSession.sharedState().cacheManager()
    out: dict[str, Any] = {}
    for way in ("spark.catalog.dropTempView", "sessionState.catalog.dropTempView"):
        cached = spark.range(100).selectExpr("id AS k").cache()
        cached.count()
        cached.createOrReplaceTempView("__pushdown_probe")
        if way.startswith("spark."):
            spark.catalog.dropTempView("__pushdown_probe")
        else:
            spark._jsparkSession.sessionState().catalog().dropTempView("__pushdown_probe")
        out[f"still_cached_after_{way}"] = bool(
            manager.lookupCachedData(spark._jsparkSession, cached._jdf.queryExecution().analyzed()).isDefined()
        )
        cached.unpersist()
    return out


def overhead(spark: Any, make: Callable[[], Any], udf: Any, runs: int) -> dict[str, float]:
    """Median milliseconds of each step of ``run_dataframe`` for one pipeline."""
    client = PushdownClient()
    steps: dict[str, list[float]] = {"translate": [], "optimize": [], "apply": []}
    for _ in range(runs):
        frame = make()
        t0 = time.perf_counter()
        translation = translate(frame, {udf: {"cost": EXPENSIVE}})
        t1 = time.perf_counter()
        answer = client.optimize(plan=translation.plan, catalog=translation.catalog(), detail="full")
        t2 = time.perf_counter()
        apply_sql(spark, translation, answer["spark"]["sql"])
        t3 = time.perf_counter()
        for key, value in zip(steps, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            value_ms = value * 1000
            steps[key].append(value_ms)
    return {k: round(statistics.median(v), 1) for k, v in steps.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "dataframe_workload.json"))
    args = parser.parse_args()
    from pyspark.sql import functions as F

    spark = session()
    root = Path(tempfile.mkdtemp(prefix="dataframe-workload-"))
    write_data(spark, root, args.orders)
    udf, pandas_udf, calls = udfs(spark)
    customer = spark.read.parquet(str(root / "customer")).filter(F.col("c_mktsegment") == "BUILDING").cache()
    customer.count()
    CACHED["customer"] = customer
    client = PushdownClient()
    catalog = table_statistics(args.orders)
    results: dict[str, Any] = {}
    for name, (what, make, declared) in pipelines(spark, root, udf, pandas_udf).items():
        cost = EXPENSIVE if declared is not None else CHEAP
        functions = {declared or udf: {"cost": cost}}
        started = time.perf_counter()
        run = run_dataframe(make(), client=client, functions=functions, catalog=catalog)
        optimize_ms = (time.perf_counter() - started) * 1000
        optimized = functools.partial(fresh, make, functions, catalog)
        (c_seconds, c_calls, c_rows), (d_seconds, d_calls, d_rows) = timed([make, optimized], calls, args.runs)
        results[name] = {
            "what": what,
            "c_seconds": round(c_seconds, 3),
            "d_seconds": round(d_seconds, 3),
            "d_over_c": round(d_seconds / c_seconds, 3),
            "udf_calls_c": c_calls,
            "udf_calls_d": d_calls,
            "as_written": run.as_written,
            "barriers": run.answer["spark"]["barriers"],
            "optimize_ms": round(optimize_ms, 1),
            "same_rows": c_rows == d_rows,
        }
        print(
            f"{name}: C {c_seconds:.2f}s D {d_seconds:.2f}s D/C {d_seconds / c_seconds:.2f} "
            f"calls {c_calls}->{d_calls} as_written={run.as_written} same_rows={c_rows == d_rows}"
        )
    ratios = [r["d_over_c"] for r in results.values()]
    summary = {
        "scale": {"orders": args.orders, "runs": args.runs, "master": "local[2]", "shuffle_partitions": 2},
        "geomean_d_over_c": round(math.exp(sum(math.log(r) for r in ratios) / len(ratios)), 3),
        "pipelines": results,
        "overhead_ms_d01": overhead(spark, pipelines(spark, root, udf, pandas_udf)["d01_udf_after_joins"][1], udf, 5),
        "mechanism": mechanism(spark),
        "spark": spark.version,
    }
    customer.unpersist()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "pipelines"}, indent=2))


def fresh(make: Callable[[], Any], functions: Any, catalog: Any) -> Any:
    """A fresh optimized DataFrame (each timed run gets its own, as for the original)."""
    return run_dataframe(make(), client=PushdownClient(), functions=functions, catalog=catalog).dataframe


if __name__ == "__main__":
    main()
