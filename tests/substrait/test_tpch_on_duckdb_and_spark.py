"""Substrait-born plans run on DuckDB and Spark too: the 22 TPC-H queries as DataFusion's producer wrote them,
read into our plan, optimized, and rendered as SQL, return the rows DataFusion returns for the query."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import duckdb
import pytest

from costmodel import optimize_wire
from service.sql import plan_to_sql
from service.substrait import substrait_to_plan
from tests.substrait.conftest import CATALOG, NAMES, QUERIES, TABLES, Tpch


def _normal(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows comparable across engines: numbers as floats rounded to 2 places (decimal vs double sums)."""

    def value(v: Any) -> Any:
        if isinstance(v, (float, Decimal)) and not isinstance(v, bool):
            return round(float(v), 2)
        return v

    return sorted((tuple(value(v) for v in row) for row in rows), key=repr)


@pytest.fixture(scope="module")
def duck(tpch: Tpch, tpch_data) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for table in TABLES:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{tpch_data / (table + '.parquet')}')")
    return con


@pytest.mark.parametrize("path", QUERIES, ids=NAMES)
def test_substrait_plan_optimized_runs_on_duckdb_with_the_original_rows(tpch: Tpch, duck, path) -> None:
    sql = path.read_text()
    expected = _normal(tpch.run_sql(sql))
    plan = substrait_to_plan(tpch.substrait(sql), CATALOG)
    rewritten = optimize_wire(plan, CATALOG, {"mode": "cost"})["plan"]
    got = _normal(duck.execute(plan_to_sql(rewritten, "duckdb", catalog=CATALOG)).fetchall())
    assert got == expected


@pytest.fixture(scope="module")
def spark(tpch_data):
    from tests.spark_session import get_spark, java_available

    if not java_available():
        pytest.skip("local Spark needs a Java runtime")
    session = get_spark()
    for table in TABLES:
        session.read.parquet(str(tpch_data / f"{table}.parquet")).createOrReplaceTempView(table)
    return session


@pytest.mark.parametrize("path", QUERIES, ids=NAMES)
def test_substrait_plan_optimized_runs_on_spark_with_the_original_rows(tpch: Tpch, spark, path) -> None:
    sql = path.read_text()
    expected = _normal(tpch.run_sql(sql))
    plan = substrait_to_plan(tpch.substrait(sql), CATALOG)
    rewritten = optimize_wire(plan, CATALOG, {"mode": "cost"})["plan"]
    got = _normal([tuple(row) for row in spark.sql(plan_to_sql(rewritten, "spark", catalog=CATALOG)).collect()])
    assert got == expected
