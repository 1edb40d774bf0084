"""The names a plan node shows its parent (service/sql/plan_names.py): one rule per operator the SQL adapter writes."""

from __future__ import annotations

import doctest

import pytest

from costmodel.kinds.registry import wire_ops
from service.sql import plan_names
from service.sql.parse import Tables
from service.sql.plan_names import RULES, visible_names
from service.sql.to_plan import sql_to_plan

CATALOG = {"tables": {"t": {"columns": [{"name": "K", "type": "int"}, {"name": "x", "type": "double"}]}}}


def test_every_operator_the_adapter_writes_has_a_rule() -> None:
    """A kind added to the engine (and so to what SQL may produce) fails here until plan_names knows it."""
    assert set(RULES) == set(wire_ops())


def test_the_docstring_example_holds() -> None:
    assert doctest.testmod(plan_names).failed == 0


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        ("SELECT t.K, t.x FROM t", {"k", "x"}),
        ("SELECT a.K AS y FROM t a", {"y"}),
        ("SELECT s.k FROM t s JOIN t u ON s.K = u.K", {"k"}),
        ("SELECT t.K, sum(t.x) AS total FROM t GROUP BY t.K", {"k", "total"}),
        ("SELECT t.K FROM t UNION ALL SELECT t.x FROM t", {"k"}),
    ],
)
def test_names_of_translated_queries(sql: str, names: set[str]) -> None:
    assert visible_names(sql_to_plan(sql, CATALOG), Tables(CATALOG)) == names


def test_the_inputs_of_a_window_and_a_join_stay_visible() -> None:
    plan = sql_to_plan("SELECT * FROM (SELECT t.K, rank() OVER (ORDER BY t.x) AS r FROM t) a", CATALOG)
    window = plan["input"]["input"]["input"]
    assert window["op"] == "window"
    assert visible_names(window, Tables(CATALOG)) == {"k", "x", "r"}
    join = sql_to_plan("SELECT 1 AS one FROM t a JOIN t b ON a.K = b.K", CATALOG)["input"]
    assert visible_names(join, Tables(CATALOG)) == {"k", "x"}


def test_a_table_the_catalog_does_not_describe_is_unknown() -> None:
    assert visible_names(sql_to_plan("SELECT u.a FROM u", None)["input"], Tables(None)) is None
