"""``map_expressions`` reaches every expression of every kind: a subquery is decided wherever it stands."""

from __future__ import annotations

from costmodel import optimize_wire
from service.sql import sql_to_plan

CATALOG = {
    "tables": {
        "t": {"columns": [{"name": "a", "type": "int"}]},
        "u": {"columns": [{"name": "a", "type": "int"}, {"name": "d", "type": "int"}]},
        "w": {"columns": [{"name": "a", "type": "int"}]},
    }
}
SUBQUERY = "(SELECT max(u.a) FROM u JOIN w ON u.a = w.a WHERE u.d > 5)"


def decided(sql: str) -> list[tuple[str, str]]:
    answer = optimize_wire(sql_to_plan(sql, CATALOG, "spark"), CATALOG)
    return sorted((d["predicate"], d["action"]) for d in answer["decisions"])


def test_a_subquery_inside_a_generator_is_decided_as_in_a_filter():
    in_generator = decided(f"SELECT t.a, e.x FROM t LATERAL VIEW explode(array({SUBQUERY})) e AS x")
    in_filter = decided(f"SELECT t.a FROM t WHERE t.a = {SUBQUERY}")
    inner = [row for row in in_filter if row[0] == "u.d > 5"]
    assert inner and [row for row in in_generator if row[0] == "u.d > 5"] == inner
