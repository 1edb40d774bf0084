"""Each plan node class names its inputs (``children``) and makes itself over new ones (``with_children``)
carrying every other field over: written out per class for speed, so a field added later and forgotten there
fails here instead of being dropped."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from costmodel.plan import Node, Scan, children, with_children

NODE_CLASSES = typing.get_args(Node)
CHILD_FIELDS = {"input", "left", "right", "inputs"}


def _inputs(n: int) -> list[Scan]:
    return [Scan(f"in{i}", f"t{i}") for i in range(n)]


def _made(cls: type) -> tuple[Node, list[str]]:
    """An instance with a distinct marker in every field that is not an input, and its input fields."""
    values: dict[str, object] = {}
    inputs: list[str] = []
    for f in dataclasses.fields(cls):
        if f.name in CHILD_FIELDS:
            inputs.append(f.name)
            values[f.name] = tuple(_inputs(2)) if f.name == "inputs" else _inputs(1)[0]
        else:
            values[f.name] = object()  # the constructor stores what it is given (pure Python)
    return cls(**values), inputs


@pytest.mark.parametrize("cls", NODE_CLASSES, ids=lambda c: c.__name__)
def test_with_children_keeps_every_other_field(cls: type) -> None:
    node, inputs = _made(cls)
    kids = children(node)
    assert with_children(node, list(kids)) is node  # the same inputs: the same object
    if not kids:
        assert inputs == []
        return
    new_kids = [Scan(f"new{i}", "t") for i in range(len(kids))]
    made = with_children(node, new_kids)
    assert type(made) is cls and made is not node
    assert list(children(made)) == new_kids
    for f in dataclasses.fields(cls):
        if f.name not in CHILD_FIELDS:
            assert getattr(made, f.name) is getattr(node, f.name), f"{cls.__name__}.with_children drops {f.name}"


@pytest.mark.parametrize("cls", NODE_CLASSES, ids=lambda c: c.__name__)
def test_children_are_the_input_fields_in_order(cls: type) -> None:
    node, inputs = _made(cls)
    expected: list[object] = []
    for name in inputs:
        value = getattr(node, name)
        expected.extend(value if isinstance(value, tuple) else [value])
    assert list(children(node)) == expected
