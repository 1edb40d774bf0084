"""Wide and deep SQL: answered without deep recursion, or refused by name.

The adapter balances AND/OR and UNION chains before anything walks them, so a
20,000-term predicate or a 2,000-branch union needs no more than Python's
default recursion limit; nesting that cannot be balanced is refused with
``too_deep``. Times are bench/sql_linearity.py's business, not these tests'.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from service.sql import SqlError, plan_to_sql, sql_to_plan
from tests.sql.helpers import CATALOG


@pytest.fixture
def default_recursion_limit() -> Iterator[None]:
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def test_20000_or_terms(default_recursion_limit: None) -> None:
    sql = "SELECT a FROM t WHERE " + " OR ".join(f"c = {i}" for i in range(20000))
    plan = sql_to_plan(sql, CATALOG)
    assert len(plan["input"]["predicate"]["args"]) == 20000
    text = plan_to_sql(plan, "spark")
    assert text.count(" OR ") == 19999


def test_and_chain_keeps_its_terms_in_order(default_recursion_limit: None) -> None:
    sql = "SELECT a FROM t WHERE " + " AND ".join(f"c <> {i}" for i in range(5000))
    args = sql_to_plan(sql, CATALOG)["input"]["predicate"]["args"]
    assert [a["args"][1]["lit"] for a in args] == list(range(5000))


def test_2000_union_branches(default_recursion_limit: None) -> None:
    sql = " UNION ALL ".join(f"SELECT a FROM t WHERE c > {i}" for i in range(2000))
    plan = sql_to_plan(sql, CATALOG)
    assert plan["op"] == "union" and len(plan["inputs"]) == 2000
    assert plan_to_sql(plan, "duckdb").count("UNION ALL") == 1999


def test_mixed_union_chain_keeps_its_grouping() -> None:
    # UNION (distinct) over a UNION ALL is not associative with it: the chain must not merge
    sql = "SELECT a FROM t UNION ALL SELECT a FROM t UNION SELECT c FROM t UNION ALL SELECT a FROM u"
    plan = sql_to_plan(sql, CATALOG)
    assert plan["op"] == "union" and plan["all"] is True
    assert plan["inputs"][0]["op"] == "union" and plan["inputs"][0]["all"] is False


def test_unbalanceable_nesting_is_refused_by_name(default_recursion_limit: None) -> None:
    sql = "SELECT a FROM t WHERE " + "(" * 3000 + "c = 1" + ")" * 3000
    with pytest.raises(SqlError) as err:
        sql_to_plan(sql, CATALOG)
    assert err.value.code in ("too_deep", "parse_error")
