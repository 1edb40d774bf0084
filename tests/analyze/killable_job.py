"""The killed-job test's subprocess: an analyze job that halts at a chosen stage until it is killed.

Usage: ``python -m tests.analyze.killable_job DATA_DIR PATH NAME STAGE MARKER``; it writes MARKER when it
reaches STAGE, then sleeps.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

from service.analyze import AnalyzeRequest, analyze_and_store
from service.statistics import StatisticsStore


def main(data_dir: str, path: str, name: str, stage: str, marker: str) -> None:
    store = StatisticsStore(Path(data_dir) / "pushdown.db", Path(data_dir) / "samples")

    def halt(reached: str) -> None:
        if reached == stage:
            Path(marker).write_text(reached)
            time.sleep(600)

    request = AnalyzeRequest(name=name, path=path, sample_rows=500, histogram_buckets=4)
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    analyze_and_store(spark, request, store, hook=halt)


if __name__ == "__main__":
    main(*sys.argv[1:6])
