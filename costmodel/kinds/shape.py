"""Hooks shared by kinds of one shape: one input, columns passed through or computed by named expressions.

A kind still names each of these in its ``OperatorKind``; nothing here is a default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from costmodel.expr import Column, Expr
from costmodel.plan import Field, NamedExpr, Node, output_fields


def wire_input(raw: dict[str, Any], path: str) -> list[tuple[Any, str]]:
    """A one-input node's child on the wire: ``input``."""
    return [(raw["input"], f"{path}.input")] if "input" in raw else []


def no_wire_children(raw: dict[str, Any], path: str) -> list[tuple[Any, str]]:
    return []


def input_scope(node: Any) -> tuple[Field, ...]:
    """Expressions of a one-input node read its input's columns."""
    return output_fields(node.input)


def no_scope(node: Any) -> tuple[Field, ...]:
    return ()


def no_expressions(node: Any) -> list[Expr]:
    return []


def pass_equalities(node: Any) -> tuple[list[tuple[Column, Column]], tuple[Node, ...]]:
    """Every row it emits is a row of its input: the input's column equalities hold above it too."""
    return [], (node.input,)


def no_equalities(node: Any) -> tuple[list[tuple[Column, Column]], tuple[Node, ...]]:
    return [], ()


def same_null_supplying(node: Any, null_supplying: bool) -> tuple[bool, ...]:
    """Its input's rows are NULL-padded above exactly when its own are."""
    return (null_supplying,)


def fields_of(items: Sequence[NamedExpr]) -> tuple[Field, ...]:
    """The columns named expressions define (``expr AS name``)."""
    return tuple(
        Field(e.cid, e.name, e.qualifier, e.expr.type if isinstance(e.expr, Column) else "unknown") for e in items
    )
