"""Spark's ``date_add(d, n)`` and ``date_sub(d, n)``: sqlglot reads both as one day shift with a unit; the adapter
names them as the wire does and refuses any unit but days (queries using them were refused as a whole before)."""

from __future__ import annotations

from typing import Any

import pytest

from service.sql import SqlError, sql_to_plan
from tests.sql.helpers import CATALOG


def _where(sql: str) -> Any:
    plan = sql_to_plan(sql, CATALOG, "spark")
    while plan["op"] != "filter":
        plan = plan["input"]
    return plan["predicate"]


def test_date_sub_and_date_add_read_as_the_wire_functions() -> None:
    predicate = _where("SELECT a FROM t WHERE date_sub(d, 7) > DATE '2020-01-01' AND date_add(d, c) < d")
    shifts = [arg["args"][0] for arg in predicate["args"]]
    assert shifts[0] == {"fn": "date_sub", "args": [{"col": "t.d"}, {"lit": 7, "type": "int"}]}
    assert shifts[1] == {"fn": "date_add", "args": [{"col": "t.d"}, {"col": "t.c"}]}


def test_a_shift_in_months_is_refused_naming_the_unit() -> None:
    """``dateadd(unit, n, d)`` is Spark's timestampadd (a timestamp stays a timestamp): not the wire's date_add."""
    with pytest.raises(SqlError, match="MONTH"):
        sql_to_plan("SELECT a FROM t WHERE dateadd(MONTH, 1, d) > d", CATALOG, "spark")
