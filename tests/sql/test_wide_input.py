"""Wide and deep SQL: answered without deep recursion, or refused by name.

The adapter balances AND/OR and UNION chains before anything walks them, so a
20,000-term predicate or a 2,000-branch union needs no more than Python's
default recursion limit; nesting that cannot be balanced is refused with
``too_deep``. Times are bench/sql_linearity.py's business, not these tests'.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlglot.dialects.dialect import Dialect

from service.sql import SqlError, plan_to_sql, sql_to_plan
from service.sql.limits import MAX_DEPTH, MAX_NESTING, check_nesting, may_nest_too_deep
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
    assert err.value.code == "too_deep"
    assert err.value.detail == {"limit": MAX_NESTING}
    assert (err.value.line, err.value.column) == (1, 22 + MAX_NESTING + 1)  # the first parenthesis too many


def _under(frames: int, fn: Callable[[], Any]) -> Any:
    """``fn()`` called ``frames`` Python frames deep: the stack a server has already used."""
    return fn() if frames == 0 else _under(frames - 1, fn)


NESTED: dict[str, Callable[[int], str]] = {
    "parentheses": lambda n: "SELECT a FROM t WHERE " + "(" * n + "c = 1" + ")" * n,
    "function calls": lambda n: "SELECT " + "abs(" * n + "c" + ")" * n + " AS x FROM t",
    "subqueries": lambda n: (
        "SELECT a FROM t WHERE c IN " + "(SELECT c FROM t WHERE c IN " * (n - 1) + "(1)" + ")" * (n - 1)
    ),
    "CASE": lambda n: "SELECT " + "CASE WHEN c = 1 THEN " * n + "1" + " END" * n + " AS x FROM t",
    "NOT": lambda n: "SELECT a FROM t WHERE " + "NOT " * n + "c = 1",
    "unary minus": lambda n: "SELECT " + "- " * n + "c AS x FROM t",
}


@pytest.mark.parametrize("form", sorted(NESTED))
def test_nesting_up_to_the_limit_is_answered_under_the_default_recursion_limit(
    form: str, default_recursion_limit: None
) -> None:
    sql = NESTED[form](MAX_NESTING)
    text = _under(150, lambda: plan_to_sql(sql_to_plan(sql, CATALOG), "spark"))
    assert text.startswith("SELECT")
    with pytest.raises(SqlError) as err:
        sql_to_plan(NESTED[form](MAX_NESTING + 1), CATALOG)
    assert err.value.code == "too_deep" and err.value.detail == {"limit": MAX_NESTING}


def test_huge_nesting_is_refused_without_a_recursion_error(default_recursion_limit: None) -> None:
    for form in ("NOT", "unary minus", "parentheses"):
        with pytest.raises(SqlError) as err:
            sql_to_plan(NESTED[form](200_000), CATALOG)
        assert err.value.code == "too_deep", form


def test_a_long_chain_of_additions_is_answered_up_to_the_depth_limit(default_recursion_limit: None) -> None:
    # '+' is not associative for decimals and doubles (types, rounding), so the chain is not balanced: its
    # length is bounded by MAX_DEPTH instead, and a longer one is refused by name.
    terms = MAX_DEPTH - 10
    sql = "SELECT " + " + ".join(["c"] * terms) + " AS x FROM t"
    text = _under(150, lambda: plan_to_sql(sql_to_plan(sql, CATALOG), "spark"))
    assert text.count("+") == terms - 1
    with pytest.raises(SqlError) as err:
        sql_to_plan("SELECT " + " + ".join(["c"] * 20_000) + " AS x FROM t", CATALOG)
    assert err.value.code == "too_deep" and err.value.detail == {"limit": MAX_DEPTH}


def test_500_joins_3000_union_branches_and_100000_in_items(default_recursion_limit: None) -> None:
    joins = "SELECT t0.a FROM t t0 " + " ".join(f"JOIN t t{i} ON t{i - 1}.a = t{i}.a" for i in range(1, 501))
    assert plan_to_sql(sql_to_plan(joins, CATALOG)).count("JOIN") == 500
    unions = " UNION ALL ".join(f"SELECT a FROM t WHERE c > {i}" for i in range(3000))
    assert len(sql_to_plan(unions, CATALOG)["inputs"]) == 3000
    items = "SELECT a FROM t WHERE b IN (" + ", ".join(f"'v{i}'" for i in range(100_000)) + ")"
    plan = sql_to_plan(items, CATALOG)
    assert len(plan["input"]["predicate"]["args"]) == 100_001
    assert plan_to_sql(plan).count("'v") == 100_000


def test_the_nesting_bound_from_the_text_never_skips_a_query_too_deep_to_parse() -> None:
    """``may_nest_too_deep`` lets the parser skip ``check_nesting``'s token walk: it must say True wherever the
    walk would refuse the query (random mixes of every token that opens a level or is a prefix operator)."""
    rng = random.Random(5)
    opening = ["(", "[", "NOT ", "- ", "+", "~", "!", "CASE WHEN "]
    other = [")", "]", " END", "a", " = 1", ", ", "a - ", "'(((' "]
    refused = 0
    for dialect in ("spark", "duckdb", "postgres", "snowflake"):
        tokenizer = Dialect.get_or_raise(dialect).tokenizer_class
        for _ in range(300):
            share, openers = (
                rng.random(),
                rng.choice([opening, ["NOT ", "CASE WHEN "], ["CASE WHEN ", "a + CASE WHEN "]]),
            )
            parts = [rng.choice(openers if rng.random() < share else other) for _ in range(rng.randint(1, 150))]
            text = "SELECT " + "".join(parts)
            try:
                tokens = tokenizer().tokenize(text)
            except Exception:  # noqa: BLE001 - text the tokenizer refuses is not this test's business
                continue
            try:
                check_nesting(tokens)
            except SqlError:
                refused += 1
                assert may_nest_too_deep(text, tokenizer), (dialect, text)
    assert refused > 50  # the walk did refuse many of them: the bound was put to the test
