"""Generated SQL through the adapter and back: no field lost, no result changed, every kind and field reached.

``ROUNDTRIP_QUERIES`` (default: two per generator feature, ~100, well under a minute) and ``ROUNDTRIP_SEED`` set
the size and the queries; bench/sql_roundtrip.py runs the same check at bench size and writes its figures.
What each query goes through is in tests/roundtrip/check.py; the facts compared are in tests/roundtrip/facts.py.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import duckdb
import pytest

from service.sql import sql_to_plan
from tests.roundtrip import check as check_module
from tests.roundtrip.check import Checked, check
from tests.roundtrip.facts import NOT_FROM_SQL, NOT_FROM_SQL_FIELDS, Fact, missing, required_facts
from tests.roundtrip.schema import CATALOG, connect
from tests.roundtrip.sqlgen import FEATURES, HINTS, QueryGen

QUERIES = int(os.environ.get("ROUNDTRIP_QUERIES", 2 * len(FEATURES)))
SEED = int(os.environ.get("ROUNDTRIP_SEED", "2026"))


def generated(count: int, seed: int) -> Iterator[str]:
    """``count`` queries, going through the generator's features in turn."""
    gen = QueryGen(seed)
    for i in range(count):
        yield gen.query(FEATURES[i % len(FEATURES)])


def check_all(queries: Iterator[str], con: duckdb.DuckDBPyConnection) -> list[Checked]:
    out = []
    for sql in queries:
        try:
            out.append(check(sql, con))
        except Exception as exc:  # an error on a valid query is a finding too: keep going, report it
            out.append(Checked(sql, [f"{type(exc).__name__}: {exc}"]))
    return out


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    return connect()


@pytest.fixture(scope="module")
def checked(con: duckdb.DuckDBPyConnection) -> list[Checked]:
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # "Hints are not supported" for every DuckDB transpile
    return check_all(generated(QUERIES, SEED), con)


def _report(bad: list[Checked]) -> str:
    return "\n\n".join(f"{c.sql}\n" + "\n".join(f"  - {p}" for p in c.problems) for c in bad[:5])


def test_no_trip_loses_a_field_or_changes_a_result(checked: list[Checked]) -> None:
    bad = [c for c in checked if c.problems]
    assert not bad, f"{len(bad)} of {len(checked)} queries:\n{_report(bad)}"


def test_every_kind_and_field_was_generated(checked: list[Checked]) -> None:
    seen: Counter[Fact] = sum((c.facts for c in checked), Counter())
    assert not missing(required_facts(), seen), "never generated (make the generator reach them)"
    hinted = {hint.split("(")[0] for c in checked for hint in check_module.hints(c.sql)}
    assert hinted >= {*HINTS, "REPARTITION", "COALESCE"}, "hints never generated"


def test_the_fields_sql_cannot_carry_are_listed_truthfully(checked: list[Checked]) -> None:
    """What NOT_FROM_SQL(_FIELDS) says the adapter never writes, it never writes; scan filters come from the engine."""
    adapter = {f[:2] for c in checked for f in c.facts}
    kinds = {f[1] for c in checked for f in c.facts if f[0] == "node"}
    assert not set(NOT_FROM_SQL) & kinds
    assert not set(NOT_FROM_SQL_FIELDS) & adapter, "the adapter writes these now: take them off the list"
    engine = {f[:2] for c in checked for f in c.engine_facts}
    assert ("scan", "filters") in engine, "the engine never moved a predicate into a scan"


def test_the_check_notices_a_renderer_that_drops_window_frames(
    monkeypatch: pytest.MonkeyPatch, con: duckdb.DuckDBPyConnection
) -> None:
    """The check is real: a renderer losing frames (the bug that made this generator) fails it twice over."""
    render = check_module.plan_to_sql

    def without_frames(plan: dict[str, Any], *args: Any, **kwargs: Any) -> str:
        def strip(node: Any) -> Any:
            if isinstance(node, dict):
                return {k: strip(v) for k, v in node.items() if k != "frame"}
            return [strip(v) for v in node] if isinstance(node, list) else node

        return render(strip(plan), *args, **kwargs)

    monkeypatch.setattr(check_module, "plan_to_sql", without_frames)
    sql = "SELECT t1.id AS i, sum(t1.x) OVER (ORDER BY t1.id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS w FROM t1"
    problems = check(sql, con).problems
    assert any("lost {('window', 'frame.kind', 'rows')" in p for p in problems), problems
    assert any("rows differ" in p for p in problems), problems


def test_a_duckdb_frame_regression_query_round_trips(con: duckdb.DuckDBPyConnection) -> None:
    """The issue's case: ``SUM(x) OVER (ORDER BY t ROWS 1 PRECEDING)`` keeps its frame through every trip."""
    sql = "SELECT t1.id AS t, sum(t1.x) OVER (ORDER BY t1.id ROWS 1 PRECEDING) AS total FROM t1 WHERE t1.k = 1"
    result = check(sql, con)
    assert not result.problems
    assert result.facts[("window", "frame.start", "N preceding")] == 1


def test_a_one_key_grouping_set_reads_back(con: duckdb.DuckDBPyConnection) -> None:
    """Found by the generator: the renderer writes CUBE (k) as GROUPING SETS ((k), ()), and ``(k)`` was read as a
    key of its own (a parenthesised expression), so the rendered SQL was refused."""
    sql = "SELECT t3.k AS g, count(*) AS n, sum(t3.x) AS total FROM t3 GROUP BY CUBE (t3.k)"
    result = check(sql, con)
    assert not result.problems
    assert result.facts[("aggregate", "grouping_sets", "[[0], []]")] == 1


WINDOW_NAME_CLASHES = {
    "the issue's case": "SELECT a.w AS c, count(*) OVER (PARTITION BY a.k) AS w "
    "FROM (SELECT t1.k AS k, t1.x AS w FROM t1) AS a",
    "the clashing column is not selected": "SELECT a.k, count(*) OVER () AS w "
    "FROM (SELECT t1.k AS k, t1.x AS w FROM t1) a",
    "a table column, other case": "SELECT t1.x AS c, rank() OVER (PARTITION BY t1.k ORDER BY t1.id) AS X FROM t1",
    "over an aggregate, named like a group key": "SELECT t2.k AS g, sum(t2.x) AS s, "
    "rank() OVER (ORDER BY sum(t2.x) DESC, t2.k) AS k FROM t2 GROUP BY t2.k",
    "two windows, the second named like the first's input": "SELECT t1.id, "
    "sum(t1.x) OVER (PARTITION BY t1.k ORDER BY t1.id ROWS 1 PRECEDING) AS n, "
    "count(*) OVER (PARTITION BY t1.s) AS id FROM t1",
    "ordered by the clashing output": "SELECT a.w AS c, count(*) OVER (PARTITION BY a.k) AS w "
    "FROM (SELECT t1.k AS k, t1.x AS w, t1.id AS id FROM t1) AS a ORDER BY w, a.id",
}


@pytest.mark.parametrize("sql", WINDOW_NAME_CLASHES.values(), ids=WINDOW_NAME_CLASHES.keys())
def test_a_window_output_may_share_a_name_with_an_input_column(sql: str, con: duckdb.DuckDBPyConnection) -> None:
    """Found by the generator: the window's output was named like its input's column, so the project above read an
    ambiguous name (422 ambiguous_column for valid SQL). Same rows, names, order and types on every trip."""
    result = check(sql, con)
    assert not result.problems, result.problems
    assert result.facts[("node", "window", "")] >= 1


COMPOSITE_GROUPING = {
    "rollup": "SELECT t1.k AS k, t1.x AS x, t1.s AS s, count(*) AS n, sum(t1.n) AS total "
    "FROM t1 GROUP BY ROLLUP ((t1.k, t1.x), t1.s)",
    "cube": "SELECT t2.k AS k, t2.x AS x, t2.s AS s, count(*) AS n, grouping_id() AS g "
    "FROM t2 GROUP BY CUBE ((t2.k, t2.x), t2.s)",
}


@pytest.mark.parametrize("sql", COMPOSITE_GROUPING.values(), ids=COMPOSITE_GROUPING.keys())
def test_composite_grouping_elements_round_trip(sql: str, con: duckdb.DuckDBPyConnection) -> None:
    """``ROLLUP ((a, b), c)`` groups a and b together: same rows, names and types on every trip."""
    result = check(sql, con)
    assert not result.problems, result.problems
    assert result.facts[("node", "aggregate", "")] == 1


#: A filter over a grouping-sets aggregate that must stay above it (ROLLUP has the empty set): rendered as HAVING,
#: Spark failed to resolve the key beside GROUPING() (found by tests/roundtrip/test_spark_binds.py, seed 11).
GROUPING_SET_FILTERS = {
    "key and grouping()": "SELECT a.g1 AS c1, a.m AS c2 FROM (SELECT a.s AS g1, grouping(a.s) AS m FROM t3 AS a "
    "GROUP BY ROLLUP (a.s)) AS a WHERE (a.m < 1 OR a.m = 5) AND a.g1 LIKE 'a%'",
    "key and count": "SELECT a.g1, a.n FROM (SELECT t2.k AS g1, count(*) AS n FROM t2 GROUP BY CUBE (t2.k)) AS a "
    "WHERE a.n > 1 AND a.g1 > 0",
}


@pytest.mark.parametrize("sql", GROUPING_SET_FILTERS.values(), ids=GROUPING_SET_FILTERS.keys())
def test_a_filter_over_grouping_sets_round_trips(sql: str, con: duckdb.DuckDBPyConnection) -> None:
    result = check(sql, con)
    assert not result.problems, result.problems


def test_unary_minus_reaches_the_engine(con: duckdb.DuckDBPyConnection) -> None:
    """``-x`` is the engine's ``neg`` (its ``-`` takes two arguments: the plan was refused with 422 before)."""
    sql = "SELECT t1.id AS i, -t1.x AS nx, -(t1.n + 1) AS nn FROM t1 WHERE -t1.k < 0"
    result = check(sql, con)
    assert not result.problems, result.problems
    assert '"fn": "neg"' in json.dumps(sql_to_plan(sql, CATALOG))


def test_a_computed_group_key_named_like_a_grouped_column_reads_back(con: duckdb.DuckDBPyConnection) -> None:
    """Found by the generator (seed 25): ``GROUP BY d.g2, CASE ... END`` with the CASE selected ``AS g2`` named the
    computed key ``g2`` beside the grouped column ``d.g2``, so the column above read ``g2`` ambiguously and the
    translated plan was refused. The key now takes a name of its own; the result is the query's."""
    sql = (
        "SELECT d.g2 AS g1, CASE WHEN d.n > 1 THEN 'hi' ELSE 'lo' END AS G2, min(d.g1) AS m FROM "
        "(SELECT t3.k AS g1, t3.s AS g2, count(*) AS n FROM t3 GROUP BY t3.k, t3.s) AS d "
        "GROUP BY d.g2, CASE WHEN d.n > 1 THEN 'hi' ELSE 'lo' END ORDER BY g1, G2, m"
    )
    assert not check(sql, con).problems  # before: PlanError, column 'g2' is ambiguous
