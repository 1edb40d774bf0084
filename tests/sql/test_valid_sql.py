"""The renderer always writes valid SQL: every generated plan, before and after the engine.

Every plan the differential generator makes (tests/correctness/plangen.py) is
rendered for DuckDB and Spark as it is and as rewritten in ``always`` and ``cost`` modes. The
text must parse back with sqlglot in its dialect, read back into a plan (or be
refused by name), execute on DuckDB (an error only where the data makes a cast
fail) and bind on Spark (analysis resolves every name and type; nothing runs).
A plan the renderer cannot express must be refused with ``SqlError`` naming it,
never rendered into text an engine rejects. The corpus queries go through the
same checks in test_corpus.py.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

import duckdb
import pytest
import sqlglot

from costmodel import optimize_wire
from service.sql import SqlError, plan_to_sql, sql_to_plan
from tests.correctness.plangen import TABLES, PlanGenerator, catalog, make_rows

DUCKDB_PLANS = 300
SPARK_PLANS = 100


@pytest.fixture(scope="module")
def world() -> tuple[duckdb.DuckDBPyConnection, dict[str, Any], dict[str, Any]]:
    rng = random.Random(20261123)
    rows = {name: make_rows(rng, name, 20) for name in TABLES}
    con = duckdb.connect()
    for name, columns in TABLES.items():
        cols = ", ".join(f"{c} {'INTEGER' if t == 'int' else 'VARCHAR'}" for c, t in columns)
        con.execute(f"CREATE TABLE {name} ({cols})")
        con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' for _ in columns)})", rows[name])
    return con, catalog(rows), rows


def _plans(seed: int, cat: dict[str, Any]) -> list[dict[str, Any]]:
    plan = PlanGenerator(random.Random(seed)).query()
    return [plan, *(optimize_wire(plan, cat, {"mode": mode})["plan"] for mode in ("always", "cost"))]


def _reads_back(text: str, cat: dict[str, Any], dialect: str) -> None:
    sqlglot.parse_one(text, read=dialect)  # raises on invalid text
    try:
        sql_to_plan(text, cat, dialect)
    except SqlError as err:  # a construct the plan reader refuses by name is fine; broken text is not
        assert err.code == "unsupported" and err.detail.get("construct"), err


@pytest.mark.parametrize("seed", range(DUCKDB_PLANS))
def test_every_generated_plan_renders_valid_duckdb_sql(seed: int, world: Any) -> None:
    con, cat, _ = world
    for plan in _plans(seed, cat):
        text = plan_to_sql(plan, "duckdb", catalog=cat)
        _reads_back(text, cat, "duckdb")
        with contextlib.suppress(duckdb.ConversionException):  # the data makes a cast fail; the SQL is valid
            con.execute(text).fetchall()


@pytest.fixture(scope="module")
def spark(world: Any) -> Any:
    from tests.spark_session import get_spark, java_available

    if not java_available():
        pytest.skip("no Java for local Spark")
    session = get_spark()
    _, _, rows = world
    for name, columns in TABLES.items():
        schema = ", ".join(f"{c} {'int' if t == 'int' else 'string'}" for c, t in columns)
        session.createDataFrame(rows[name], schema=schema).createOrReplaceTempView(name)
    return session


@pytest.mark.parametrize("seed", range(SPARK_PLANS))
def test_every_generated_plan_binds_on_spark(seed: int, world: Any, spark: Any) -> None:
    _, cat, _ = world
    for plan in _plans(seed, cat):
        text = plan_to_sql(plan, "spark", catalog=cat)
        _reads_back(text, cat, "spark")
        assert spark.sql(text).schema.fields  # analysis resolves every name, type and clause; nothing runs
