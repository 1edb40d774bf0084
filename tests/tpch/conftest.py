"""TPC-H data generated once per run with tpchgen-cli, registered in DuckDB and in the shared Spark session."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pytest

from tests.spark_session import get_spark, java_available
from tests.tpch.common import SCALE_FACTOR, TABLES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _tpchgen() -> str:
    """The console script installed next to this interpreter (a venv's bin), else on PATH."""
    local = Path(sys.executable).with_name("tpchgen-cli")
    found = str(local) if local.exists() else shutil.which("tpchgen-cli")
    if found is None:
        pytest.fail("tpchgen-cli is not installed (pip install -e '.[test]' installs it)")
    return found


@pytest.fixture(scope="session")
def tpch_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Parquet file per table, ``<dir>/<table>.parquet``, at SCALE_FACTOR (about 3 MB, ~1 s)."""
    out = tmp_path_factory.mktemp("tpch")
    cmd = [_tpchgen(), "parquet", "--scale-factor", str(SCALE_FACTOR), "--output-dir", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    missing = [t for t in TABLES if not (out / f"{t}.parquet").exists()]
    assert not missing, f"tpchgen-cli wrote no file for {missing}: {sorted(p.name for p in out.iterdir())}"
    return out


@pytest.fixture(scope="session")
def duck(tpch_data: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """DuckDB with one view per table over its Parquet file."""
    con = duckdb.connect()
    for table in TABLES:
        path = str(tpch_data / f"{table}.parquet").replace("'", "''")
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{path}')")
    yield con
    con.close()


@pytest.fixture(scope="session")
def spark(tpch_data: Path) -> SparkSession:
    """The run's shared Spark session with the 8 tables as temporary views."""
    if not java_available():
        pytest.skip("no Java runtime: local Spark cannot start")
    session = get_spark()
    for table in TABLES:
        session.read.parquet(str(tpch_data / f"{table}.parquet")).createOrReplaceTempView(table)
    return session
