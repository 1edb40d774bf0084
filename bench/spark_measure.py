"""Timing one configuration of one query on Spark for bench/spark_e2e.py: settings, cancellation, rows kept."""

from __future__ import annotations

import datetime as dt
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from service.spark_runner import session_settings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from service.spark_runner import SparkRun

_RULES = "org.apache.spark.sql.catalyst.optimizer."
#: Catalyst's logical predicate pushdown (all five classes exist in Spark 4.x's catalyst jar).
EXCLUDED_RULES = ",".join(
    _RULES + r
    for r in (
        "PushDownPredicates",
        "PushPredicateThroughJoin",
        "PushPredicateThroughNonJoin",
        "PushExtraPredicateThroughJoin",
        "InferFiltersFromConstraints",
    )
)
#: results with at most this many rows are compared row by row, larger ones by count
SMALL_RESULT = 10_000


def set_pushdown(spark: SparkSession, catalyst_pushes: bool) -> None:
    if catalyst_pushes:
        spark.conf.unset("spark.sql.optimizer.excludedRules")
    else:
        spark.conf.set("spark.sql.optimizer.excludedRules", EXCLUDED_RULES)


class Timeout(Exception):
    """A run was cancelled after the time limit."""


def run_action(spark: SparkSession, action: Callable[[], Any], timeout: float) -> Any:
    """``action()`` in its own job group, cancelled after ``timeout`` seconds."""
    sc = spark.sparkContext
    group = f"spark-e2e-{uuid.uuid4().hex[:8]}"
    sc.setJobGroup(group, "spark_e2e", interruptOnCancel=True)
    fired = threading.Event()

    def cancel() -> None:
        fired.set()
        sc.cancelJobGroup(group)

    timer = threading.Timer(timeout, cancel)
    timer.start()
    try:
        return action()
    except Exception:
        if fired.is_set():
            raise Timeout from None
        raise
    finally:
        timer.cancel()
        sc.setLocalProperty("spark.jobGroup.id", None)


def timed_noop(spark: SparkSession, sql: str, timeout: float) -> float:
    """Seconds to plan and execute ``sql`` in full (every output row produced, written to the noop sink)."""
    start = time.perf_counter()
    run_action(spark, lambda: spark.sql(sql).write.format("noop").mode("overwrite").save(), timeout)
    return time.perf_counter() - start


def _norm(value: Any) -> Any:
    if isinstance(value, float | Decimal):
        return round(float(value), 2) + 0.0
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value


def multiset(rows: Iterable[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Rows sorted None-safely, numbers rounded to 2 places (sums may add up in another order)."""
    normed = [tuple(_norm(v) for v in row) for row in rows]
    return sorted(normed, key=lambda r: tuple((v is not None, type(v).__name__, v if v is not None else 0) for v in r))


class Measured:
    """One configuration of one query: its SQL, warm-up rows, timed runs and plan summary.

    ``runner``: the configuration is the Spark runner (``service.spark_runner.run_sql``): each run builds the
    runner's ``SparkRun`` and writes it with the runner's own ``write``, under Spark's defaults.
    """

    def __init__(
        self, sql: str, catalyst_pushes: bool, runner: Callable[[SparkSession], SparkRun] | None = None
    ) -> None:
        self.sql, self.catalyst_pushes, self.runner = sql, catalyst_pushes, runner
        self.times: list[float] = []
        self.timeout = False
        self.error: str | None = None
        self.rows: list[tuple[Any, ...]] | None = None
        self.row_count: int | None = None
        self.plan: dict[str, Any] = {}
        self.plan_text = ""
        self.conf: dict[str, str] = {}

    def warm_up(self, spark: SparkSession, timeout: float, inspect: Callable[[Any], dict[str, Any]]) -> None:
        set_pushdown(spark, self.catalyst_pushes)
        try:
            run = self.runner(spark) if self.runner else None
            df: DataFrame = run.dataframe if run else spark.sql(self.sql)
            self.conf = dict(run.conf) if run else {}
            with session_settings(spark, self.conf):
                qe = df._jdf.queryExecution()
                self.plan_text = qe.executedPlan().toString()
                try:
                    self.plan = inspect(qe.executedPlan())
                except Exception as exc:  # the check is reported as failed; the query still runs
                    self.plan = {"error": str(exc).strip().splitlines()[0][:200]}
            rows = run_action(spark, run.collect if run else df.collect, timeout)
        except Timeout:
            self.timeout = True
            return
        except Exception as exc:  # a configuration that fails is reported, the others still run
            self.error = str(exc).strip().splitlines()[0][:200]
            return
        self.row_count = len(rows)
        if self.row_count <= SMALL_RESULT:
            self.rows = multiset(rows)

    def run(self, spark: SparkSession, timeout: float) -> None:
        if self.timeout or self.error:
            return
        set_pushdown(spark, self.catalyst_pushes)
        try:
            if self.runner is None:
                self.times.append(timed_noop(spark, self.sql, timeout))
            else:
                runner = self.runner
                start = time.perf_counter()
                run_action(spark, lambda: runner(spark).write(_noop), timeout)
                self.times.append(time.perf_counter() - start)
        except Timeout:
            self.timeout = True

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times and not self.timeout else None

    def shown(self, timeout: float) -> str:
        if self.error:
            return "error"
        if self.timeout:
            return f">{timeout:g}"
        return f"{self.median:.3f}" if self.median is not None else "-"

    def as_json(self) -> dict[str, Any]:
        return {
            "median_s": None if self.median is None else round(self.median, 4),
            "runs_s": [round(t, 4) for t in self.times],
            "timeout": self.timeout,
            "error": self.error,
            "row_count": self.row_count,
            "plan_check": self.plan,
        }


def _noop(writer: Any) -> None:
    writer.format("noop").mode("overwrite").save()


def compare_results(m: dict[str, Measured]) -> tuple[bool | None, str]:
    """Whether every configuration returned the same rows (None when some did not finish)."""
    done = {k: v for k, v in m.items() if v.row_count is not None}
    counts = {k: v.row_count for k, v in done.items()}
    if len(done) < 2:
        return None, f"rows {counts}"
    if len(set(counts.values())) > 1:
        return False, f"row counts differ: {counts}"
    rowsets = [v.rows for v in done.values() if v.rows is not None]
    if len(rowsets) == len(done) and any(r != rowsets[0] for r in rowsets):
        return False, f"same count {next(iter(counts.values()))}, different rows"
    missing = sorted(set(m) - set(done))
    note = f" (not compared: {','.join(missing)})" if missing else ""
    return (True if not missing else None), f"{next(iter(counts.values()))} rows agree{note}"
