"""The analyze job: table statistics, container statistics and a uniform row sample, computed with PySpark.

Few passes over the data, because the job must beat Spark's own ``ANALYZE TABLE``:
one aggregate computes the row count and, per column, nulls, min/max, approximate
NDV and the equi-depth histogram; one shuffle finds every column's most common
values; Parquet container statistics come from the file footers (no data read,
service/analyze_containers.py);
one Bernoulli pass draws the sample. Results are plain JSON-able dicts in the
wire catalog's shape plus the sample as an Arrow table; storing them is
``service.statistics``' job, run by ``analyze_and_store``.

PySpark is imported inside the functions so that the API starts without a JVM.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from service.analyze_containers import column, container_statistics, json_value
from service.analyzed_tables import source_fingerprint
from service.idle_spark import IdleSpark

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession

    from service.statistics import StatisticsStore

logger = logging.getLogger(__name__)

FORMATS = ("parquet", "csv", "orc", "json")
#: Reader options applied unless the caller overrides them: CSV files are read with a header and typed columns.
DEFAULT_READER_OPTIONS: dict[str, dict[str, str]] = {"csv": {"header": "true", "inferSchema": "true"}}
#: A column whose NDV is this close to its non-null count is a key: every value is about equally rare, so an
#: MCV list says nothing and would cost the largest part of the shuffle.
UNIQUE_NDV_RATIO = 0.95
#: Types with an order a histogram can interpolate over (Spark simple-string prefixes).
_ORDERED = (
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "decimal",
    "date",
    "timestamp",
    "timestamp_ntz",
)
_SCALAR = (*_ORDERED, "string", "boolean", "varchar", "char")

#: (stage, share of the job's work) in the order the job runs them; percent is the share done so far.
STAGES: tuple[tuple[str, float], ...] = (
    ("read", 5),
    ("statistics", 40),
    ("sample", 20),
    ("mcv", 20),
    ("containers", 10),
    ("write", 4),
    ("commit", 1),
)

#: Reports (stage, rows seen so far, percent done). Called from the job's thread.
ProgressFn = Callable[[str, int, float], None]
#: Called with a stage's name before it starts; tests use it to pause or kill a job at a chosen point.
StageHook = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class AnalyzeRequest:
    """What to analyze: a ``path`` in a ``format``, or a ``table`` in the Spark catalog (exactly one)."""

    name: str
    path: str | None = None
    format: str = "parquet"
    table: str | None = None
    sample_rows: int = 100_000
    histogram_buckets: int = 100
    mcv_count: int = 20
    seed: int = 42
    ndv_rsd: float = 0.05  # Spark's own default: a tighter bound costs a slower aggregate
    reader_options: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.path is None) == (self.table is None):
            raise ValueError("exactly one of path and table is required")
        if self.path is not None and self.format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {self.format!r}")
        if self.path is not None and "://" not in self.path and not self.path.startswith("file:"):
            # stored as given, a relative path would mean another directory to every later reader: the
            # service's fingerprint check, the re-analyze a change warning advises
            object.__setattr__(self, "path", os.path.realpath(self.path))
        if self.sample_rows < 0 or self.histogram_buckets < 1 or self.mcv_count < 0:
            raise ValueError("sample_rows and mcv_count must be >= 0, histogram_buckets >= 1")

    def describe(self) -> dict[str, Any]:
        if self.table is not None:
            return {"table": self.table}
        return {"path": self.path, "format": self.format}


@dataclass(frozen=True, slots=True)
class AnalyzeResult:
    """The job's output: ``stats`` is JSON-able (wire catalog shape plus metadata); ``sample`` an Arrow table."""

    stats: dict[str, Any]
    sample: pa.Table


def spark_session(master: str, app_name: str = "pushdown-analyze") -> SparkSession:
    """A session for ``master``: ``local[*]``, any cluster master URL, or Spark Connect (``sc://host:port``)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master.startswith("sc://"):
        return builder.remote(master).getOrCreate()
    spark = (
        builder.master(master)
        .config("spark.ui.showConsoleProgress", "false")
        # the job's aggregates are small: Spark's default of 200 shuffle partitions only adds task overhead
        .config("spark.sql.shuffle.partitions", "8")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")  # the job reports its own progress; failures still raise
    return spark


class _Progress:
    """Turns stage boundaries into (stage, rows, percent) reports and runs the stage hook."""

    def __init__(self, report: ProgressFn | None, hook: StageHook | None) -> None:
        self._report = report
        self._hook = hook
        self._total = sum(weight for _, weight in STAGES)
        self.rows = 0

    def start(self, stage: str) -> None:
        done = 0.0
        for name, weight in STAGES:
            if name == stage:
                break
            done += weight
        if self._hook is not None:
            self._hook(stage)
        if self._report is not None:
            self._report(stage, self.rows, round(100 * done / self._total, 1))

    def finish(self) -> None:
        if self._report is not None:
            self._report("done", self.rows, 100.0)


# ---------------------------------------------------------------- the job


def _kind(spark_type: str) -> str:
    base = spark_type.split("(")[0]
    if base in _ORDERED:
        return "ordered"
    if base in _SCALAR:
        return "scalar"
    return "other"


def read_source(spark: SparkSession, request: AnalyzeRequest) -> DataFrame:
    """The table as a DataFrame, with the format's default reader options under the caller's."""
    if request.table is not None:
        # `csv.`/etc/passwd`` names a file, not a table: Spark must not read files by table name.
        spark.conf.set("spark.sql.runSQLOnFiles", "false")
        return spark.table(request.table)
    options = {**DEFAULT_READER_OPTIONS.get(request.format, {}), **request.reader_options}
    return spark.read.format(request.format).options(**options).load(request.path)


def run_analyze(
    spark: SparkSession,
    request: AnalyzeRequest,
    progress: ProgressFn | None = None,
    hook: StageHook | None = None,
) -> AnalyzeResult:
    """Compute everything ``AnalyzeResult`` holds; the ``write`` and ``commit`` stages are the store's."""
    return _run(spark, request, _Progress(progress, hook))


def _run(spark: SparkSession, request: AnalyzeRequest, progress: _Progress) -> AnalyzeResult:
    started = time.monotonic()
    # taken before Spark reads: a file rewritten during the job makes the next check see a change
    fingerprint = source_fingerprint(request.describe())
    progress.start("read")
    df = read_source(spark, request)
    spark_types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    kinds = {name: _kind(typ) for name, typ in spark_types.items()}
    # the wire has one timestamp type; a timestamp without time zone is compared the same way
    columns = [{"name": n, "type": "timestamp" if t == "timestamp_ntz" else t} for n, t in spark_types.items()]

    progress.start("statistics")
    row_count, column_stats = _column_statistics(df, columns, kinds, request)
    progress.rows = row_count

    progress.start("sample")
    fraction = min(1.0, request.sample_rows / row_count) if row_count else 1.0
    scalar = [c["name"] for c in columns if kinds[c["name"]] != "other"]
    projected = df.select(*[column(n) for n in scalar])
    sampled = (
        projected if fraction >= 1.0 else projected.sample(withReplacement=False, fraction=fraction, seed=request.seed)
    )
    sample = sampled.toArrow()

    progress.start("mcv")
    for name, mcv in _most_common_values(df, columns, column_stats, row_count, sample, request).items():
        column_stats[name]["mcv"] = mcv

    progress.start("containers")
    files, containers = container_statistics(df, request, columns, kinds)

    stats = {
        "name": request.name,
        "source": request.describe(),
        "fingerprint": fingerprint,
        "columns": columns,
        "row_count": row_count,
        "column_stats": column_stats,
        "containers": containers,
        "files": files,
        "sample": {"rows": sample.num_rows, "fraction": fraction, "seed": request.seed, "target": request.sample_rows},
        "analyzed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "duration_s": round(time.monotonic() - started, 3),
        "spark_version": spark.version,
    }
    return AnalyzeResult(stats, sample)


def _column_statistics(
    df: DataFrame, columns: list[dict[str, str]], kinds: dict[str, str], request: AnalyzeRequest
) -> tuple[int, dict[str, dict[str, Any]]]:
    """One aggregate pass: row count, and per column non-null count, min, max, NDV and histogram."""
    from pyspark.sql import functions as F

    buckets = request.histogram_buckets
    percentages = [i / buckets for i in range(buckets + 1)]
    exprs: list[Column] = [F.count(F.lit(1)).alias("rows")]
    for i, col in enumerate(columns):
        name, kind = col["name"], kinds[col["name"]]
        exprs.append(F.count(column(name)).alias(f"nn{i}"))
        if kind == "other":
            continue
        exprs += [
            F.min(column(name)).alias(f"min{i}"),
            F.max(column(name)).alias(f"max{i}"),
            F.approx_count_distinct(column(name), request.ndv_rsd).alias(f"ndv{i}"),
        ]
        if kind == "ordered":
            exprs.append(F.percentile_approx(column(name), percentages, 10_000).alias(f"hist{i}"))
    row = df.agg(*exprs).collect()[0].asDict()
    rows = int(row["rows"])
    stats: dict[str, dict[str, Any]] = {}
    for i, col in enumerate(columns):
        non_null = int(row[f"nn{i}"])
        entry: dict[str, Any] = {"null_count": rows - non_null}
        if kinds[col["name"]] != "other":
            entry["ndv"] = min(int(row[f"ndv{i}"]), non_null)
            entry["min"] = json_value(row[f"min{i}"])
            entry["max"] = json_value(row[f"max{i}"])
            bounds = row.get(f"hist{i}")
            if bounds:
                values = [json_value(v) for v in bounds]
                if None not in values:
                    entry["histogram"] = values
        stats[col["name"]] = entry
    return rows, stats


def _most_common_values(
    df: DataFrame,
    columns: list[dict[str, str]],
    stats: dict[str, dict[str, Any]],
    row_count: int,
    sample: pa.Table,
    request: AnalyzeRequest,
) -> dict[str, list[dict[str, Any]]]:
    """The most common values and their frequencies, read off the sample: no pass over the table.

    A value common enough to matter appears in the sample many times (at 100,000 sampled rows, one holding
    0.1% of the table appears about 100 times, standard error ~10%); counting candidates exactly over the
    whole table made this stage take longer than Spark's whole ANALYZE on TPC-H lineitem (bench/estimation.py).
    When the sample is the whole table the frequencies are exact.
    """
    import pyarrow.compute as pc

    del df  # the table is not read again
    sampled = sample.num_rows
    candidates: list[tuple[str, Any]] = []
    for col in columns:
        name, entry = col["name"], stats[col["name"]]
        non_null = row_count - entry["null_count"]
        if "ndv" not in entry or non_null == 0 or entry["ndv"] >= UNIQUE_NDV_RATIO * non_null:
            continue
        if name not in sample.column_names or request.mcv_count == 0:
            continue
        counts = pc.value_counts(sample.column(name).drop_null()).to_pylist()
        counts.sort(key=lambda item: (-item["counts"], str(item["values"])))
        repeated = [item for item in counts if item["counts"] >= 2]  # seen once is not common
        candidates += [(name, (item["counts"], item["values"])) for item in repeated[: request.mcv_count]]
    out: dict[str, list[dict[str, Any]]] = {}
    for name, (count, value) in candidates:
        out.setdefault(name, []).append({"value": json_value(value), "freq": count / sampled if sampled else 0.0})
    return out


# ---------------------------------------------------------------- job + store


def analyze_and_store(
    spark: SparkSession,
    request: AnalyzeRequest,
    store: StatisticsStore,
    progress: ProgressFn | None = None,
    hook: StageHook | None = None,
) -> dict[str, Any]:
    """Run the job and keep its result as the table's new current version; returns the stored summary.

    The sample is written to a temporary file first and the version becomes current in one transaction
    after that, so a job that fails or is killed at any point leaves the previous version current.
    """
    tracker = _Progress(progress, hook)
    result = _run(spark, request, tracker)
    tracker.start("write")
    staged = store.stage_sample(request.name, result.sample)
    tracker.start("commit")
    version = store.commit(request.name, result.stats, staged)
    tracker.finish()
    return {
        "table": request.name,
        "version": version,
        "row_count": result.stats["row_count"],
        "sample_rows": result.sample.num_rows,
        "duration_s": result.stats["duration_s"],
    }


class Analyzer:
    """The analyze use case for the API and the command line: builds jobs over one store and Spark master.

    The Spark session is made on first use (``spark_factory``), so a service that never analyzes never
    starts a JVM; tests pass a factory that returns their shared session. With ``idle_stop_s`` the session
    is the analyzer's own: stopped when idle that long and at ``close``.
    """

    def __init__(
        self, store: StatisticsStore, spark_factory: Callable[[], SparkSession], idle_stop_s: float | None = None
    ) -> None:
        self.store = store
        self._spark_factory = spark_factory
        self.spark = None if idle_stop_s is None else IdleSpark(spark_factory, idle_stop_s)

    def run(
        self, request: AnalyzeRequest, progress: ProgressFn | None = None, hook: StageHook | None = None
    ) -> dict[str, Any]:
        if self.spark is None:
            return analyze_and_store(self._spark_factory(), request, self.store, progress, hook)
        with self.spark.session() as spark:
            return analyze_and_store(spark, request, self.store, progress, hook)

    def job(self, request: AnalyzeRequest) -> Callable[[ProgressFn], dict[str, Any]]:
        """The request as a ``service.jobs`` job body."""
        return lambda progress: self.run(request, progress)

    def close(self) -> None:
        if self.spark is not None:
            self.spark.close()
