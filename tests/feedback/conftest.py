"""Local Spark and two small parquet tables rich in NULLs, duplicates and skew, with their rows in Python."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.spark_session import get_spark, java_available

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T_ROWS = 2000
U_ROWS = 120


def t_rows() -> list[tuple[Any, ...]]:
    """fb_t(a, b, s): b NULL every 7th row; s skewed (half the rows 'common'); a repeats."""
    return [(i % 300, None if i % 7 == 0 else i % 10, "common" if i % 2 else f"x{i % 13}") for i in range(T_ROWS)]


def u_rows() -> list[tuple[Any, ...]]:
    """fb_u(a, c): a NULL every 11th row, otherwise 0..119."""
    return [(None if i % 11 == 0 else i, f"c{i}") for i in range(U_ROWS)]


CATALOG: dict[str, Any] = {
    "tables": {
        "fb_t": {
            "columns": [{"name": "a", "type": "int"}, {"name": "b", "type": "int"}, {"name": "s", "type": "string"}],
            "row_count": T_ROWS,
            "column_stats": {"a": {"null_count": 0}},
        },
        "fb_u": {"columns": [{"name": "a", "type": "int"}, {"name": "c", "type": "string"}], "row_count": U_ROWS},
    }
}


@dataclass(frozen=True)
class Tables:
    root: Path
    t: list[tuple[Any, ...]]
    u: list[tuple[Any, ...]]


@pytest.fixture(scope="session")
def spark() -> SparkSession:
    if not java_available():
        pytest.skip("no Java runtime: local Spark cannot start")
    return get_spark()


@pytest.fixture(scope="session")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Tables:
    root = tmp_path_factory.mktemp("feedback")
    data = Tables(root, t_rows(), u_rows())
    spark.createDataFrame(data.t, "a int, b int, s string").coalesce(1).write.parquet(str(root / "t"))
    spark.createDataFrame(data.u, "a int, c string").coalesce(1).write.parquet(str(root / "u"))
    register(spark, root)
    return data


def register(spark: SparkSession, root: Path) -> None:
    """(Re)register the temp views: another test module may have used the names."""
    spark.read.parquet(str(root / "t")).createOrReplaceTempView("fb_t")
    spark.read.parquet(str(root / "u")).createOrReplaceTempView("fb_u")


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each test that uses it runs on SQLite and on a fresh PostgreSQL database (tests/postgres.py)."""
    if request.param == "sqlite":
        return f"sqlite:///{(tmp_path / 'history.db').as_posix()}"
    return request.getfixturevalue("postgres").new_database()
