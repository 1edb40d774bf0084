"""Scan-level pushdown: container pruning in the plan and cost tables, and Dolt's index access."""

import pytest

from costmodel.explain import explain
from tests.costmodel.dsl import and_, c, filter_, join, project, run, scan, table, tree

COLUMNS = {"id": "int", "name": "string", "state_id": "int", "population": "int", "first_letter": "string"}


def index_decision(result, predicate, operator):
    found = [d for d in result.decisions if d["predicate"] == predicate and d["operator"] == operator and "index" in d]
    assert found, result.decisions
    return found[0]


def dolt_tables():
    cities = table(COLUMNS, rows=20000, state_id={"ndv": 50}, id={"ndv": 20000}, first_letter={"ndv": 20})
    cities["indexes"] = [
        {"name": "PRIMARY", "columns": ["id"], "unique": True},
        {"name": "cfl", "columns": ["first_letter"]},
        {"name": "state_id", "columns": ["state_id"]},
    ]
    states = table(COLUMNS, rows=50, id={"ndv": 50}, first_letter={"ndv": 20})
    states["indexes"] = [
        {"name": "PRIMARY", "columns": ["id"], "unique": True},
        {"name": "sfl", "columns": ["first_letter"]},
    ]
    return {"cities": cities, "states": states}


def dolt_query(join_type="inner"):
    where = and_(c("c.first_letter") == "A", c("s.first_letter") == "A")
    base = join(scan("cities", "c", id="c"), scan("states", "s", id="s"), c("c.state_id") == c("s.id"), type=join_type)
    return project(filter_(base, where), city_name=c("c.name"), state_name=c("s.name"))


def test_dolt_index_is_used_on_cities_not_on_states():
    result = run(dolt_query(), dolt_tables())
    assert explain(result.plan) == tree("""
        Projection: c.name AS city_name, s.name AS state_name
          Inner Join: c.state_id = s.id
            Indexed table access on index [cities.first_letter] TableScan: cities AS c
            TableScan: states AS s filters=[s.first_letter = 'A']
    """)
    assert index_decision(result, "c.first_letter = 'A'", "c")["reason"] == "index_lookup"
    assert index_decision(result, "s.first_letter = 'A'", "s")["reason"] == "index_used_by_join"
    cities = next(n for n in result.after if n.id == "c")
    assert cities.rows_in == pytest.approx(1000)  # 20,000 / 20 first letters fetched, not 20,000 read


def test_dolt_left_join_no_index_on_the_null_supplying_side():
    tables = dolt_tables()
    plan = project(
        filter_(
            join(
                scan("cities", "c", id="c"),
                scan("states", "s", id="s"),
                and_(c("c.state_id") == c("s.id"), c("s.first_letter") == "A"),
                type="left",
            ),
            c("c.first_letter") == "A",
        ),
        city_name=c("c.name"),
    )
    result = run(plan, tables)
    text = explain(result.plan)
    assert "Indexed table access on index [cities.first_letter]" in text
    assert "TableScan: states AS s filters=[s.first_letter = 'A']" in text
    assert index_decision(result, "s.first_letter = 'A'", "s")["reason"] == "null_supplying_side"


def test_index_not_chosen_when_it_fetches_too_much():
    tables = dolt_tables()
    tables["cities"]["column_stats"]["first_letter"] = {"ndv": 1}  # every city starts with A
    result = run(filter_(scan("cities", "c", id="c"), c("c.first_letter") == "A"), tables)
    assert result.plan.index is None
    assert index_decision(result, "c.first_letter = 'A'", "c")["reason"] == "index_not_cheaper"


def test_residual_filters_stay_and_a_composite_index_takes_a_prefix_then_a_range():
    tables = {
        "t": table({"a": "int", "b": "int", "z": "string"}, rows=1_000_000, a={"ndv": 1000}, b={"min": 0, "max": 1000})
    }
    tables["t"]["indexes"] = [{"name": "ab", "columns": ["a", "b"]}]
    plan = filter_(scan("t", id="t"), and_(c("a") == 7, c("b") > 990, c("z").like("x%")))
    result = run(plan, tables)
    assert result.plan.index.index == "ab"
    assert [str(p.fn) for p in result.plan.index.predicates] == ["=", ">"]
    assert explain(result.plan) == "Indexed table access on index [t.a, b] TableScan: t filters=[z LIKE 'x%']"


def containers(*ranges):
    return [
        {"id": f"rg{i}", "row_count": 1000, "column_stats": {"d": {"min": lo, "max": hi, "null_count": 0}}}
        for i, (lo, hi) in enumerate(ranges)
    ]


def test_pruned_containers_leave_the_scan_and_the_cost_tables():
    tables = {"events": table({"d": "int", "v": "int"}, rows=4000, d={"min": 0, "max": 399})}
    tables["events"]["containers"] = containers((0, 99), (100, 199), (200, 299), (300, 399))
    result = run(project(filter_(scan("events", id="e"), c("d") >= 250), v=c("v")), tables)
    wire = result.to_wire()
    (report,) = wire["scans"]
    assert report["containers"]["pruned"] == ["rg0", "rg1"] and report["containers"]["kept"] == ["rg2", "rg3"]
    assert wire["plan"]["input"]["containers"] == ["rg2", "rg3"]
    scan_after = next(n for n in result.after if n.id == "e")
    assert scan_after.rows_in == 2000  # only the kept row groups are read
    assert wire["cost"]["savings"] > 0.4
