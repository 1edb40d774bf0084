"""Pieces of EXPLAIN lines that several kinds print (named expressions, sort keys, expression lists)."""

from __future__ import annotations

from collections.abc import Sequence

from costmodel.expr import Expr
from costmodel.plan import NamedExpr, SortKey
from costmodel.render import to_sql
from costmodel.wire.names import Namer


def named_text(items: Sequence[NamedExpr], namer: Namer) -> str:
    """``a + b AS c, d``; a window function shows its frame."""
    out = []
    for item in items:
        text = to_sql(item.expr, namer)
        if item.frame is not None:
            text += f" {item.frame.sql()}"
        base = text.rpartition(".")[2]
        out.append(text if base == item.name else f"{text} AS {item.name}")
    return ", ".join(out)


def keys_text(keys: Sequence[SortKey], namer: Namer) -> str:
    out = []
    for key in keys:
        text = to_sql(key.expr, namer) + (" DESC" if key.desc else " ASC")
        if key.nulls_first is not None:
            text += " NULLS FIRST" if key.nulls_first else " NULLS LAST"
        out.append(text)
    return ", ".join(out)


def exprs_text(items: Sequence[Expr], namer: Namer) -> str:
    return ", ".join(to_sql(e, namer) for e in items)
