"""Constant join conditions in every join type: translated, optimized and rendered with the same rows.

The engine may move a constant or one-sided ON condition into an input and
leave the join without one; the renderer then writes ``ON TRUE``.
"""

from __future__ import annotations

import pytest

from costmodel import optimize_wire
from service.sql import plan_to_sql, sql_to_plan
from tests.sql.helpers import CATALOG, connect, rows, spark_to_duckdb


@pytest.mark.parametrize("join", ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"])
@pytest.mark.parametrize("condition", ["TRUE", "FALSE", "1 = 0", "u.c > 100", "t.c IS NULL"])
@pytest.mark.parametrize("mode", ["always", "cost"])
def test_constant_and_one_sided_on(join: str, condition: str, mode: str) -> None:
    columns = "t.a, t.b" if "SEMI" in join or "ANTI" in join else "t.a, t.b, u.f"
    sql = f"SELECT {columns} FROM t {join} u ON {condition} WHERE t.c IS NULL OR t.c > 5"
    answer = optimize_wire(sql_to_plan(sql, CATALOG), CATALOG, {"mode": mode})
    con = connect()
    assert rows(con, plan_to_sql(answer["plan"], "duckdb")) == rows(con, spark_to_duckdb(sql))
