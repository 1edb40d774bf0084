"""The 22 TPC-H queries written with the DataFrame API (``dataframe_queries``) give, through ``run_dataframe``, the
rows and column names their SQL forms give through the service (the answer's Spark SQL run on Spark), on the
tpchgen-cli data of conftest.py; both with the SF1 catalog, rows compared as multisets with numbers rounded to 2
places (``common.multiset``, as the SQL checks compare them). None of these answers needs a barrier (no expensive
predicate: the DataFrame comes back as written), so the answer's SQL is also applied to the DataFrame's leaves as
the runner applies an answer with barriers, and compared."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pushdown_client.dataframe import apply_sql, conform_exactly, run_dataframe
from service.client import PushdownClient
from tests.tpch.common import CATALOG, NAMES, multiset, optimized, query_sql
from tests.tpch.dataframe_queries import QUERIES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_there_is_a_dataframe_for_every_query() -> None:
    assert sorted(QUERIES) == NAMES


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_dataframe_gives_the_rows_and_names_of_the_sql_through_the_service(spark: SparkSession, name: str) -> None:
    through_sql = spark.sql(optimized(name, "cost")["sql"])
    expected = multiset(tuple(row) for row in through_sql.collect())
    assert expected, f"{name} returns no rows at this scale factor: the comparison would prove nothing"
    written = QUERIES[name](spark)
    run = run_dataframe(written, client=PushdownClient(), catalog=CATALOG)
    assert run.fallback is None
    assert run.dataframe.columns == spark.sql(query_sql(name)).columns == through_sql.columns
    assert run.dataframe.schema == written.schema
    assert multiset(tuple(row) for row in run.dataframe.collect()) == expected, run.answer.get("spark")
    # every node read (nothing left opaque); and the answer's SQL applied to the DataFrame's leaves, as the runner
    # does when an answer needs barriers (these answers need none: the DataFrame above is the caller's own), gives
    # the same rows and schema
    assert run.translation is not None and run.translation.opaque == []
    if run.as_written:
        applied = conform_exactly(apply_sql(spark, run.translation, run.answer["spark"]["sql"]), written.schema)
        assert applied.schema == written.schema
        assert multiset(tuple(row) for row in applied.collect()) == expected, run.answer["spark"]["sql"]
