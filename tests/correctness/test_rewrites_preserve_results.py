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
    """The rows as a multiset; a query that raises (a cast of a non-number) is the outcome "error"."""
    sql = plan_to_sql(plan, "duckdb", catalog=cat)
    try:
        return Counter(con.execute(sql).fetchall())
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
    for mode in ("always", "cost"):
        result = optimize_wire(plan, cat, {"mode": mode})
        got = _multiset(con, result["plan"], cat)
        if not agrees(expected, got):

            def fails(candidate, mode=mode):
                before = _multiset(con, candidate, cat)
                return not agrees(before, _multiset(con, optimize_wire(candidate, cat, {"mode": mode})["plan"], cat))

            small = shrink(plan, cat, fails)
            saved = save_regression(small, {"rows": rows}, f"seed {seed}, mode {mode}")
            shrunk = optimize_wire(small, cat, {"mode": mode})
            pytest.fail(
                f"mode={mode} changed the result; shrunk case saved to {saved}\n--- before\n"
                f"{shrunk['explain']['before']}\n--- after\n{shrunk['explain']['after']}\nrewrites={shrunk['rewrites']}"
            )
