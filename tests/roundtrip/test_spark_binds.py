"""Every generated query's rewritten Spark SQL binds on Spark to the original's column names and types.

The DuckDB trips (test_sql_plan_sql.py) compare rows; this is the Spark half of "no rewritten SQL fails to parse or
bind" (issue 16): the plan rendered as Spark SQL, and the ``always`` and ``cost`` answers as the Spark SQL the service
returns (with the source's hints), each analysed by the shared local session (names, types and clauses resolved;
nothing runs). ``ROUNDTRIP_SPARK_QUERIES`` sets how many of the generated queries (default: one per feature).
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest

from costmodel import optimize_wire
from service.sql import plan_to_sql, sql_to_plan
from tests.roundtrip.schema import CATALOG, COLUMNS, ROWS, TABLES
from tests.roundtrip.sqlgen import FEATURES, QueryGen
from tests.roundtrip.test_sql_plan_sql import COMPOSITE_GROUPING, GROUPING_SET_FILTERS, WINDOW_NAME_CLASHES

QUERIES = int(os.environ.get("ROUNDTRIP_SPARK_QUERIES", len(FEATURES)))
SEED = int(os.environ.get("ROUNDTRIP_SEED", "2026"))
_SPARK_TYPES = {"int": "int", "double": "double", "string": "string", "date": "date"}


@pytest.fixture(scope="module")
def spark() -> Any:
    from tests.spark_session import get_spark, java_available

    if not java_available():
        pytest.skip("no Java for local Spark")
    session = get_spark()
    schema = ", ".join(f"{c} {_SPARK_TYPES[t]}" for c, t in COLUMNS)
    for name in TABLES:
        session.createDataFrame(ROWS[name], schema=schema).createOrReplaceTempView(name)
    return session


def _shape(spark: Any, sql: str) -> list[tuple[str, str]]:
    """Column names and types as Spark's analyser resolves them."""
    return [(f.name, f.dataType.simpleString()) for f in spark.sql(sql).schema.fields]


def _rewritten(sql: str) -> dict[str, str]:
    plan = sql_to_plan(sql, CATALOG)
    out = {"plan as Spark SQL": plan_to_sql(plan, "spark", source=sql)}
    for mode in ("always", "cost"):
        answer = optimize_wire(plan, CATALOG, {"mode": mode})["plan"]
        out[f"{mode} answer"] = plan_to_sql(answer, "spark", source=sql)
    return out


def test_every_rewritten_query_binds_on_spark_with_the_same_names_and_types(spark: Any) -> None:
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    gen = QueryGen(SEED)
    problems: list[str] = []
    for i in range(QUERIES):
        sql = gen.query(FEATURES[i % len(FEATURES)])
        expected = _shape(spark, sql)
        for trip, text in _rewritten(sql).items():
            try:
                got = _shape(spark, text)
            except Exception as exc:  # an analysis error is the finding
                problems.append(f"{trip}: {type(exc).__name__}: {str(exc)[:300]}\n  {sql}\n  {text}")
                continue
            if got != expected:
                problems.append(f"{trip}: {got} != {expected}\n  {sql}\n  {text}")
    assert not problems, "\n\n".join(problems[:5]) + f"\n\n({len(problems)} problems)"


def test_the_check_is_real(spark: Any) -> None:
    """A rename or a type change of one output column is caught."""
    sql = "SELECT t1.k AS k, sum(t1.x) AS total FROM t1 GROUP BY t1.k"
    assert _shape(spark, sql) != _shape(spark, "SELECT t1.k AS k, sum(t1.n) AS total FROM t1 GROUP BY t1.k")
    assert _shape(spark, sql) != _shape(spark, "SELECT t1.k AS K2, sum(t1.x) AS total FROM t1 GROUP BY t1.k")


def _rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in spark.sql(sql).collect()), key=repr)


HAND_WRITTEN = {
    **WINDOW_NAME_CLASHES,
    **{f"composite {k}": v for k, v in COMPOSITE_GROUPING.items()},
    **{f"filter over grouping sets: {k}": v for k, v in GROUPING_SET_FILTERS.items()},
}


@pytest.mark.parametrize("sql", HAND_WRITTEN.values(), ids=HAND_WRITTEN.keys())
def test_fixed_forms_run_on_spark_with_the_same_result(sql: str, spark: Any) -> None:
    """The forms fixed this round (window outputs named like input columns, composite grouping elements, filters
    over grouping sets) on Spark: every rewritten text returns the original's names, types and rows."""
    expected = (_shape(spark, sql), _rows(spark, sql))
    for trip, text in _rewritten(sql).items():
        assert (_shape(spark, text), _rows(spark, text)) == expected, f"{trip}:\n{text}"
