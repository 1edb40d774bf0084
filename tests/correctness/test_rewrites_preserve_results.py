"""Rewrites never change results: random plans, original and rewritten, executed on DuckDB and compared.

A bounded campaign runs here (CI); bench/differential.py runs the long one.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import duckdb
import pytest

from costmodel import optimize_wire
from service.sql import plan_to_sql
from tests.correctness.plangen import TABLES, PlanGenerator, catalog, make_rows
from tests.correctness.shrink import save_regression, shrink

PLANS = 300
#: rule-based pushdown; placement by cost as the service runs it; and every predicate placed by cost, cheap ones too,
#: so that predicates also rise above where the query wrote them (``expensive_threshold`` 0)
OPTIONS: dict[str, dict[str, Any]] = {
    "always": {"mode": "always"},
    "cost": {"mode": "cost"},
    "cost_all": {"mode": "cost", "expensive_threshold": 0},
}
MODES = tuple(OPTIONS)
#: every predicate expensive and placed by cost: run over plans whose predicates are all written as deep as legal
#: (rule-based pushdown's output), so that the ones above a reducing operator pay to rise
RISING: dict[str, Any] = {
    "mode": "cost",
    "expensive_threshold": 0,
    "predicate_costs": {"comparison": 1000, "like": 1000, "function": 1000, "arithmetic": 1000},
}


def _load(rows: dict[str, list[tuple[Any, ...]]]) -> duckdb.DuckDBPyConnection:
    """DuckDB with its own optimizer off: each plan runs as written, so a cast that raises does so where
    the plan puts it, not where DuckDB's filter pushdown and reordering happen to move it."""
    con = duckdb.connect()
    con.execute("PRAGMA disable_optimizer")
    for name, columns in TABLES.items():
        cols = ", ".join(f"{c} {'INTEGER' if t == 'int' else 'VARCHAR'}" for c, t in columns)
        con.execute(f"CREATE TABLE {name} ({cols})")
        marks = ", ".join("?" for _ in columns)
        con.executemany(f"INSERT INTO {name} VALUES ({marks})", rows[name])
    return con


def _multiset(con: duckdb.DuckDBPyConnection, plan: dict[str, Any], cat: dict[str, Any]) -> Counter:
    """The rows as a multiset, with the columns' names and types in order as one more element; a query that
    raises (a cast of a non-number) is the outcome "error"."""
    sql = plan_to_sql(plan, "duckdb", catalog=cat)
    try:
        cursor = con.execute(sql)
        rows = Counter(cursor.fetchall())
        rows[("columns", tuple((d[0], str(d[1])) for d in cursor.description))] = 1
        return rows
    except duckdb.ConversionException:
        return Counter({"error": 1})


def agrees(original: Counter, rewritten: Counter) -> bool:
    """Same rows; or the original raised (a rewrite may avoid an error, never add one)."""
    return rewritten == original or original == Counter({"error": 1})


@pytest.fixture(scope="module")
def world():
    rng = random.Random(20261122)
    rows = {name: make_rows(rng, name, 30) for name in TABLES}
    return _load(rows), catalog(rows), rows


@pytest.mark.parametrize("seed", range(PLANS))
def test_rewritten_plan_returns_the_same_rows(world, seed):
    con, cat, rows = world
    plan = PlanGenerator(random.Random(seed)).query()
    expected = _multiset(con, plan, cat)
    for mode in MODES:
        result = optimize_wire(plan, cat, OPTIONS[mode])
        got = _multiset(con, result["plan"], cat)
        if not agrees(expected, got):

            def fails(candidate, mode=mode):
                before = _multiset(con, candidate, cat)
                return not agrees(before, _multiset(con, optimize_wire(candidate, cat, OPTIONS[mode])["plan"], cat))

            small = shrink(plan, cat, fails)
            saved = save_regression(small, {"rows": rows}, f"seed {seed}, mode {mode}")
            shrunk = optimize_wire(small, cat, OPTIONS[mode])
            pytest.fail(
                f"mode={mode} changed the result; shrunk case saved to {saved}\n--- before\n"
                f"{shrunk['explain']['before']}\n--- after\n{shrunk['explain']['after']}\nrewrites={shrunk['rewrites']}"
            )


@pytest.mark.parametrize("seed", range(PLANS))
def test_a_predicate_pulled_up_returns_the_same_rows(world, seed):
    """Predicates written early (every one as deep as legal) and placed again by cost when each is expensive:
    those above a reducing operator rise; the rows, names and types stay."""
    con, cat, _ = world
    early = optimize_wire(PlanGenerator(random.Random(seed)).query(), cat, {"mode": "always"})["plan"]
    expected = _multiset(con, early, cat)
    result = optimize_wire(early, cat, RISING)
    assert agrees(expected, _multiset(con, result["plan"], cat)), (
        f"pulling up changed the result\n--- before\n{result['explain']['before']}\n--- after\n"
        f"{result['explain']['after']}\n{[d for d in result['decisions'] if d.get('action') == 'pulled_up']}"
    )


def test_the_campaign_moves_predicates_up(world):
    """The campaign above exercises pulling up: in at least 10 of its plans some predicate rises."""
    _, cat, _ = world
    risen = 0
    for seed in range(PLANS):
        early = optimize_wire(PlanGenerator(random.Random(seed)).query(), cat, {"mode": "always"})["plan"]
        answer = optimize_wire(early, cat, RISING)
        risen += any(d.get("action") == "pulled_up" for d in answer["decisions"])
    assert risen >= 10, risen
