"""A job that fails or is killed midway leaves the previous version current and complete."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from service.analyze import AnalyzeRequest, analyze_and_store
from service.statistics import StatisticsStore
from tests.analyze.conftest import ROWS, make_table, write_parquet

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REPO = Path(__file__).resolve().parents[2]


def small(path: Path, name: str = "events") -> AnalyzeRequest:
    return AnalyzeRequest(name=name, path=str(path), sample_rows=500, histogram_buckets=4)


@pytest.fixture(scope="module")
def tiny_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two columns: the subprocess starts its own JVM, so its job should be short."""
    return write_parquet(make_table(ROWS).select(["id", "skew"]), tmp_path_factory.mktemp("tiny") / "events")


@pytest.fixture
def first_version(spark: SparkSession, tiny_table: Path, store: StatisticsStore) -> StatisticsStore:
    summary = analyze_and_store(spark, small(tiny_table), store)
    assert summary["version"] == 1 and summary["row_count"] == ROWS
    return store


def assert_version_one_intact(store: StatisticsStore) -> None:
    assert store.versions("events") == [1]
    current = store.get("events")
    assert current is not None and current.version == 1 and current.stats["row_count"] == ROWS
    sample = store.sample(current)
    assert sample is not None and 0 < sample.size < 1000


@pytest.mark.parametrize("stage", ["mcv", "commit"])
def test_a_failing_job_leaves_the_previous_version(
    spark: SparkSession, tiny_table: Path, first_version: StatisticsStore, stage: str
) -> None:
    def fail(reached: str) -> None:
        if reached == stage:
            raise RuntimeError(f"failed at {reached}")

    with pytest.raises(RuntimeError, match=stage):
        analyze_and_store(spark, small(tiny_table), first_version, hook=fail)
    assert_version_one_intact(first_version)


@pytest.mark.slow
def test_a_killed_job_leaves_the_previous_version(
    tiny_table: Path, first_version: StatisticsStore, tmp_path: Path
) -> None:
    marker = tmp_path / "reached"
    data_dir = first_version.db_path.parent
    args = [str(data_dir), str(tiny_table), "events", "commit", str(marker)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # its own process group, so the kill reaches the JVM it starts as well
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.analyze.killable_job", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 150
        while not marker.exists():
            if proc.poll() is not None:
                pytest.fail(f"the job exited before its commit: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the job did not reach its commit in time"
            time.sleep(0.2)
        leftovers = list((data_dir / "samples" / "events").glob(".tmp-*.parquet"))
        assert len(leftovers) == 1  # the new sample was fully written: only the commit was missing
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    reopened = StatisticsStore(first_version.db_path, first_version.samples_dir)  # as a restarted service sees it
    assert_version_one_intact(reopened)
    assert sorted(p.name for p in (data_dir / "samples" / "events").glob("v*.parquet")) == ["v1.parquet"]
