"""The seed documents' examples written as SQL decide exactly as their plan form does.

The plan forms are the ones ``tests/costmodel/test_seeds.py`` builds (imported, not
copied). The SQL goes through the service as a caller sends it. SQL puts every WHERE
conjunct into one filter, so decisions are compared per predicate: the operator kind
(ids differ between the two plans), action, reason, and the model's numbers.

Two differences in spelling, none in meaning:

* The adapter qualifies every column (``df2.bar``), the DSL writes ``bar``; each case
  lists the qualifiers to drop before comparing predicate text.
* The HAVING seed aggregates ``array_agg(DISTINCT country)``. The adapter refuses Spark's
  ``array_agg`` (sqlglot marks it ``nulls_excluded``, which the wire cannot carry), so the
  SQL uses ``collect_set(country)``, the same distinct array; the aggregate function does
  not enter the decision (the aggregate's constant and row counts do).

Not written as SQL: the Polars ``vals > min(vals)`` boundary (an aggregate in WHERE is
invalid SQL) and the UDF case (SQL has no way to declare a UDF's per-row cost).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from service.optimize import OptimizeInput, OptimizeService
from tests.costmodel import test_seeds as seeds
from tests.costmodel.dsl import and_, c, filter_, join, or_, project, run, scan

LIKE_A_OR_NULL = and_(c("c.name").like("A%"), or_(c("s.name").like("A%"), c("s.name").is_null()))


@dataclass(frozen=True)
class Case:
    plan: dict[str, Any]
    tables: dict[str, Any]
    sql: str
    options: dict[str, Any] = field(default_factory=dict)
    unqualify: tuple[str, ...] = ()


CASES: dict[str, Case] = {
    "polars join, three predicates, always": Case(
        filter_(
            filter_(
                filter_(join(scan("df1"), scan("df2"), c("idx1") == c("idx2")), c("bar") == 5),
                c("foo") == "abc",
            ),
            (c("a") + c("b")) > 12,
        ),
        seeds.POLARS_TABLES,
        "SELECT * FROM df1 JOIN df2 ON idx1 = idx2 WHERE bar = 5 AND foo = 'abc' AND a + b > 12",
        {"mode": "always"},
        ("df1", "df2"),
    ),
    "polars join, three predicates, cost": Case(
        filter_(
            join(scan("df1"), scan("df2"), c("idx1") == c("idx2")),
            and_(c("bar") == 5, c("foo") == "abc", (c("a") + c("b")) > 12),
        ),
        seeds.POLARS_TABLES,
        "SELECT * FROM df1 JOIN df2 ON idx1 = idx2 WHERE bar = 5 AND foo = 'abc' AND a + b > 12",
        unqualify=("df1", "df2"),
    ),
    "having major = 'CS'": Case(
        seeds.having_plan(),
        seeds.STUDENTS,
        "SELECT major, collect_set(country) AS countries FROM student_table GROUP BY major HAVING major = 'CS'",
        unqualify=("student_table",),
    ),
    "having major = 'CS', no scan pushdown": Case(
        seeds.having_plan(),
        seeds.STUDENTS,
        "SELECT major, collect_set(country) AS countries FROM student_table GROUP BY major HAVING major = 'CS'",
        {"scan_pushdown": False},
        ("student_table",),
    ),
    "dolt cities and states": Case(
        seeds.dolt_query(),
        seeds.CITIES,
        "SELECT c.name AS city_name, s.name AS state_name FROM cities c JOIN states s ON c.state_id = s.id "
        "WHERE c.name LIKE 'A%' AND s.name LIKE 'A%'",
        {"scan_pushdown": False},
    ),
    "dolt cities and states, comma join": Case(
        project(
            filter_(
                join(scan("cities", "c"), scan("states", "s"), type="cross"),
                and_(c("c.name").like("A%"), c("s.name").like("A%")),
            ),
            city_name=c("c.name"),
        ),
        seeds.CITIES,
        "SELECT c.name AS city_name FROM cities c, states s WHERE c.name LIKE 'A%' AND s.name LIKE 'A%'",
    ),
    "dolt left join, right-side predicate keeps NULLs": Case(
        seeds.dolt_query("left", LIKE_A_OR_NULL),
        seeds.CITIES,
        "SELECT c.name AS city_name, s.name AS state_name FROM cities c LEFT JOIN states s ON c.state_id = s.id "
        "WHERE c.name LIKE 'A%' AND (s.name LIKE 'A%' OR s.name IS NULL)",
        {"scan_pushdown": False},
    ),
    "dolt left join whose WHERE rejects NULLs": Case(
        seeds.dolt_query("left"),
        seeds.CITIES,
        "SELECT c.name AS city_name, s.name AS state_name FROM cities c LEFT JOIN states s ON c.state_id = s.id "
        "WHERE c.name LIKE 'A%' AND s.name LIKE 'A%'",
        {"scan_pushdown": False},
    ),
}

NUMBERS = ("p", "r", "r1", "lhs", "rhs")


def _summary(
    decisions: list[dict[str, Any]], kinds: dict[str, str], unqualify: tuple[str, ...]
) -> list[tuple[Any, ...]]:
    """(predicate, operator kind, action, reason, numbers) per decision, in the engine's order."""
    drop = re.compile(rf"\b(?:{'|'.join(map(re.escape, unqualify))})\.") if unqualify else None
    out = []
    for d in decisions:
        text = drop.sub("", d["predicate"]) if drop else d["predicate"]
        numbers = tuple(None if d.get(k) is None else round(d[k], 9) for k in NUMBERS)
        out.append((text, kinds[d["operator"]], d["action"], d["reason"], numbers))
    return out


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_sql_gives_the_plan_forms_decisions(case: Case) -> None:
    planned = run(case.plan, case.tables, **case.options)
    expected = _summary(planned.decisions, {n.id: n.operator for n in planned.before}, case.unqualify)
    assert expected, "the plan form decides nothing: nothing to compare"
    answer = OptimizeService().optimize(
        OptimizeInput(sql=case.sql, catalog={"tables": case.tables}, dialect="spark", options=case.options or None)
    )
    kinds = {n["id"]: n["operator"] for n in answer["cost"]["before"]["nodes"]}
    assert _summary(answer["decisions"], kinds, case.unqualify) == expected
    assert [r["rule"] for r in answer["rewrites"]] == [r["rule"] for r in planned.rewrites]
    # A comma join is a cross join under a filter as written: the service says its savings overstate the gain.
    assert [w for w in answer["warnings"] if "has a cross product" not in w] == []


def test_every_seed_outcome_is_covered() -> None:
    """The SQL forms reach each reason the seed tests check for these examples."""
    reasons = set()
    for case in CASES.values():
        answer = OptimizeService().optimize(
            OptimizeInput(sql=case.sql, catalog={"tables": case.tables}, options=case.options or None)
        )
        reasons |= {(d["action"], d["reason"]) for d in answer["decisions"]}
    assert {
        ("pushed", "beneficial"),
        ("pushed", "mode_always"),
        ("pushed", "into_scan"),
        ("blocked", "references_both_sides"),
        ("blocked", "null_supplying_side"),
    } <= reasons
