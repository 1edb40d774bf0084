"""Seconds of one cost unit on this session's executors, and of moving a row through a Python worker.

The model prices in comparisons (a comparison = 1). ``calibrate`` times ``spark.range(N).filter(id % 7 = 3)
.count()``, which the model prices at 3 units a row (scan 1, arithmetic 1, comparison 1): its time per row over
3 is the seconds of one unit (``unit_s``). Times are *executor* seconds, the tasks' run time summed
(``pushdown_client.executor_time``), the same clock as a UDF's per-call time in the driver and in Spark's Python
metrics: a wall-clock figure would divide the operators' time, not the UDF's, by the cores the job used. Where
the status store cannot be read, wall seconds stand (``source`` says which).

The same count with a no-op Python UDF (pickled rows, as a registered UDF runs) as the filter, less the first,
is what moving one row through a Python worker costs (``python_row_s``). Each is a slope (``_per_row``). Measured
once per SparkContext (a few seconds; under heavy load on a shared machine more), remembered for the process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = logging.getLogger(__name__)
#: seconds ``action()`` takes by some clock
Clock = Callable[[Callable[[], Any]], float]


@dataclass(frozen=True)
class Calibration:
    """Seconds per cost unit (a comparison) on this session's executors, and per row through a Python worker."""

    unit_s: float
    unit_interval: tuple[float, float]
    python_row_s: float
    python_interval: tuple[float, float]
    source: str = "measured: spark.range filter count"
    #: what Spark's "time to execute Python code" of a query counts whatever its rows (per-task start of the
    #: function in the worker): subtracted before a run's time is divided by its calls (``python_udfs``)
    python_fixed_s: float = 0.0
    #: per-row constants of operator kinds, in units, measured on the session (``operator_k``): the engine's
    #: ``options.operator_costs``
    operator_costs: dict[str, float] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        """``options.calibration`` of a request."""
        wire: dict[str, Any] = {
            "unit_s": self.unit_s,
            "interval": list(self.unit_interval),
            "python_row_s": self.python_row_s,
            "source": self.source,
        }
        if self.operator_costs:
            wire["operator_costs"] = dict(self.operator_costs)
        return wire


_CALIBRATIONS: dict[str, Calibration] = {}
_CALIBRATION_LOCK = threading.Lock()
#: rows of the comparison and of the Python UDF calibration queries
CALIBRATION_ROWS = 4_000_000
PYTHON_CALIBRATION_ROWS = 40_000
#: rows of the operator calibration queries, and the build side of the join's
OPERATOR_ROWS = 2_000_000
BUILD_ROWS = 1000
#: units the model prices a row of an operator's calibration query at besides the operator: scan 1, arithmetic 1
PRICED_BESIDES = 2.0


def wall_seconds(action: Callable[[], Any]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _timed(action: Callable[[], Any], runs: int, clock: Clock) -> list[float]:
    return [clock(action) for _ in range(runs)]


def _per_row(action: Any, rows: int, runs: int, clock: Clock = wall_seconds) -> tuple[float, tuple[float, float]]:
    """Seconds per row of ``action(n)`` and a range for it: the slope between the fastest of ``runs`` runs at
    ``rows`` and at a quarter of it, which cancels what a Spark job costs whatever its size (scheduling, a task's
    start); the fastest run is the one least disturbed by other work on the machine. When noise leaves no slope
    (under a tenth of the whole run's time per row), the whole run's time per row, which includes the job's fixed
    cost, stands instead, with a quarter of it as the range's low end. Otherwise the range spans the slope of the
    median runs and the whole run's time per row."""
    small = sorted(_timed(lambda: action(rows // 4), runs, clock))
    big = sorted(_timed(lambda: action(rows), runs, clock))
    span = rows - rows // 4
    whole = big[0] / rows
    slope = (big[0] - small[0]) / span
    if slope < whole / 10:  # no slope to read: at most the whole run's time a row, at least a quarter of it
        return whole, (whole / 4, whole)
    median = (big[len(big) // 2] - small[len(small) // 2]) / span
    candidates = [slope, whole] + ([median] if median >= whole / 10 else [])
    return slope, (min(candidates), max(candidates))


def calibrate(
    spark: SparkSession, rows: int = CALIBRATION_ROWS, python_rows: int = PYTHON_CALIBRATION_ROWS
) -> Calibration:
    """The session's calibration, measured on first use per SparkContext (a few seconds), then remembered."""
    key = str(spark.sparkContext.applicationId)
    with _CALIBRATION_LOCK:
        known = _CALIBRATIONS.get(key)
        if known is not None:
            return known
        from pyspark.sql import functions as F
        from pyspark.sql.types import BooleanType

        clock, source = executor_clock(spark)
        compare = lambda n: spark.range(n).filter(F.col("id") % 7 == 3).count()  # noqa: E731
        compare(rows // 2)  # code generation and JIT warm-up
        row_s, (row_lo, row_hi) = _per_row(compare, rows, 3, clock)  # the model prices a row of it at 3 units
        noop = F.udf(lambda _: True, BooleanType(), useArrow=False)  # pickled rows, as a registered UDF runs
        python = lambda n: spark.range(n).filter(noop(F.col("id"))).count()  # noqa: E731
        python(1000)  # starts the Python workers
        py_s, (py_lo, py_hi) = _per_row(python, python_rows, 3, clock)
        through = [max(t - row_s, row_s) for t in (py_s, py_lo, py_hi)]
        fixed = _python_fixed_s(spark, python, python_rows)
        operators = _operator_costs(spark, clock, row_s / 3)
        found = Calibration(
            row_s / 3,
            (row_lo / 3, row_hi / 3),
            through[0],
            (through[1], through[2]),
            source,
            python_fixed_s=fixed,
            operator_costs=operators,
        )
        _CALIBRATIONS[key] = found
        logger.info("calibrated %s: %.3g s a unit, %.3g s a Python row", key, found.unit_s, found.python_row_s)
        return found


def _operator_costs(spark: SparkSession, clock: Clock, unit_s: float) -> dict[str, float]:
    """``join`` and ``aggregate`` constants of this session: a broadcast hash join of ``spark.range(N)`` on
    ``id % 1000`` to 1,000 rows, and a count per ``id % 1000``, each per row of N (``operator_k``). The defaults
    (4 each) are a guess; on local Spark a probe row of a broadcast join costs some 30 comparisons. Left out (the
    defaults stand) when a query fails."""
    from pyspark.sql import functions as F

    build = spark.range(BUILD_ROWS).withColumnRenamed("id", "k")
    queries = {
        "join": lambda n: spark.range(n).join(F.broadcast(build), F.col("id") % BUILD_ROWS == F.col("k")).count(),
        "aggregate": lambda n: spark.range(n).groupBy((F.col("id") % BUILD_ROWS).alias("g")).count().count(),
    }
    out = {}
    for kind, query in queries.items():
        try:
            query(OPERATOR_ROWS // 4)  # code generation
            row_s, _ = _per_row(query, OPERATOR_ROWS, 3, clock)
        except Exception as exc:  # noqa: BLE001 - the engine's default stands
            logger.info("%s not calibrated: %r", kind, exc)
            continue
        out[kind] = operator_k(row_s, unit_s)
    return out


def operator_k(row_s: float, unit_s: float) -> float:
    """An operator's per-row constant in units from its calibration query's seconds a row: the row's units less
    what the model prices besides the operator (scan and arithmetic), at least 1.

    >>> operator_k(126e-9, 3.8e-9), operator_k(5e-9, 3.8e-9)
    (31.2, 1.0)
    """
    return round(max(row_s / unit_s - PRICED_BESIDES, 1.0), 1)


def executor_clock(spark: SparkSession) -> tuple[Clock, str]:
    """Executor seconds when the session's status store can be read, else wall seconds; and the source to say."""
    from pushdown_client.executor_time import executor_seconds, stage_run_ms

    try:
        stage_run_ms(spark)
    except Exception as exc:  # noqa: BLE001 - no status store to read (a JVM without it): wall time stands
        logger.info("executor time not readable, calibrating in wall seconds: %r", exc)
        return wall_seconds, "measured: spark.range filter count, wall seconds"
    return (lambda action: executor_seconds(spark, action)[1]), "measured: spark.range filter count, executor seconds"


def _python_fixed_s(spark: SparkSession, python: Any, rows: int) -> float:
    """The intercept of Spark's "time to execute Python code" against rows, from the no-op UDF's runs at ``rows``
    and a quarter of it (0 when the metrics cannot be read)."""
    from pushdown_client.feedback.python_udfs import python_evaluations
    from pushdown_client.feedback.spark import observe

    def exec_s(n: int) -> float | None:
        with observe(spark) as run:
            python(n)
        found = python_evaluations(run.capture().executions)
        return sum(e.exec_s for e in found) if found else None

    try:
        small, big = exec_s(rows // 4), exec_s(rows)
    except Exception as exc:  # noqa: BLE001 - feedback then divides the whole time
        logger.info("Python execution metrics not read: %r", exc)
        return 0.0
    if small is None or big is None:
        return 0.0
    per_row = max(big - small, 0.0) / (rows - rows // 4)
    return max(small - per_row * (rows // 4), 0.0)


def known_calibration(spark: SparkSession) -> Calibration | None:
    """The session's calibration when one was measured (feedback converts seconds with it), else None (also for
    a session without a SparkContext, such as Spark Connect's)."""
    try:
        key = str(spark.sparkContext.applicationId)
    except Exception:  # noqa: BLE001 - no context to key a calibration by
        return None
    return _CALIBRATIONS.get(key)
