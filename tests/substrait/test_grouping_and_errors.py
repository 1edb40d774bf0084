"""Both encodings of aggregate groupings, and refusals that name the construct and its JSON path."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from datafusion import SessionContext
from datafusion.substrait import Producer

from service.substrait import SubstraitError, plan_to_substrait, substrait_to_plan
from service.substrait.common import validate

GROUP_SQL = "SELECT n_regionkey, n_name, count(*) AS c FROM nation WHERE n_nationkey > 3 GROUP BY n_regionkey, n_name"


def _producer(sql: str) -> dict[str, Any]:
    ctx = SessionContext()
    ctx.from_pydict(
        {
            "n_nationkey": [1, 2, 3, 4, 5],
            "n_name": ["A", "B", "A", "C", "B"],
            "n_regionkey": [0, 1, 0, 1, 1],
            "n_comment": ["x"] * 5,
        },
        name="nation",
    )
    return json.loads(Producer.to_substrait_plan(ctx.sql(sql).logical_plan(), ctx).to_json())


def _aggregate(doc: dict[str, Any]) -> dict[str, Any]:
    stack: list[Any] = [doc]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "aggregate" in item:
                return item["aggregate"]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    raise AssertionError("no aggregate")


@pytest.fixture(scope="module")
def grouped() -> dict[str, Any]:
    return _producer(GROUP_SQL)


def _old_only(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    agg = _aggregate(out)
    top = agg.pop("groupingExpressions")
    agg["groupings"] = [{"groupingExpressions": [top[i] for i in g["expressionReferences"]]} for g in agg["groupings"]]
    return out


def _new_only(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    for grouping in _aggregate(out)["groupings"]:
        grouping.pop("groupingExpressions", None)
    return out


def test_datafusion_writes_both_encodings(grouped: dict[str, Any]) -> None:
    agg = _aggregate(grouped)
    assert len(agg["groupingExpressions"]) == 2
    assert agg["groupings"][0]["expressionReferences"] == [0, 1]
    assert len(agg["groupings"][0]["groupingExpressions"]) == 2


def test_both_encodings_give_the_same_wire_plan(grouped: dict[str, Any]) -> None:
    both, old, new = (substrait_to_plan(d) for d in (grouped, _old_only(grouped), _new_only(grouped)))
    assert both == old == new
    group_by = both["input"]["group_by"] if both["op"] == "project" else both["group_by"]
    assert [g["col"] for g in group_by] == ["nation.n_regionkey", "nation.n_name"]


def test_the_answer_uses_the_encoding_that_came_in(grouped: dict[str, Any]) -> None:
    old, new = _old_only(grouped), _new_only(grouped)
    old_out = _aggregate(plan_to_substrait(substrait_to_plan(old), old))
    new_out = _aggregate(plan_to_substrait(substrait_to_plan(new), new))
    assert "groupingExpressions" in old_out["groupings"][0]
    assert "groupingExpressions" not in new_out["groupings"][0]
    assert new_out["groupings"][0]["expressionReferences"] == [0, 1]
    validate(plan_to_substrait(substrait_to_plan(new), new))  # parses under the current, strict schema


def test_an_unknown_field_is_refused_not_ignored(grouped: dict[str, Any]) -> None:
    doc = _new_only(grouped)
    _aggregate(doc)["groupings"][0]["groupingKeys"] = [0]
    with pytest.raises(SubstraitError) as err:
        substrait_to_plan(doc)
    assert err.value.code == "invalid_substrait"
    assert err.value.path.endswith(".aggregate.groupings[0]")
    assert "groupingKeys" in err.value.message


def test_encodings_that_disagree_are_refused(grouped: dict[str, Any]) -> None:
    doc = copy.deepcopy(grouped)
    grouping = _aggregate(doc)["groupings"][0]
    grouping["groupingExpressions"] = grouping["groupingExpressions"][:1]
    with pytest.raises(SubstraitError) as err:
        substrait_to_plan(doc)
    assert err.value.code == "inconsistent_grouping"
    assert err.value.path.endswith(".aggregate.groupings[0]")


def test_grouping_sets_are_refused(grouped: dict[str, Any]) -> None:
    doc = _new_only(grouped)
    _aggregate(doc)["groupings"].append({"expressionReferences": [0]})
    with pytest.raises(SubstraitError) as err:
        substrait_to_plan(doc)
    assert err.value.code == "unsupported" and err.value.path.endswith(".aggregate.groupings")


# ---------------------------------------------------------------- refusals


def _first(doc: Any, key: str) -> tuple[dict[str, Any], str]:
    """The first object holding ``key`` (pre-order), and its JSON path."""
    stack: list[tuple[Any, str]] = [(doc, "$")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            if key in item:
                return item, path
            stack.extend(reversed([(v, f"{path}.{k}") for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(v, f"{path}[{i}]") for i, v in enumerate(item)]))
    raise AssertionError(key)


def test_unsupported_relation_is_named_with_its_path(grouped: dict[str, Any]) -> None:
    doc = copy.deepcopy(grouped)
    holder, path = _first(doc, "read")
    del holder["read"]
    holder["extensionLeaf"] = {}
    with pytest.raises(SubstraitError) as err:
        substrait_to_plan(doc)
    assert err.value.code == "unsupported"
    assert err.value.detail["construct"] == "extensionLeaf relation"
    assert err.value.path == f"{path}.extensionLeaf"


def test_mark_join_is_refused() -> None:
    ctx_doc = _producer("SELECT a.n_name FROM nation a JOIN nation b ON a.n_nationkey = b.n_regionkey")
    join, path = _first(ctx_doc, "join")
    join["join"]["type"] = "JOIN_TYPE_LEFT_MARK"
    with pytest.raises(SubstraitError) as err:
        substrait_to_plan(ctx_doc)
    assert err.value.code == "unsupported" and err.value.path == f"{path}.join.type"


def test_window_function_from_the_producer_is_refused() -> None:
    doc = _producer("SELECT n_name, row_number() OVER (ORDER BY n_name) AS r FROM nation")
    with pytest.raises(SubstraitError) as err:
        substrait_to_plan(doc)
    assert err.value.code == "unsupported"
    assert "window" in err.value.message.lower() and err.value.path.startswith("$.relations[0]")


def test_bad_field_reference_and_unknown_function(grouped: dict[str, Any]) -> None:
    doc = copy.deepcopy(grouped)
    holder, _ = _first(doc, "condition")
    holder["condition"]["scalarFunction"]["arguments"][0]["value"]["selection"]["directReference"]["structField"][
        "field"
    ] = 99
    with pytest.raises(SubstraitError) as err:
        substrait_to_plan(doc)
    assert err.value.code == "invalid_reference" and "nation.n_name" in err.value.detail["available"]
    doc = copy.deepcopy(grouped)
    holder, _ = _first(doc, "condition")
    holder["condition"]["scalarFunction"]["functionReference"] = 77
    with pytest.raises(SubstraitError) as err:
        substrait_to_plan(doc)
    assert err.value.code == "unknown_function" and err.value.path.endswith(".functionReference")


def test_catalog_that_disagrees_with_the_read_schema(grouped: dict[str, Any]) -> None:
    catalog = {"tables": {"nation": {"columns": [{"name": "n_nationkey", "type": "int"}]}}}
    with pytest.raises(SubstraitError) as err:
        substrait_to_plan(grouped, catalog)
    assert err.value.code == "schema_mismatch" and "n_name" in err.value.detail["missing"]


def test_not_a_plan() -> None:
    with pytest.raises(SubstraitError) as err:
        substrait_to_plan({"relations": [{"root": {"input": {"read": {"bogus": 1}}}}]}, root="$.substrait")
    assert err.value.code == "invalid_substrait" and err.value.path.startswith("$.substrait.relations[0]")
