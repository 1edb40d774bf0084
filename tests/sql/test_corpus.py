"""The analytic corpus, before and after, on DuckDB and Spark: same names, types and rows.

Every query in tests/sql/corpus/queries runs as written and as rewritten in
``always`` and ``cost`` modes. On DuckDB the rows, column names and column types
must be identical (the DuckDB-dialect text of the query goes in and DuckDB SQL
comes out, so names are compared in the dialect that made them; the Spark text
goes in too, compared on rows and types). On Spark, the rewritten Spark SQL must
bind to the same names and types and return the same rows. A refusal must be a
listed one (``REFUSED``), naming its construct; a listed refusal that starts
working fails too, so the list stays true.
"""

from __future__ import annotations

from typing import Any

import pytest

from service.sql import SqlError, sql_to_plan
from tests.sql.corpus.runner import (
    ENGINE_PENDING,
    REFUSED,
    SPARK_INPUT_ONLY,
    corpus,
    duckdb_outcome,
    rewritten,
    spark_outcome,
)
from tests.sql.corpus.schema import COLUMNS, catalog, load_duckdb, make_rows, spark_schema
from tests.sql.helpers import spark_to_duckdb

QUERIES = corpus()
ACCEPTED = [
    pytest.param(name, marks=pytest.mark.xfail(reason=ENGINE_PENDING[name], strict=True))
    if name in ENGINE_PENDING
    else name
    for name in QUERIES
    if name not in REFUSED
]
MODES = ["always", "cost"]


@pytest.fixture(scope="module")
def world() -> tuple[Any, dict[str, Any], dict[str, Any]]:
    rows = make_rows()
    return load_duckdb(rows), catalog(rows), rows


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_listed_refusals_name_their_construct(name: str, world: Any) -> None:
    with pytest.raises(SqlError) as err:
        sql_to_plan(QUERIES[name], world[1], "spark")
    assert err.value.code == "unsupported"
    assert REFUSED[name].lower() in err.value.detail["construct"].lower()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ACCEPTED)
def test_duckdb_same_names_types_rows(name: str, mode: str, world: Any) -> None:
    con, cat, _ = world
    duck_sql = spark_to_duckdb(QUERIES[name])
    before = duckdb_outcome(con, duck_sql)
    if name in SPARK_INPUT_ONLY:  # refused as DuckDB text, and the refusal says why
        with pytest.raises(SqlError, match=SPARK_INPUT_ONLY[name]):
            rewritten(duck_sql, cat, mode, "duckdb", "duckdb")
    else:
        assert duckdb_outcome(con, rewritten(duck_sql, cat, mode, "duckdb", "duckdb")) == before
    # The Spark text rendered for DuckDB: same rows and types (names follow Spark's rule there).
    names, types, rows = duckdb_outcome(con, rewritten(QUERIES[name], cat, mode, "spark", "duckdb"))
    assert (types, rows) == before[1:]
    assert len(names) == len(before[0])


@pytest.fixture(scope="module")
def spark(world: Any) -> Any:
    from tests.spark_session import get_spark, java_available

    if not java_available():
        pytest.skip("no Java for local Spark")
    session = get_spark()
    _, _, rows = world
    for table in COLUMNS:
        session.createDataFrame(rows[table], schema=spark_schema(table)).createOrReplaceTempView(table)
    return session


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ACCEPTED)
def test_spark_same_names_types_rows(name: str, mode: str, world: Any, spark: Any) -> None:
    before = spark_outcome(spark, QUERIES[name])
    after = spark_outcome(spark, rewritten(QUERIES[name], world[1], mode, "spark", "spark"))
    assert after == before
