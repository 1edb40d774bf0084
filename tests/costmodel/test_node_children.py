"""Each plan node class names its inputs (``children``) and makes itself over new ones (``with_children``)
carrying every other field over, as a scan does over new filters and a join over a new condition: written out
per class for speed, so a field added later and forgotten there fails here instead of being dropped. The
samples give every field a value other than its default (checked), so a field that fell back to its default
would show; they are well typed, so this runs compiled too."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from costmodel.expr import Call, Column, Literal
from costmodel.plan import (
    Aggregate,
    Alias,
    Distinct,
    Field,
    Filter,
    Generate,
    IndexLookup,
    Join,
    Limit,
    NamedExpr,
    Node,
    Project,
    Sample,
    Scan,
    SetOp,
    Sort,
    SortKey,
    Window,
    children,
    with_children,
)

NODE_CLASSES = typing.get_args(Node)
CHILD_FIELDS = {"input", "left", "right", "inputs"}

A, B = Column("a", 1, "int"), Column("b", 2, "int")
PRED = Call(">", (A, Literal(5, "int")))
FIELDS = (Field(1, "a", "t", "int"), Field(2, "b", "t", "int"))
NAMED = (NamedExpr(A, "a", 1),)


def _scan(i: int) -> Scan:
    return Scan(f"in{i}", f"t{i}")


def _samples() -> dict[type, Node]:
    one = _scan(0)
    return {
        Scan: Scan("s", "t", "x", (PRED,), FIELDS, IndexLookup("ix", ("a",), (PRED,)), ("c1",), ("a", "b")),
        Filter: Filter("f", PRED, one),
        Project: Project("p", NAMED, one),
        Aggregate: Aggregate("g", NAMED, (NamedExpr(Call("count", (B,)), "n", 3),), one, ((0,), ())),
        Join: Join("j", "left", PRED, one, _scan(1), True),
        SetOp: SetOp("u", "union", True, (one, _scan(1)), FIELDS),
        Sort: Sort("o", (SortKey(A, True, False),), one, 10),
        Limit: Limit("l", 5, 2, one),
        Window: Window("w", (A,), (SortKey(B),), (NamedExpr(Call("rank", ()), "r", 4),), one),
        Distinct: Distinct("d", one),
        Alias: Alias("al", "x", one, FIELDS, ("p", "q")),
        Generate: Generate("ge", Call("explode", (A,)), True, "e", (Field(5, "v"),), one),
        Sample: Sample("sa", 0.25, "system", 7, one),
    }


SAMPLES = _samples()


def test_every_node_class_has_a_sample() -> None:
    assert set(SAMPLES) == set(NODE_CLASSES)


@pytest.mark.parametrize("cls", NODE_CLASSES, ids=lambda c: c.__name__)
def test_every_sample_field_differs_from_its_default(cls: type) -> None:
    node = SAMPLES[cls]
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            assert getattr(node, f.name) != f.default, f"give {cls.__name__}.{f.name} a sample value"


@pytest.mark.parametrize("cls", NODE_CLASSES, ids=lambda c: c.__name__)
def test_with_children_keeps_every_other_field(cls: type) -> None:
    node = SAMPLES[cls]
    kids = children(node)
    assert with_children(node, list(kids)) is node  # the same inputs: the same object
    if not kids:
        return
    new_kids = [Scan(f"new{i}", "t") for i in range(len(kids))]
    made = with_children(node, new_kids)
    assert type(made) is cls and made is not node
    assert list(children(made)) == new_kids
    for f in dataclasses.fields(cls):
        if f.name not in CHILD_FIELDS:
            assert getattr(made, f.name) == getattr(node, f.name), f"{cls.__name__}.with_children drops {f.name}"


@pytest.mark.parametrize("cls", NODE_CLASSES, ids=lambda c: c.__name__)
def test_children_are_the_input_fields_in_order(cls: type) -> None:
    node = SAMPLES[cls]
    expected: list[object] = []
    for f in dataclasses.fields(cls):
        if f.name in CHILD_FIELDS:
            value = getattr(node, f.name)
            expected.extend(value if isinstance(value, tuple) else [value])
    assert list(children(node)) == expected


@pytest.mark.parametrize(
    ("cls", "remake", "changed"),
    [
        (Scan, lambda n: n.with_filters((PRED, PRED)), {"filters": (PRED, PRED)}),
        (Join, lambda n: n.with_condition(None, "inner"), {"on": None, "type": "inner"}),
    ],
    ids=["Scan.with_filters", "Join.with_condition"],
)
def test_placement_remakes_keep_every_other_field(cls: type, remake: typing.Any, changed: dict) -> None:
    node = SAMPLES[cls]
    made = remake(node)
    assert type(made) is cls
    for f in dataclasses.fields(cls):
        expected = changed[f.name] if f.name in changed else getattr(node, f.name)
        assert getattr(made, f.name) == expected, f"{cls.__name__} drops {f.name}"
