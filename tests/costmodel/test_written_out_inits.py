"""Dataclasses whose ``__init__`` is written out keep it in step with their fields.

Compiled by mypyc, a frozen dataclass's generated ``__init__`` stays interpreted Python and costs about 430 ns;
one written in the class body is a native constructor (about 30 ns). The engine's most built classes write it
out (``init=False``; docs/decisions/0003-compiled-engine.md, since superseded by 0005: the engine is pure Python
now, and the written-out constructors stay until the engine is reshaped). These tests fail when a field is added,
renamed, reordered or given a default without the ``__init__`` following.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pkgutil
from typing import Any, get_args

import pytest

import costmodel
from costmodel.cost import NodeCost, RowEstimate
from costmodel.estimate_types import ColumnInfo, SelectivityEstimate
from costmodel.expr import Column, Expr, Literal
from costmodel.materialize import Built
from costmodel.plan import Field, Node
from costmodel.positions import Position, Pred
from costmodel.wire.names import NameIndex


def _written_out() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(costmodel.__path__, "costmodel."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            params = getattr(value, "__dataclass_params__", None)
            if isinstance(value, type) and value.__module__ == info.name and params is not None and not params.init:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


WRITTEN_OUT = _written_out()


def test_every_node_and_expression_class_and_the_hot_ones_write_their_init_out() -> None:
    hot = {NodeCost, RowEstimate, Position, Pred, Built, NameIndex, ColumnInfo, SelectivityEstimate, Field}
    assert {*get_args(Node), *get_args(Expr), *hot} <= set(WRITTEN_OUT)


@pytest.mark.parametrize("cls", WRITTEN_OUT, ids=lambda cls: cls.__name__)
def test_init_sets_every_field_by_its_name(cls: type) -> None:
    fields = dataclasses.fields(cls)
    given = {f.name: object() for f in fields}
    made = cls(**given)
    assert {f.name: getattr(made, f.name) for f in fields} == given


@pytest.mark.parametrize("cls", WRITTEN_OUT, ids=lambda cls: cls.__name__)
def test_init_takes_the_fields_in_their_order(cls: type) -> None:
    """Most callers build these positionally: a swapped pair of parameters must fail."""
    fields = dataclasses.fields(cls)
    given = [object() for _ in fields]
    made = cls(*given)
    assert [getattr(made, f.name) for f in fields] == given


@pytest.mark.parametrize("cls", WRITTEN_OUT, ids=lambda cls: cls.__name__)
def test_init_defaults_are_the_fields_defaults(cls: type) -> None:
    fields = dataclasses.fields(cls)
    required = {f.name: object() for f in fields if _default(f) is dataclasses.MISSING}
    made, again = cls(**required), cls(**required)
    for f in fields:
        if f.name not in required:
            assert getattr(made, f.name) == _default(f), f.name
            if f.default_factory is not dataclasses.MISSING:  # a fresh value each time, never a shared one
                assert getattr(made, f.name) is not getattr(again, f.name), f.name


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


@pytest.mark.parametrize(
    ("cls", "values"),
    [
        (Column, [("a", 1, "int"), ("a", 2, "int"), ("A", 1, "int"), ("a", 1, "string"), ("a", -1, "unknown")]),
        (Literal, [(1, "int"), (1.0, "int"), (True, "boolean"), (None, "null"), (math.nan, "double"), ("x", "string")]),
    ],
    ids=["Column", "Literal"],
)
def test_written_out_eq_and_hash_are_the_dataclass_ones(cls: type, values: list[tuple[Any, ...]]) -> None:
    """The same hashes (sets of columns keep their order) and the same equality as the generated methods."""
    twin = dataclasses.make_dataclass("Twin", [f.name for f in dataclasses.fields(cls)], frozen=True)
    for left in values:
        assert hash(cls(*left)) == hash(twin(*left))
        for right in values:
            assert (cls(*left) == cls(*right)) == (twin(*left) == twin(*right)), (left, right)
    nan = cls(*values[-2]) if cls is Literal else None
    if nan is not None:  # one NaN object: equal to itself by identity, as tuples compare items
        assert nan == nan and nan == cls(*values[-2])
    assert cls(*values[0]).__eq__(object()) is NotImplemented
