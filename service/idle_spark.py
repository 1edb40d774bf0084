"""The analyze Spark session's lifetime: started on first use, stopped when idle and at shutdown."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = logging.getLogger(__name__)


class IdleSpark:
    """The analyze Spark session: started on first use, stopped after ``idle_s`` without a job, and at close.

    A JVM that stays up after one analyze holds a gigabyte and Spark's ports for nothing.
    """

    def __init__(self, factory: Callable[[], SparkSession], idle_s: float) -> None:
        self._factory = factory
        self._idle_s = idle_s
        self._lock = threading.Lock()
        self._spark: SparkSession | None = None
        self._users = 0
        self._timer: threading.Timer | None = None
        self._closed = False

    @property
    def running(self) -> bool:
        return self._spark is not None

    @contextmanager
    def session(self) -> Iterator[SparkSession]:
        with self._lock:
            if self._closed:
                raise RuntimeError("the service is shutting down")
            self._cancel_timer()
            if self._spark is None:
                self._spark = self._factory()
            self._users += 1
            spark = self._spark
        try:
            yield spark
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0 and not self._closed:
                    self._timer = threading.Timer(self._idle_s, self._stop_if_idle)
                    self._timer.daemon = True
                    self._timer.start()

    def close(self) -> None:
        """Stop the session now (a running job then fails); no new one starts."""
        with self._lock:
            self._closed = True
            self._cancel_timer()
            spark, self._spark = self._spark, None
        _stop(spark)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _stop_if_idle(self) -> None:
        with self._lock:
            if self._users or self._spark is None:
                return
            spark, self._spark = self._spark, None
        logger.info("stopping the analyze Spark session after %.0f s idle", self._idle_s)
        _stop(spark)


def _stop(spark: SparkSession | None) -> None:
    if spark is None:
        return
    try:
        spark.stop()
    except Exception:  # already gone: nothing left to stop
        logger.warning("stopping the analyze Spark session failed", exc_info=True)
