"""A typed literal (a date, a timestamp, a typed NULL) is written as remembered text, exactly as sqlglot writes
its ``CAST`` node in every dialect, alone and inside a whole query."""

from __future__ import annotations

import pytest
from sqlglot import exp

from service.sql import plan_to_sql
from service.sql.common import dialect_of, sqlglot_type
from service.sql.render_expr import literal

DIALECTS = ["spark", "databricks", "hive", "duckdb", "postgres", "bigquery", "snowflake", "trino", "mysql", "tsql"]
LITERALS = [
    ("1996-01-01", "date"),
    ("1998-12-01 10:20:30", "timestamp"),
    ("2024-02-29T00:00:00.123", "timestamp"),
    ("not a date", "date"),
    ("it's", "date"),
    ("back\\slash", "timestamp"),
    (None, "int"),
    (None, "decimal(15,2)"),
    (None, "date"),
    (None, "string"),
]


def _cast_node(value: str | None, typ: str) -> exp.Expr:
    return exp.Cast(this=exp.Null() if value is None else exp.Literal.string(value), to=sqlglot_type(typ))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_typed_literal_reads_as_sqlglots_cast(dialect: str) -> None:
    writer = dialect_of(dialect)
    for value, typ in LITERALS:
        written = literal({"lit": value, "type": typ}, dialect).sql(dialect=writer, pretty=True)
        assert written == _cast_node(value, typ).sql(dialect=writer, pretty=True), (value, typ)


@pytest.mark.parametrize("dialect", ["spark", "duckdb", "postgres"])
def test_a_query_with_typed_literals_is_written_as_with_cast_nodes(dialect: str) -> None:
    scan = {"op": "scan", "id": "s", "table": "t", "filters": []}
    predicate = {
        "fn": "and",
        "args": [
            {"fn": ">=", "args": [{"col": "t.d"}, {"lit": "1996-01-01", "type": "date"}]},
            {"fn": "<", "args": [{"col": "t.d"}, {"lit": "1996-04-01 00:00:00", "type": "timestamp"}]},
        ],
    }
    plan = {
        "op": "project",
        "id": "p",
        "exprs": [{"expr": {"col": "t.d"}, "as": "d"}, {"expr": {"lit": None, "type": "int"}, "as": "n"}],
        "input": {"op": "filter", "id": "f", "predicate": predicate, "input": scan},
    }
    catalog = {"tables": {"t": {"columns": [{"name": "d", "type": "date"}]}}}
    expected = (
        f"SELECT\n  t.d,\n  {_cast_node(None, 'int').sql(dialect=dialect)} AS n\nFROM t\nWHERE\n"
        f"  t.d >= {_cast_node('1996-01-01', 'date').sql(dialect=dialect)}\n"
        f"  AND t.d < {_cast_node('1996-04-01 00:00:00', 'timestamp').sql(dialect=dialect)}"
    )
    assert plan_to_sql(plan, dialect, catalog) == expected


def test_an_unnamed_typed_literal_key_is_named_by_its_text_as_before() -> None:
    """A group key with no name is named as sqlglot names its CAST node: by the literal's text."""
    scan = {"op": "scan", "id": "s", "table": "t", "filters": []}
    plan = {
        "op": "aggregate",
        "id": "a",
        "group_by": [{"lit": "1996-01-01", "type": "date"}, {"lit": None, "type": "int"}],
        "aggregates": [{"expr": {"fn": "count", "args": []}, "as": "n"}],
        "input": scan,
    }
    catalog = {"tables": {"t": {"columns": [{"name": "d", "type": "date"}]}}}
    text = plan_to_sql(plan, "spark", catalog)
    assert "CAST('1996-01-01' AS DATE) AS `1996-01-01`" in text
    assert "CAST(NULL AS INT) AS `NULL`" in text
