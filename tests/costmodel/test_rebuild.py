"""``costmodel.rebuild.replaced`` copies exactly as ``dataclasses.replace`` does, for every class it is used on."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import pytest

from costmodel.expr import Column, Literal
from costmodel.plan import (
    Aggregate,
    Alias,
    Distinct,
    Field,
    Filter,
    Join,
    Limit,
    NamedExpr,
    Project,
    Scan,
    SetOp,
    Sort,
    SortKey,
    Window,
)
from costmodel.rebuild import _copier, replaced

SCAN = Scan("s", "t", fields=(Field(1, "a"),))
OTHER = Scan("o", "u", fields=(Field(2, "b"),))
A = Column("a", 1)
NODES = [
    (SCAN, {"filters": (A,)}),
    (Filter("f", A, SCAN), {"input": OTHER}),
    (Project("p", (NamedExpr(A, "a", 1),), SCAN), {"input": OTHER}),
    (Aggregate("g", (NamedExpr(A, "a", 1),), (), SCAN), {"input": OTHER}),
    (Join("j", "inner", None, SCAN, SCAN, False), {"left": OTHER, "right": OTHER}),
    (Sort("o", (SortKey(A),), SCAN), {"input": OTHER}),
    (Limit("l", 5, 0, SCAN), {"input": OTHER}),
    (Distinct("d", SCAN), {"input": OTHER}),
    (Alias("x", "q", SCAN), {"input": OTHER, "name": "r"}),
    (SetOp("u", "union", True, (SCAN, SCAN)), {"inputs": (OTHER,)}),
    (Window("w", (), (), (), SCAN), {"input": OTHER}),
    (NamedExpr(A, "a", 1), {"expr": Literal(1, "int")}),
]


@pytest.mark.parametrize(("node", "changes"), NODES, ids=lambda v: type(v).__name__ if not isinstance(v, dict) else "")
def test_the_copy_equals_dataclasses_replace(node: object, changes: dict[str, object]) -> None:
    assert _copier(type(node)) is not None, "a plain node class is copied field by field"
    copy = replaced(node, **changes)
    assert copy == replace(node, **changes)  # type: ignore[type-var]
    assert type(copy) is type(node) and copy is not node
    assert all(getattr(copy, f.name) is getattr(node, f.name) for f in fields(node) if f.name not in changes)  # type: ignore[arg-type]


def test_an_unknown_field_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        replaced(SCAN, nope=1)


def test_a_class_with_post_init_goes_through_dataclasses_replace() -> None:
    @dataclass(frozen=True, slots=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            if self.x < 0:
                raise ValueError("negative")

    assert _copier(Checked) is None
    assert replaced(Checked(1), x=2) == Checked(2)
    with pytest.raises(ValueError, match="negative"):
        replaced(Checked(1), x=-1)


def test_a_class_is_copied_by_a_written_function() -> None:
    copier = _copier(Join)
    assert copier is not None and copier.names == tuple(f.name for f in fields(Join))
    assert copier.written is not None  # the engine is pure Python: one function written per class
