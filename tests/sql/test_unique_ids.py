"""Node ids are unique across the whole answer, subquery plans included (issue 16's remaining gap).

Each subquery plan is optimized on its own, and a predicate holding a subquery
that lands in several union branches carries a copy of that plan into each;
before, both gave repeated ids (``f1`` minted in the outer plan and in the
subquery, ``n3`` in each copy). The rewritten query still returns the same rows.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from costmodel import optimize_wire
from service.sql import plan_to_sql, sql_to_plan
from tests.sql.helpers import CATALOG, connect, rows

BRANCHES = (
    "SELECT x.a FROM (SELECT a, count(*) AS c FROM t GROUP BY a UNION ALL "
    "SELECT a, count(*) AS c FROM u GROUP BY a) x WHERE x.c > 1"
)
INNER = BRANCHES.replace("x.", "y.").replace(") x", ") y")
QUERIES = {
    "subquery copied into two branches": f"{BRANCHES} AND x.a IN ({INNER})",
    "new filters outside and inside": f"{BRANCHES} AND EXISTS ({INNER} AND y.a = x.a)",
}
TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"


def _node_ids(plan: Any) -> list[str]:
    found: list[str] = []
    stack = [plan]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if "op" in value and isinstance(value.get("id"), str):
                found.append(value["id"])
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


@pytest.mark.parametrize("mode", ["always", "cost"])
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_ids_are_unique_and_rows_unchanged(name: str, mode: str) -> None:
    sql = QUERIES[name]
    answer = optimize_wire(sql_to_plan(sql, CATALOG), CATALOG, {"mode": mode})
    ids = _node_ids(answer["plan"])
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    con = connect()
    duck = plan_to_sql(answer["plan"], "duckdb")
    assert rows(con, duck) == rows(con, plan_to_sql(sql_to_plan(sql, CATALOG), "duckdb"))


def test_the_repeated_case_really_repeats_a_subquery() -> None:
    # guard for the test above: the optimizer does copy the subquery into both branches
    plan = sql_to_plan(QUERIES["subquery copied into two branches"], CATALOG)
    answer = optimize_wire(plan, CATALOG, {"mode": "always"})
    text = json.dumps(answer["plan"])
    assert text.count('"subquery"') == 2


@pytest.mark.parametrize("path", sorted((TPCH / "queries").glob("q*.sql")), ids=lambda p: p.stem)
def test_tpch_answers_have_unique_ids(path: Path) -> None:
    catalog = json.loads((TPCH / "catalog.json").read_text())
    answer = optimize_wire(sql_to_plan(path.read_text(), catalog), catalog)
    ids = _node_ids(answer["plan"])
    assert len(ids) == len(set(ids))
