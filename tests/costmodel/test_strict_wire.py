"""The wire reader is strict (unknown keys are errors naming path and nearest key) and drops nothing (frames)."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

from costmodel import PlanError, catalog_from_wire, optimize_wire, options_from_wire, plan_from_wire, plan_to_wire
from service.sql import plan_to_sql, sql_to_plan

CATALOG = {"tables": {"e": {"columns": [{"name": "t", "type": "int"}, {"name": "x", "type": "int"}]}}}
CAT = catalog_from_wire(CATALOG)


def _scan(**extra: Any) -> dict[str, Any]:
    return {"op": "scan", "table": "e", **extra}


def _error(plan: Any, catalog: Any = CAT) -> PlanError:
    with pytest.raises(PlanError) as info:
        plan_from_wire(plan, catalog)
    return info.value


def test_misspelt_node_key_names_path_and_nearest_key() -> None:
    err = _error({"op": "filter", "input": _scan(filtres=[])})
    assert err.code == "unknown_key" and err.path == "$.plan.input.filtres"
    assert err.detail["did_you_mean"] == "filters" and "did you mean 'filters'?" in err.message


@pytest.mark.parametrize(
    ("plan", "path", "suggestion"),
    [
        ({"op": "filter", "predicate": {"col": "t", "typo": 1}, "input": _scan()}, "$.plan.predicate.typo", None),
        ({"op": "filter", "predicate": {"lit": 1, "tpye": "int"}, "input": _scan()}, "$.plan.predicate.tpye", "type"),
        (
            {"op": "filter", "predicate": {"fn": "=", "args": [], "distinkt": True}, "input": _scan()},
            "$.plan.predicate.distinkt",
            "distinct",
        ),
        (
            {"op": "sort", "keys": [{"expr": {"col": "t"}, "dsc": True}], "input": _scan()},
            "$.plan.keys[0].dsc",
            "desc",
        ),
        (
            {"op": "project", "exprs": [{"expr": {"col": "t"}, "ass": "u"}], "input": _scan()},
            "$.plan.exprs[0].ass",
            "as",
        ),
        (
            {
                "op": "window",
                "functions": [{"expr": {"fn": "sum", "args": [{"col": "x"}]}, "as": "s", "frame": {"knd": "rows"}}],
                "input": _scan(),
            },
            "$.plan.functions[0].frame.knd",
            "kind",
        ),
        ({"op": "join", "type": "inner", "left": _scan(), "rigth": _scan()}, "$.plan.rigth", "right"),
    ],
)
def test_unknown_keys_anywhere_in_a_plan(plan: Any, path: str, suggestion: str | None) -> None:
    err = _error(plan)
    assert err.code == "unknown_key" and err.path == path
    assert err.detail.get("did_you_mean") == suggestion


def test_unknown_keys_in_catalog_and_options() -> None:
    with pytest.raises(PlanError) as info:
        catalog_from_wire({"tables": {"e": {"columns": ["t"], "row_cout": 5}}})
    assert info.value.path == "$.catalog.tables.e.row_cout" and info.value.detail["did_you_mean"] == "row_count"
    with pytest.raises(PlanError) as info:
        catalog_from_wire({"tables": {"e": {"columns": ["t"], "column_stats": {"t": {"nvd": 3}}}}})
    assert info.value.path == "$.catalog.tables.e.column_stats.t.nvd" and info.value.detail["did_you_mean"] == "ndv"
    with pytest.raises(PlanError) as info:
        catalog_from_wire({"tabels": {}})
    assert info.value.path == "$.catalog.tabels" and info.value.detail["did_you_mean"] == "tables"
    with pytest.raises(PlanError) as info:
        options_from_wire({"mdoe": "cost"})
    assert info.value.path == "$.options.mdoe" and info.value.detail["did_you_mean"] == "mode"


FRAME_PLAN = {
    "op": "window",
    "order_by": [{"expr": {"col": "t"}, "desc": False}],
    "functions": [
        {
            "expr": {"fn": "sum", "args": [{"col": "x"}]},
            "as": "s",
            "frame": {"kind": "rows", "start": "1 preceding", "end": "current row"},
        }
    ],
    "input": _scan(),
}


def test_window_frame_is_read_and_written_back() -> None:
    wire = plan_to_wire(plan_from_wire(FRAME_PLAN, CAT))
    assert wire["functions"][0]["frame"] == {"kind": "rows", "start": "1 preceding", "end": "current row"}
    defaults = {**FRAME_PLAN, "functions": [{**FRAME_PLAN["functions"][0], "frame": {"kind": "RANGE"}}]}
    frame = plan_to_wire(plan_from_wire(defaults, CAT))["functions"][0]["frame"]
    assert frame == {"kind": "range", "start": "unbounded preceding", "end": "current row"}


@pytest.mark.parametrize("bound", ["1 preceeding", "x preceding", "current", 3])
def test_bad_frame_bound_is_refused_with_its_path(bound: Any) -> None:
    bad = {**FRAME_PLAN, "functions": [{**FRAME_PLAN["functions"][0], "frame": {"start": bound}}]}
    assert _error(bad).path == "$.plan.functions[0].frame.start"


def test_window_frame_survives_the_rewrite_on_duckdb() -> None:
    """Issue 18: ``ROWS 1 PRECEDING`` ran as an unbounded frame after the rewrite ((3, 60) instead of (3, 50))."""
    sql = "SELECT t, s FROM (SELECT t, SUM(x) OVER (ORDER BY t ROWS 1 PRECEDING) AS s FROM e) AS w WHERE t = 3"
    con = duckdb.connect()
    con.execute("CREATE TABLE e (t INTEGER, x INTEGER)")
    con.executemany("INSERT INTO e VALUES (?, ?)", [(1, 10), (2, 20), (3, 30), (4, None), (None, 5)])
    plan = sql_to_plan(sql, CATALOG, dialect="duckdb")
    before = con.execute(plan_to_sql(plan, "duckdb")).fetchall()
    for mode in ("cost", "always", "never"):
        rewritten = optimize_wire(plan, CATALOG, {"mode": mode})["plan"]
        assert con.execute(plan_to_sql(rewritten, "duckdb")).fetchall() == before == [(3, 50)]


def test_scan_index_and_columns_come_back_when_fed_back() -> None:
    catalog = {
        "tables": {
            "e": {
                "columns": ["t", "x"],
                "row_count": 1_000_000,
                "column_stats": {"t": {"ndv": 1_000_000}},
                "indexes": [{"name": "by_t", "columns": ["t"]}],
            }
        }
    }
    plan = {"op": "filter", "predicate": {"fn": "=", "args": [{"col": "t"}, {"lit": 7}]}, "input": _scan()}
    out = optimize_wire(plan, catalog)["plan"]
    assert out["index"]["name"] == "by_t"
    assert plan_to_wire(plan_from_wire(out, catalog_from_wire(catalog))) == out
    loose = {"op": "scan", "table": "free", "columns": ["a", "b"]}
    assert plan_to_wire(plan_from_wire(loose, CAT))["columns"] == ["a", "b"]
