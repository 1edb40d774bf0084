"""Executor seconds of what a block runs: the run time of the tasks of the stages it started, summed.

Costs are priced in executor time (docs/cost-model.md, "Time saved"): the work a placement saves on every core,
which on a cluster is what a saving is worth, whatever the parallelism of one query. Spark's status store keeps,
per stage attempt, its tasks' run time (milliseconds, wall time of each task's thread, so a task waiting on its
Python worker counts). ``executor_seconds`` reads it before and after the block.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: how long to wait for Spark's listener bus to deliver a block's last task ends (milliseconds)
LISTENER_WAIT_MS = 10_000


def stage_run_ms(spark: SparkSession) -> dict[tuple[int, int], int]:
    """Every stage attempt the status store keeps, with its tasks' run time summed (milliseconds)."""
    context = spark.sparkContext
    gateway: Any = context._gateway
    jvm: Any = context._jvm
    no_quantiles = gateway.new_array(jvm.double, 0)
    stages = context._jsc.sc().statusStore().stageList(None, False, False, no_quantiles, None)
    out = {}
    for i in range(stages.size()):
        stage = stages.apply(i)
        out[(int(stage.stageId()), int(stage.attemptId()))] = int(stage.executorRunTime())
    return out


def new_stage_seconds(before: dict[tuple[int, int], int], after: dict[tuple[int, int], int]) -> float:
    """Executor seconds of the stage attempts in ``after`` that ``before`` did not have.

    >>> new_stage_seconds({(0, 0): 500}, {(0, 0): 500, (1, 0): 1200, (2, 0): 300})
    1.5
    """
    return sum(ms for key, ms in after.items() if key not in before) / 1000


def executor_seconds(spark: SparkSession, action: Callable[[], Any]) -> tuple[float, float]:
    """``action()``'s wall seconds and the executor seconds of the stages it ran."""
    before = stage_run_ms(spark)
    started = time.perf_counter()
    action()
    wall = time.perf_counter() - started
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(LISTENER_WAIT_MS)
    return wall, new_stage_seconds(before, stage_run_ms(spark))
