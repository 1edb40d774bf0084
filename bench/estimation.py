"""Selectivity estimates on TPC-H: our analyze job and sample-based estimator against Spark's CBO, same run.

    python bench/estimation.py [--scale 1] [--master local[2]] [--truth duckdb|spark] [--no-spark-cbo]

For each predicate of the workload (single-table, over lineitem, orders, part and customer):

  * truth: the exact row count (DuckDB over the Parquet files by default, or a full Spark count);
  * ours:  ``service.analyze.run_analyze`` on each table (timed), a wire catalog and samples built from
    its output, and ``Estimator(column_infos(plan, catalog), sample_sources(samples)).estimate(P)`` for the
    whole predicate (conjunctions jointly), with its interval and source;
  * Spark: ``ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS`` with CBO, histograms and plan statistics
    enabled (timed), then the optimized plan's estimated row count for ``SELECT * FROM t WHERE P``.

q-error = max(est/true, true/est), both floored at one row. Summary: median, 95th percentile (nearest
rank) and maximum q-error for both, the two analyze times, and the issue's targets (our p95 <= 1.5 and
below Spark's; our analyze job faster than Spark's ANALYZE).

Each predicate is written twice, as our wire JSON and as SQL text. As a check that the two say the same
thing (and that the numpy evaluator follows SQL), each is also counted on our sample, by our evaluator
and by DuckDB; any difference is printed and recorded.

TPC-H data is generated once with ``tpchgen-cli`` into ``bench/.data/tpch-sf<scale>/`` (git-ignored by a
``.gitignore`` inside ``bench/.data``). Writes bench/results/estimation.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from costmodel import catalog_from_wire, plan_from_wire  # noqa: E402
from costmodel.cost import column_infos  # noqa: E402
from costmodel.estimate import Estimator, SelectivityEstimate  # noqa: E402
from costmodel.sample import SampleSource  # noqa: E402
from service.analyze import AnalyzeRequest, run_analyze  # noqa: E402
from service.statistics import sample_from_arrow, sample_sources  # noqa: E402

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from costmodel.catalog import Catalog
    from costmodel.sample import Sample

TABLES = ("lineitem", "orders", "part", "customer")
DATA = ROOT / "bench" / ".data"
RESULTS = ROOT / "bench" / "results" / "estimation.json"
#: Spark tables are registered under this prefix so that they never clash with a session's own tables.
SPARK_PREFIX = "est_"
TARGET_P95 = 1.5


# ------------------------------------------------------------------ the workload


def col(name: str) -> dict[str, Any]:
    return {"col": name}


def lit(value: Any, typ: str | None = None) -> dict[str, Any]:
    return {"lit": value} if typ is None else {"lit": value, "type": typ}


def date(iso: str) -> dict[str, Any]:
    return {"lit": iso, "type": "date"}


def dec(value: float) -> dict[str, Any]:
    return {"lit": value, "type": "double"}


def fn(name: str, *args: dict[str, Any]) -> dict[str, Any]:
    return {"fn": name, "args": list(args)}


def and_(*args: dict[str, Any]) -> dict[str, Any]:
    return fn("and", *args)


def in_(column: str, *values: Any) -> dict[str, Any]:
    return fn("in", col(column), *[lit(v) for v in values])


@dataclass(frozen=True, slots=True)
class Predicate:
    """One workload entry: the same predicate as our wire JSON and as SQL (Spark and DuckDB read it alike)."""

    name: str
    table: str
    kind: str
    wire: dict[str, Any]
    sql: str


P = Predicate
WORKLOAD: tuple[Predicate, ...] = (
    # ---- lineitem (6M rows at SF 1)
    P(
        "l_ship_1994",
        "lineitem",
        "range:date",
        fn("between", col("l_shipdate"), date("1994-01-01"), date("1994-12-31")),
        "l_shipdate BETWEEN DATE '1994-01-01' AND DATE '1994-12-31'",
    ),
    P(
        "l_ship_early",
        "lineitem",
        "range:date",
        fn("<", col("l_shipdate"), date("1992-03-01")),
        "l_shipdate < DATE '1992-03-01'",
    ),
    P(
        "l_ship_tail",
        "lineitem",
        "range:date",
        fn(">", col("l_shipdate"), date("1998-11-01")),
        "l_shipdate > DATE '1998-11-01'",
    ),
    P("l_qty_lt_10", "lineitem", "range:number", fn("<", col("l_quantity"), lit(10)), "l_quantity < 10"),
    P("l_qty_eq_25", "lineitem", "eq:low-ndv", fn("=", col("l_quantity"), lit(25)), "l_quantity = 25"),
    P("l_disc_eq", "lineitem", "eq:low-ndv", fn("=", col("l_discount"), dec(0.05)), "l_discount = 0.05"),
    P(
        "l_q6",
        "lineitem",
        "conjunction",
        and_(fn("between", col("l_discount"), dec(0.05), dec(0.07)), fn("<", col("l_quantity"), lit(24))),
        "l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
    ),
    P(
        "l_price_gt",
        "lineitem",
        "range:number",
        fn(">", col("l_extendedprice"), lit(100000)),
        "l_extendedprice > 100000",
    ),
    P("l_flag_r", "lineitem", "eq:low-ndv", fn("=", col("l_returnflag"), lit("R")), "l_returnflag = 'R'"),
    P(
        "l_flag_r_status_f",
        "lineitem",
        "correlated",
        and_(fn("=", col("l_returnflag"), lit("R")), fn("=", col("l_linestatus"), lit("F"))),
        "l_returnflag = 'R' AND l_linestatus = 'F'",
    ),
    P(
        "l_flag_n_status_f",
        "lineitem",
        "correlated",
        and_(fn("=", col("l_returnflag"), lit("N")), fn("=", col("l_linestatus"), lit("F"))),
        "l_returnflag = 'N' AND l_linestatus = 'F'",
    ),
    P("l_mode_in", "lineitem", "in", in_("l_shipmode", "MAIL", "SHIP"), "l_shipmode IN ('MAIL', 'SHIP')"),
    P(
        "l_instruct_eq",
        "lineitem",
        "eq:low-ndv",
        fn("=", col("l_shipinstruct"), lit("DELIVER IN PERSON")),
        "l_shipinstruct = 'DELIVER IN PERSON'",
    ),
    P(
        "l_ship_receipt_1997",
        "lineitem",
        "correlated",
        and_(fn(">", col("l_shipdate"), date("1997-01-01")), fn(">", col("l_receiptdate"), date("1997-01-01"))),
        "l_shipdate > DATE '1997-01-01' AND l_receiptdate > DATE '1997-01-01'",
    ),
    P(
        "l_ship_commit_1993",
        "lineitem",
        "correlated",
        and_(fn("<", col("l_shipdate"), date("1993-01-01")), fn("<", col("l_commitdate"), date("1993-01-01"))),
        "l_shipdate < DATE '1993-01-01' AND l_commitdate < DATE '1993-01-01'",
    ),
    P(
        "l_late",
        "lineitem",
        "column-compare",
        fn("<", col("l_commitdate"), col("l_receiptdate")),
        "l_commitdate < l_receiptdate",
    ),
    P(
        "l_q12_dates",
        "lineitem",
        "column-compare",
        and_(fn("<", col("l_commitdate"), col("l_receiptdate")), fn("<", col("l_shipdate"), col("l_commitdate"))),
        "l_commitdate < l_receiptdate AND l_shipdate < l_commitdate",
    ),
    P(
        "l_ship_n_after",
        "lineitem",
        "correlated",
        and_(fn(">=", col("l_shipdate"), date("1995-07-01")), fn("=", col("l_returnflag"), lit("N"))),
        "l_shipdate >= DATE '1995-07-01' AND l_returnflag = 'N'",
    ),
    P(
        "l_comment_infix",
        "lineitem",
        "like:infix",
        fn("like", col("l_comment"), lit("%carefully%")),
        "l_comment LIKE '%carefully%'",
    ),
    P(
        "l_comment_prefix",
        "lineitem",
        "like:prefix",
        fn("like", col("l_comment"), lit("furiously%")),
        "l_comment LIKE 'furiously%'",
    ),
    P("l_mode_suffix", "lineitem", "like:suffix", fn("like", col("l_shipmode"), lit("%AIR")), "l_shipmode LIKE '%AIR'"),
    P("l_orderkey_eq", "lineitem", "eq:high-ndv", fn("=", col("l_orderkey"), lit(1_234_567)), "l_orderkey = 1234567"),
    P("l_partkey_eq", "lineitem", "eq:high-ndv", fn("=", col("l_partkey"), lit(1000)), "l_partkey = 1000"),
    P(
        "l_partkey_qty",
        "lineitem",
        "conjunction:selective",
        and_(fn("=", col("l_partkey"), lit(1000)), fn("<", col("l_quantity"), lit(30))),
        "l_partkey = 1000 AND l_quantity < 30",
    ),
    P("l_suppkey_lt", "lineitem", "range:number", fn("<", col("l_suppkey"), lit(100)), "l_suppkey < 100"),
    P("l_linenumber_eq_7", "lineitem", "eq:low-ndv", fn("=", col("l_linenumber"), lit(7)), "l_linenumber = 7"),
    P("l_comment_null", "lineitem", "is_null", fn("is_null", col("l_comment")), "l_comment IS NULL"),
    # ---- orders (1.5M rows)
    P(
        "o_date_q1_1995",
        "orders",
        "range:date",
        and_(fn(">=", col("o_orderdate"), date("1995-01-01")), fn("<", col("o_orderdate"), date("1995-04-01"))),
        "o_orderdate >= DATE '1995-01-01' AND o_orderdate < DATE '1995-04-01'",
    ),
    P(
        "o_date_early_status_f",
        "orders",
        "correlated",
        and_(fn("<", col("o_orderdate"), date("1993-01-01")), fn("=", col("o_orderstatus"), lit("F"))),
        "o_orderdate < DATE '1993-01-01' AND o_orderstatus = 'F'",
    ),
    P(
        "o_date_late_status_o",
        "orders",
        "correlated",
        and_(fn(">=", col("o_orderdate"), date("1996-01-01")), fn("=", col("o_orderstatus"), lit("O"))),
        "o_orderdate >= DATE '1996-01-01' AND o_orderstatus = 'O'",
    ),
    P(
        "o_date_mid_status_p",
        "orders",
        "correlated",
        and_(
            fn("between", col("o_orderdate"), date("1995-03-01"), date("1995-07-31")),
            fn("=", col("o_orderstatus"), lit("P")),
        ),
        "o_orderdate BETWEEN DATE '1995-03-01' AND DATE '1995-07-31' AND o_orderstatus = 'P'",
    ),
    P("o_status_p", "orders", "eq:low-ndv", fn("=", col("o_orderstatus"), lit("P")), "o_orderstatus = 'P'"),
    P("o_price_gt", "orders", "range:number", fn(">", col("o_totalprice"), lit(300000)), "o_totalprice > 300000"),
    P(
        "o_priority_in",
        "orders",
        "in",
        in_("o_orderpriority", "1-URGENT", "2-HIGH"),
        "o_orderpriority IN ('1-URGENT', '2-HIGH')",
    ),
    P(
        "o_clerk_eq",
        "orders",
        "eq:mid-ndv",
        fn("=", col("o_clerk"), lit("Clerk#000000123")),
        "o_clerk = 'Clerk#000000123'",
    ),
    P(
        "o_comment_q13",
        "orders",
        "like:infix",
        fn("like", col("o_comment"), lit("%special%requests%")),
        "o_comment LIKE '%special%requests%'",
    ),
    P("o_custkey_eq", "orders", "eq:high-ndv", fn("=", col("o_custkey"), lit(1000)), "o_custkey = 1000"),
    P("o_shippriority_eq", "orders", "eq:low-ndv", fn("=", col("o_shippriority"), lit(0)), "o_shippriority = 0"),
    # ---- part (200k rows)
    P("p_size_eq", "part", "eq:low-ndv", fn("=", col("p_size"), lit(15)), "p_size = 15"),
    P("p_size_range", "part", "range:number", fn("between", col("p_size"), lit(1), lit(10)), "p_size BETWEEN 1 AND 10"),
    P(
        "p_size_in_q16",
        "part",
        "in",
        in_("p_size", 49, 14, 23, 45, 19, 3, 36, 9),
        "p_size IN (49, 14, 23, 45, 19, 3, 36, 9)",
    ),
    P(
        "p_brand_container",
        "part",
        "conjunction",
        and_(fn("=", col("p_brand"), lit("Brand#23")), fn("=", col("p_container"), lit("MED BOX"))),
        "p_brand = 'Brand#23' AND p_container = 'MED BOX'",
    ),
    P("p_type_suffix", "part", "like:suffix", fn("like", col("p_type"), lit("%BRASS")), "p_type LIKE '%BRASS'"),
    P("p_type_prefix", "part", "like:prefix", fn("like", col("p_type"), lit("PROMO%")), "p_type LIKE 'PROMO%'"),
    P("p_name_infix", "part", "like:infix", fn("like", col("p_name"), lit("%green%")), "p_name LIKE '%green%'"),
    P("p_name_prefix", "part", "like:prefix", fn("like", col("p_name"), lit("forest%")), "p_name LIKE 'forest%'"),
    P("p_price_lt", "part", "range:number", fn("<", col("p_retailprice"), lit(1000)), "p_retailprice < 1000"),
    P(
        "p_mfgr_brand",
        "part",
        "correlated",
        and_(fn("=", col("p_mfgr"), lit("Manufacturer#1")), fn("=", col("p_brand"), lit("Brand#12"))),
        "p_mfgr = 'Manufacturer#1' AND p_brand = 'Brand#12'",
    ),
    P(
        "p_q19_small",
        "part",
        "conjunction",
        and_(
            in_("p_container", "SM CASE", "SM BOX", "SM PACK", "SM PKG"), fn("between", col("p_size"), lit(1), lit(5))
        ),
        "p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') AND p_size BETWEEN 1 AND 5",
    ),
    # ---- customer (150k rows)
    P(
        "c_segment_eq",
        "customer",
        "eq:low-ndv",
        fn("=", col("c_mktsegment"), lit("BUILDING")),
        "c_mktsegment = 'BUILDING'",
    ),
    P("c_acctbal_pos", "customer", "range:number", fn(">", col("c_acctbal"), lit(0)), "c_acctbal > 0"),
    P("c_acctbal_high", "customer", "range:number", fn(">", col("c_acctbal"), lit(9000)), "c_acctbal > 9000"),
    P("c_nation_in", "customer", "in", in_("c_nationkey", 1, 2, 3), "c_nationkey IN (1, 2, 3)"),
    P("c_phone_prefix", "customer", "like:prefix", fn("like", col("c_phone"), lit("13-%")), "c_phone LIKE '13-%'"),
    P(
        "c_phone_nation",
        "customer",
        "correlated",
        and_(fn("like", col("c_phone"), lit("13-%")), fn("=", col("c_nationkey"), lit(3))),
        "c_phone LIKE '13-%' AND c_nationkey = 3",
    ),
    P("c_name_infix", "customer", "like:infix", fn("like", col("c_name"), lit("%00001%")), "c_name LIKE '%00001%'"),
    P("c_custkey_eq", "customer", "eq:high-ndv", fn("=", col("c_custkey"), lit(4242)), "c_custkey = 4242"),
    P("c_address_null", "customer", "is_null", fn("is_null", col("c_address")), "c_address IS NULL"),
)
del P


# ------------------------------------------------------------------ data and Spark


def ensure_data(scale: float, root: Path = DATA) -> Path:
    """TPC-H at ``scale`` under ``root/tpch-sf<scale>/<table>/``, generated on first use (atomically)."""
    label = f"{scale:g}"
    target = root / f"tpch-sf{label}"
    if all(any((target / t).glob("*.parquet")) for t in TABLES):
        return target
    root.mkdir(parents=True, exist_ok=True)
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    tool = shutil.which("tpchgen-cli")
    if tool is None:
        raise SystemExit("tpchgen-cli is not installed (pip install tpchgen-cli)")
    staging = Path(tempfile.mkdtemp(prefix=f".tpch-sf{label}-", dir=root))
    try:
        subprocess.run(
            [tool, "parquet", "-s", label, "--tables", ",".join(TABLES), "--parts", "1", "--output-dir", str(staging)],
            check=True,
        )
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return target


def make_spark(master: str, warehouse: Path) -> SparkSession:
    """A session sized for a shared 2-core machine; the CBO settings are set later, for Spark's part only."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName("estimation-bench")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# ------------------------------------------------------------------ ours


@dataclass
class Ours:
    catalog: Catalog
    samples: dict[str, Sample]
    arrow: dict[str, pa.Table]
    sources: tuple[Any, ...]
    seconds: dict[str, float]
    row_counts: dict[str, int]
    stages: dict[str, dict[str, float]]


def analyze_ours(spark: SparkSession, paths: dict[str, Path], sample_rows: int) -> Ours:
    """Our analyze job on every table (timed one by one), and the catalog and samples it yields."""
    tables: dict[str, Any] = {}
    samples: dict[str, Sample] = {}
    arrow: dict[str, pa.Table] = {}
    seconds: dict[str, float] = {}
    stages: dict[str, dict[str, float]] = {}
    for table, path in paths.items():
        request = AnalyzeRequest(name=table, path=str(path), format="parquet", sample_rows=sample_rows)
        marks: list[tuple[str, float]] = []

        def mark(stage: str, _rows: int, _percent: float, marks: list[tuple[str, float]] = marks) -> None:
            marks.append((stage, time.perf_counter()))

        start = time.perf_counter()
        result = run_analyze(spark, request, progress=mark)
        seconds[table] = time.perf_counter() - start
        marks.append(("end", start + seconds[table]))
        stages[table] = {stage: round(t2 - t1, 2) for (stage, t1), (_, t2) in zip(marks, marks[1:], strict=False)}
        stats = result.stats
        tables[table] = {
            "columns": stats["columns"],
            "row_count": stats["row_count"],
            "column_stats": stats["column_stats"],
        }
        samples[table] = sample_from_arrow(table, float(stats["row_count"]), result.sample)
        arrow[table] = result.sample
    sources = sample_sources(samples)
    assert sources is not None
    catalog = catalog_from_wire({"tables": tables})
    row_counts = {t: int(tables[t]["row_count"]) for t in tables}
    return Ours(catalog, samples, arrow, sources, seconds, row_counts, stages)


def bind(pred: Predicate, catalog: Catalog) -> tuple[Any, dict[int, Any]]:
    plan = plan_from_wire(
        {"op": "filter", "predicate": pred.wire, "input": {"op": "scan", "table": pred.table}}, catalog
    )
    return plan.predicate, column_infos(plan, catalog)


def estimate_ours(pred: Predicate, ours: Ours) -> SelectivityEstimate:
    """The estimate of the whole predicate, as the optimizer's estimator chain gives it."""
    predicate, infos = bind(pred, ours.catalog)
    return Estimator(infos, ours.sources).estimate(predicate)


def sample_matches(pred: Predicate, ours: Ours) -> int | None:
    """Matching sample rows by our numpy evaluator alone (no fallback); None if it declines the predicate."""
    predicate, infos = bind(pred, ours.catalog)
    found = SampleSource(ours.samples).estimate(predicate, infos)
    if found is None or found.sample_size is None:
        return None
    return round(found.selectivity * found.sample_size)


# ------------------------------------------------------------------ Spark CBO


def spark_cbo_setup(spark: SparkSession, paths: dict[str, Path]) -> dict[str, float]:
    """Register each table, enable CBO and histograms, and time ``ANALYZE ... FOR ALL COLUMNS`` per table."""
    for key in ("spark.sql.cbo.enabled", "spark.sql.statistics.histogram.enabled", "spark.sql.cbo.planStats.enabled"):
        spark.conf.set(key, "true")
    seconds: dict[str, float] = {}
    for table, path in paths.items():
        name = SPARK_PREFIX + table
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE TABLE {name} USING parquet LOCATION '{path.as_posix()}'")
        start = time.perf_counter()
        spark.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")
        seconds[table] = time.perf_counter() - start
    return seconds


def spark_estimate(spark: SparkSession, pred: Predicate) -> int | None:
    """Spark's estimated row count of the filter (the optimized plan's statistics); None if it has none."""
    df = spark.sql(f"SELECT * FROM {SPARK_PREFIX}{pred.table} WHERE {pred.sql}")
    rows = df._jdf.queryExecution().optimizedPlan().stats().rowCount()
    if not rows.isDefined():
        return None
    value = rows.get()  # a Scala BigInt; py4j may hand it over as a Python int already
    return int(value) if isinstance(value, int) else int(value.toString())


def spark_cbo_teardown(spark: SparkSession, paths: dict[str, Path]) -> None:
    for table in paths:
        spark.sql(f"DROP TABLE IF EXISTS {SPARK_PREFIX}{table}")


# ------------------------------------------------------------------ truth


def truth_duckdb(paths: dict[str, Path], workload: tuple[Predicate, ...]) -> dict[str, int]:
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads TO 2")
    out = {}
    for pred in workload:
        files = (paths[pred.table] / "*.parquet").as_posix()
        (count,) = con.execute(f"SELECT count(*) FROM read_parquet('{files}') WHERE {pred.sql}").fetchone()
        out[pred.name] = int(count)
    con.close()
    return out


def truth_spark(spark: SparkSession, paths: dict[str, Path], workload: tuple[Predicate, ...]) -> dict[str, int]:
    frames = {t: spark.read.parquet(p.as_posix()) for t, p in paths.items()}
    return {pred.name: frames[pred.table].where(pred.sql).count() for pred in workload}


def sample_counts_duckdb(arrow: dict[str, pa.Table], workload: tuple[Predicate, ...]) -> dict[str, int]:
    """The SQL text counted on our own sample: must equal our evaluator's count of the wire predicate."""
    import duckdb

    con = duckdb.connect()
    for table, data in arrow.items():
        con.register(f"sample_{table}", data)
    out = {}
    for pred in workload:
        (count,) = con.execute(f"SELECT count(*) FROM sample_{pred.table} WHERE {pred.sql}").fetchone()
        out[pred.name] = int(count)
    con.close()
    return out


# ------------------------------------------------------------------ figures


def q_error(estimate: float | None, true: float) -> float:
    """max(est/true, true/est), both floored at one row; no estimate at all is an infinite error."""
    if estimate is None or not math.isfinite(estimate):
        return math.inf
    est, actual = max(1.0, estimate), max(1.0, true)
    return max(est / actual, actual / est)


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile: the smallest value with at least ``p`` of the values at or below it."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p * len(ordered)))
    return ordered[rank - 1]


def summarize(errors: list[float]) -> dict[str, float]:
    return {
        "median": round(percentile(errors, 0.5), 4),
        "p95": round(percentile(errors, 0.95), 4),
        "max": round(max(errors), 4),
    }


def run_benchmark(
    spark: SparkSession,
    paths: dict[str, Path],
    workload: tuple[Predicate, ...] = WORKLOAD,
    *,
    spark_cbo: bool = True,
    truth: str = "duckdb",
    sample_rows: int = 100_000,
) -> dict[str, Any]:
    """Everything measured in one run; ``paths`` maps each table the workload reads to its Parquet directory."""
    paths = {t: p for t, p in paths.items() if any(pred.table == t for pred in workload)}
    spark.read.parquet(next(iter(paths.values())).as_posix()).count()  # warm the JVM for both timed parts

    log("our analyze job ...")
    ours = analyze_ours(spark, paths, sample_rows)
    log(f"  {sum(ours.seconds.values()):.1f} s")
    cbo_seconds: dict[str, float] = {}
    cbo_rows: dict[str, int | None] = {}
    if spark_cbo:
        log("Spark ANALYZE TABLE ... FOR ALL COLUMNS ...")
        cbo_seconds = spark_cbo_setup(spark, paths)
        log(f"  {sum(cbo_seconds.values()):.1f} s")
        try:
            cbo_rows = {pred.name: spark_estimate(spark, pred) for pred in workload}
        finally:
            spark_cbo_teardown(spark, paths)

    log(f"exact counts ({truth}) ...")
    start = time.perf_counter()
    true_rows = truth_duckdb(paths, workload) if truth == "duckdb" else truth_spark(spark, paths, workload)
    truth_seconds = time.perf_counter() - start
    on_sample = sample_counts_duckdb(ours.arrow, workload)

    rows = []
    for pred in workload:
        table_rows = ours.row_counts[pred.table]
        est = estimate_ours(pred, ours)
        ours_rows = est.selectivity * table_rows
        matches = sample_matches(pred, ours)
        entry: dict[str, Any] = {
            "name": pred.name,
            "table": pred.table,
            "kind": pred.kind,
            "sql": pred.sql,
            "true_rows": true_rows[pred.name],
            "true_selectivity": true_rows[pred.name] / table_rows if table_rows else 0.0,
            "ours": {
                "rows": round(ours_rows, 1),
                "selectivity": est.selectivity,
                "interval": [est.low, est.high],
                "source": est.source,
                "sample_size": est.sample_size,
                "q_error": q_error(ours_rows, true_rows[pred.name]),
            },
            "sample_check": {"ours": matches, "duckdb": on_sample[pred.name], "agree": matches == on_sample[pred.name]},
        }
        if spark_cbo:
            spark_rows = cbo_rows[pred.name]
            entry["spark"] = {"rows": spark_rows, "q_error": q_error(spark_rows, true_rows[pred.name])}
        rows.append(entry)

    ours_errors = [r["ours"]["q_error"] for r in rows]
    summary: dict[str, Any] = {"ours": summarize(ours_errors)}
    analyze = {
        "ours_s": round(sum(ours.seconds.values()), 2),
        "ours_per_table_s": {t: round(s, 2) for t, s in ours.seconds.items()},
        "ours_stages_s": ours.stages,
    }
    targets: dict[str, Any] = {"ours_p95_at_most": TARGET_P95, "ours_p95_met": summary["ours"]["p95"] <= TARGET_P95}
    if spark_cbo:
        summary["spark"] = summarize([r["spark"]["q_error"] for r in rows])
        analyze["spark_s"] = round(sum(cbo_seconds.values()), 2)
        analyze["spark_per_table_s"] = {t: round(s, 2) for t, s in cbo_seconds.items()}
        targets["ours_p95_below_spark"] = summary["ours"]["p95"] < summary["spark"]["p95"]
        targets["ours_analyze_faster"] = analyze["ours_s"] < analyze["spark_s"]
        targets["all_met"] = all(v for k, v in targets.items() if isinstance(v, bool))
    sources: dict[str, int] = {}
    for r in rows:
        sources[r["ours"]["source"]] = sources.get(r["ours"]["source"], 0) + 1
    return {
        "predicates": rows,
        "summary": summary,
        "analyze": analyze,
        "targets": targets,
        "sources": sources,
        "sample_check_failures": [r["name"] for r in rows if not r["sample_check"]["agree"]],
        "truth": {"engine": truth, "seconds": round(truth_seconds, 2)},
        "sample_rows_target": sample_rows,
        "sample_rows": {t: ours.samples[t].size for t in paths},
        "table_rows": ours.row_counts,
        "spark_version": spark.version,
    }


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _fmt_rows(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:.2f}"


def print_report(report: dict[str, Any]) -> None:
    spark_cbo = "spark" in report["summary"]
    header = f"{'predicate':24} {'true rows':>11} {'ours':>11} {'q ours':>8} {'source':10}"
    if spark_cbo:
        header += f" {'spark cbo':>11} {'q spark':>9}"
    print(header)
    print("-" * len(header))
    for r in report["predicates"]:
        line = (
            f"{r['name']:24} {r['true_rows']:>11,} {_fmt_rows(r['ours']['rows']):>11} "
            f"{r['ours']['q_error']:>8.3f} {r['ours']['source']:10}"
        )
        if spark_cbo:
            line += f" {_fmt_rows(r['spark']['rows']):>11} {r['spark']['q_error']:>9.3f}"
        if not r["sample_check"]["agree"]:
            line += f"  [sample check: ours {r['sample_check']['ours']} vs duckdb {r['sample_check']['duckdb']}]"
        print(line)
    print()
    s = report["summary"]
    n = len(report["predicates"])
    print(f"q-error over {n} predicates      median     p95      max")
    print(f"  ours (sample estimator)   {s['ours']['median']:>8.3f} {s['ours']['p95']:>7.3f} {s['ours']['max']:>8.3f}")
    if spark_cbo:
        print(
            f"  Spark CBO                 {s['spark']['median']:>8.3f} {s['spark']['p95']:>7.3f} "
            f"{s['spark']['max']:>8.3f}"
        )
    a = report["analyze"]
    print(f"sources of our estimates: {report['sources']}")
    line = f"analyze time: ours {a['ours_s']:.1f} s {a['ours_per_table_s']}"
    print(line)
    for table, stages in a["ours_stages_s"].items():
        print(f"    {table:9} stages: {stages}")
    if spark_cbo:
        print(f"              Spark ANALYZE ... FOR ALL COLUMNS {a['spark_s']:.1f} s {a['spark_per_table_s']}")
    t = report["targets"]
    print(f"target: our p95 <= {TARGET_P95}: {'met' if t['ours_p95_met'] else 'NOT met'}")
    if spark_cbo:
        print(f"target: our p95 below Spark's: {'met' if t['ours_p95_below_spark'] else 'NOT met'}")
        faster = "met" if t["ours_analyze_faster"] else "NOT met"
        print(f"target: our analyze job faster than Spark's ANALYZE: {faster}")
    if report["sample_check_failures"]:
        print(f"sample check (wire vs SQL on our sample) FAILED for: {', '.join(report['sample_check_failures'])}")
    else:
        print("sample check: our evaluator and DuckDB agree on every predicate over the sample")


def provenance() -> dict[str, Any]:
    """What the figures were measured against: the commit, and hashes of the files the estimates come from
    (the analyze job and the estimator change under work in progress, so the commit alone may not say)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        head = ""
    files = ("service/analyze.py", "service/statistics.py", "costmodel/sample.py", "costmodel/estimate.py")
    hashes = {f: hashlib.sha256((ROOT / f).read_bytes()).hexdigest()[:12] for f in files if (ROOT / f).exists()}
    return {"commit": head or None, "sha256": hashes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--truth",
        choices=("duckdb", "spark"),
        default="duckdb",
        help="exact counts from DuckDB over the Parquet files (fast) or a full Spark count",
    )
    parser.add_argument("--sample-rows", type=int, default=100_000)
    parser.add_argument("--no-spark-cbo", action="store_true", help="skip Spark's ANALYZE and CBO estimates")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()

    load = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    data = ensure_data(args.scale)
    paths = {t: data / t for t in TABLES}
    spark = make_spark(args.master, DATA / "spark-warehouse")
    report = run_benchmark(
        spark, paths, spark_cbo=not args.no_spark_cbo, truth=args.truth, sample_rows=args.sample_rows
    )
    report = {
        "benchmark": "estimation",
        "scale": args.scale,
        "master": args.master,
        "date": dt.date.today().isoformat(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_avg_at_start": load},
        "provenance": provenance(),
        **report,
    }
    print_report(report)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(finite(report), indent=2, allow_nan=False) + "\n")
    print(f"wrote {args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output}")


def finite(value: Any) -> Any:
    """The report as strict JSON: an infinite q-error (no estimate) is written as null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


if __name__ == "__main__":
    main()
