"""One local SparkSession per test run, shared by every test directory that needs Spark.

Starting a JVM costs about ten seconds, so ``get_spark()`` builds the session once and
caches it; a directory's ``conftest.py`` wraps it in a session-scoped fixture. The
settings suit a 2-core CI machine: two local threads, two shuffle partitions, no UI,
no progress bars and no log lines below fatal, from the JVM or from PySpark (query
errors still reach the test as exceptions).
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: log4j2 configuration for the driver JVM: Spark logs its own failures at ERROR before
#: raising them, which would bury pytest's output under JVM stack traces.
_LOG4J2 = """\
rootLogger.level = fatal
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c: %m%n
"""


def java_available() -> bool:
    """PySpark ships no JVM; without one there is no local Spark to test against."""
    home = os.environ.get("JAVA_HOME")
    return bool((home and (Path(home) / "bin" / "java").exists()) or shutil.which("java"))


@functools.cache
def get_spark() -> SparkSession:
    """The shared local session (created on first call, stopped when the interpreter exits)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    log_conf = Path(tempfile.mkdtemp(prefix="pushdown-spark-")) / "log4j2.properties"
    log_conf.write_text(_LOG4J2)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("pushdown-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.log.structuredLogging.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log_conf.as_uri()}")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("FATAL")
    # PySpark also logs every failed query's JVM stack trace as JSON from Python before raising it.
    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)
    atexit.register(spark.stop)
    return spark
