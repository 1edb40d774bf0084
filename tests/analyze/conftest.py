"""Small tables written once per run (Parquet with several files and row groups, CSV), the shared Spark session,
and one analyze result of each that many tests read."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from service.analyze import AnalyzeRequest, AnalyzeResult, run_analyze
from service.statistics import StatisticsStore
from tests.spark_session import get_spark, java_available

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROWS = 20_000
FILES = 2
ROW_GROUP = 4_000
SAMPLE_ROWS = 2_000


@dataclass(frozen=True)
class Dataset:
    path: Path
    data: pa.Table  # every row, for the true answers


def make_table(rows: int = ROWS, seed: int = 7) -> pa.Table:
    """Columns that stress the statistics: a key, a skewed column, a NULL-heavy one, strings with NULLs,
    dates, timestamps, booleans and decimals."""
    rng = np.random.default_rng(seed)
    skew = np.where(rng.random(rows) < 0.5, 1, np.where(rng.random(rows) < 0.4, 2, rng.integers(3, 500, rows)))
    mostly_null = [None if rng.random() < 0.9 else float(round(v, 3)) for v in rng.random(rows) * 100]
    categories = ["alpha", "beta", "gamma", "delta", "epsilon"]
    weights = np.array([0.6, 0.2, 0.1, 0.07, 0.03])
    category = [None if i % 10 == 0 else categories[c] for i, c in enumerate(rng.choice(5, rows, p=weights))]
    day0 = dt.date(2024, 1, 1)
    return pa.table(
        {
            "id": pa.array(np.arange(rows, dtype=np.int64)),
            "skew": pa.array(skew.astype(np.int32)),
            "mostly_null": pa.array(mostly_null, pa.float64()),
            "category": pa.array(category, pa.string()),
            "day": pa.array([day0 + dt.timedelta(days=int(d)) for d in rng.integers(0, 366, rows)], pa.date32()),
            "ts": pa.array(
                [dt.datetime(2024, 1, 1) + dt.timedelta(seconds=int(s)) for s in rng.integers(0, 86_400 * 30, rows)],
                pa.timestamp("us", tz="UTC"),
            ),
            "flag": pa.array(rng.random(rows) < 0.25),
            "price": pa.array(
                [None if i % 50 == 0 else Decimal(f"{v:.2f}") for i, v in enumerate(rng.random(rows) * 1000)],
                pa.decimal128(10, 2),
            ),
        }
    )


def write_parquet(data: pa.Table, folder: Path, files: int = FILES, row_group: int = ROW_GROUP) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    per_file = data.num_rows // files
    for i in range(files):
        part = data.slice(i * per_file, per_file if i < files - 1 else data.num_rows - i * per_file)
        pq.write_table(part, folder / f"part-{i}.parquet", row_group_size=row_group)
    return folder


@pytest.fixture(scope="session")
def spark() -> SparkSession:
    if not java_available():
        pytest.skip("no Java runtime: local Spark cannot start")
    return get_spark()


@pytest.fixture(scope="session")
def parquet_table(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    data = make_table()
    return Dataset(write_parquet(data, tmp_path_factory.mktemp("parquet") / "events"), data)


@pytest.fixture(scope="session")
def csv_table(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """CSV cannot hold timestamps with zones faithfully or decimals exactly: a subset of the columns."""
    data = make_table(rows=6_000, seed=11).select(["id", "skew", "mostly_null", "category", "day"])
    folder = tmp_path_factory.mktemp("csv") / "events"
    folder.mkdir()
    for i, part in enumerate((data.slice(0, 3_000), data.slice(3_000))):
        pacsv.write_csv(part, folder / f"part-{i}.csv")
    return Dataset(folder, data)


@pytest.fixture(scope="session")
def parquet_analyzed(spark: SparkSession, parquet_table: Dataset) -> AnalyzeResult:
    return run_analyze(spark, AnalyzeRequest(name="events", path=str(parquet_table.path), sample_rows=SAMPLE_ROWS))


@pytest.fixture
def store(tmp_path: Path) -> StatisticsStore:
    return StatisticsStore(tmp_path / "data" / "pushdown.db", tmp_path / "data" / "samples")
