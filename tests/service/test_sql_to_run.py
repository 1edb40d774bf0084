"""The answer's top-level ``sql`` is the one query to run: for Spark the one that keeps every decision (a kept
predicate behind its barrier); the engine-neutral rendering, which Spark's pushdown may undo, is
``sql_portable``."""

from __future__ import annotations

from service.optimize import OptimizeInput, OptimizeService
from tests.service.test_optimize_baseline import CATALOG, UDF_SQL

FUNCTIONS = {"score": {"cost": 5000}}


def _answer(dialect: str = "spark") -> dict:
    options = {"mode": "cost", "functions": FUNCTIONS}
    return OptimizeService().optimize(OptimizeInput(sql=UDF_SQL, dialect=dialect, catalog=CATALOG, options=options))


def test_the_top_level_sql_keeps_the_kept_predicate_on_spark() -> None:
    answer = _answer()
    assert answer["spark"]["barriers"] == ["score(orders.o_comment)"]
    assert answer["sql"] == answer["spark"]["sql"]  # the one to run
    assert answer["sql_portable"] != answer["sql"] and "SPARK_PARTITION_ID" not in answer["sql_portable"]


def test_another_dialect_gets_its_own_rendering_in_both() -> None:
    answer = _answer("duckdb")
    assert answer["sql"] == answer["sql_portable"]
    assert answer["spark"]["sql"] != answer["sql"]  # Spark SQL, for a Spark runner


def test_a_query_spark_runs_as_written_is_handed_back_as_written() -> None:
    sql = "SELECT o_orderkey FROM orders WHERE o_totalprice > 100"
    answer = OptimizeService().optimize(OptimizeInput(sql=sql, catalog=CATALOG))
    assert answer["spark"]["as_written"] and answer["sql"] == sql
    assert "sql_portable" in answer
