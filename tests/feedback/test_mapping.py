"""The mapping onto the answer's plan, on plan graphs as Spark 4 prints them (fixtures): exact or unmapped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pushdown_client.feedback.graph import SparkGraph, TableSource, attribute_names, not_null_column, split_conjuncts
from pushdown_client.feedback.mapping import map_actuals, never_null_columns, same_predicates

FIXTURES = Path(__file__).parent / "fixtures"


def sources(case: dict[str, Any]) -> dict[str, TableSource]:
    """The fixture's tables, located by where they are (their columns not given)."""
    return {name: TableSource(identity) for name, identity in case["identities"].items()}


def test_conditions_split_at_top_level_ands_only() -> None:
    assert split_conjuncts("((isnotnull(b#6) AND (b#6 > 5)) AND ((a#1 = 1) OR (a#1 = 2)))") == [
        "isnotnull(b#6)",
        "(b#6 > 5)",
        "((a#1 = 1) OR (a#1 = 2))",
    ]
    assert split_conjuncts("(b#6 > 5)") == ["(b#6 > 5)"]
    assert not_null_column("isnotnull(b#6L)") == "b"
    assert not_null_column("(b#6 > 5)") is None
    assert attribute_names("(a#5 < ReusedSubquery Subquery subquery#10, [id=#80])") == {"a"}


def test_same_predicates_allows_only_the_nulls_the_predicates_reject() -> None:
    ours = [{"fn": ">", "args": [{"col": "t.b"}, {"lit": 5, "type": "int"}]}]
    assert same_predicates(ours, "(isnotnull(b#6) AND (b#6 > 5))") is None
    assert "NULLs of ['a']" in same_predicates(ours, "((isnotnull(b#6) AND (b#6 > 5)) AND isnotnull(a#5))")
    assert same_predicates(ours, "((isnotnull(b#6) AND (b#6 > 5)) AND isnotnull(a#5))", frozenset({"a"})) is None
    assert "2 predicates" in same_predicates(ours, "((b#6 > 5) AND (a#5 < 3))")
    assert "reads ['a']" in same_predicates(ours, "(a#5 > 5)")


def test_fused_filter_and_unvouched_keys_stay_unmapped() -> None:
    case = json.loads((FIXTURES / "join_fused.json").read_text())
    graph = SparkGraph.from_dict(case["graph"])
    report = map_actuals(case["plan"], graph, sources(case))
    counted = {n.id: n for n in report.nodes}
    assert counted["n4"].rows_out == counted["n4"].rows_in == 100  # read whole, no filter: exact
    assert "NULLs of ['a']" in report.unmapped["n3"]
    assert "condition differs" in report.unmapped["n2"]  # Spark evaluates the kept filter inside the join
    assert report.unmapped["n1"]
    vouched = map_actuals(
        case["plan"],
        graph,
        sources(case),
        never_null_columns({"tables": {"t": {"column_stats": {"a": {"null_count": 0}}}}}),
    )
    assert {n.id: n.rows_out for n in vouched.nodes} == {"n3": 343, "n4": 100}


def test_two_tables_on_one_source_are_never_told_apart_by_guessing() -> None:
    case = json.loads((FIXTURES / "join_fused.json").read_text())
    graph = SparkGraph.from_dict(case["graph"])
    same = {"t": TableSource(case["identities"]["t"]), "u": TableSource(case["identities"]["t"])}
    report = map_actuals(case["plan"], graph, same)
    assert report.nodes == []
    assert "same source" in report.unmapped["n3"] and "same source" in report.unmapped["n4"]


def test_the_client_knows_every_wire_op_the_service_has() -> None:
    """The client's ``WireOp`` (matched exhaustively in ``visit``) is the service's, which it cannot import."""
    from typing import get_args

    from costmodel.kinds.registry import WireOp as ServiceWireOp
    from costmodel.kinds.registry import wire_ops
    from pushdown_client.feedback.mapping import WireOp

    assert set(get_args(WireOp)) == set(get_args(ServiceWireOp)) == set(wire_ops())


#: a scan filtered by a Python UDF as Spark 4 runs it: the join key's isnotnull pushed below the UDF's evaluation,
#: the filter above testing the UDF's result column
UDF_ON_SCAN = {
    "nodes": [
        {
            "id": 1,
            "name": "Scan parquet ",
            "desc": "FileScan parquet [c_custkey#1L,c_comment#2] Location: x",
            "rows": 15000,
        },
        {"id": 2, "name": "Filter", "desc": "Filter isnotnull(c_custkey#1L)", "rows": 15000},
        {
            "id": 3,
            "name": "BatchEvalPython",
            "desc": "BatchEvalPython [active(c_custkey#1L)#9], [pythonUDF0#12]",
            "rows": 15000,
        },
        {"id": 4, "name": "Filter", "desc": "Filter pythonUDF0#12", "rows": 544},
        {"id": 5, "name": "Project", "desc": "Project [c_custkey#1L]", "rows": None},
    ],
    "edges": [[1, 2], [2, 3], [3, 4], [4, 5]],
}
UDF_PLAN = {
    "op": "scan",
    "id": "n1",
    "table": "customer",
    "filters": [{"fn": "active", "args": [{"col": "c.c_custkey"}]}],
}


def test_a_scan_filtered_by_a_python_udf_is_counted_above_the_udfs_evaluation() -> None:
    graph = SparkGraph.from_dict(UDF_ON_SCAN)
    report = map_actuals(UDF_PLAN, graph, {"customer": TableSource("Scan parquet @ x")})
    assert [(n.id, n.rows_out) for n in report.nodes] == [("n1", 544)]
    other = {**UDF_PLAN, "filters": [{"fn": "active", "args": [{"col": "c.c_comment"}]}]}
    wrong = map_actuals(other, graph, {"customer": TableSource("Scan parquet @ x")})
    assert wrong.nodes == [] and wrong.unmapped["n1"]  # the UDF Spark evaluated reads another column
