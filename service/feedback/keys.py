"""Names for what a scan's predicates are, stable across requests: the table and the normalized predicate.

A predicate is rendered with bare column names (no alias or qualifier), its conjuncts sorted, so the same filter
written as ``c.name LIKE 'A%' AND c.id > 5`` or ``cities.id > 5 AND cities.name LIKE 'A%'`` gets one key. The
template also replaces every literal with ``?``: a recurring pipeline task filters on a new date each run.

Example::

    >>> from costmodel.estimate import ColumnInfo
    >>> from costmodel.expr import Call, Column, Literal
    >>> cols = {1: ColumnInfo(None, 10.0, "Cities", "Name")}
    >>> predicate_key([Call("like", (Column("c.name", 1), Literal("A%", "string")))], cols)
    ('cities', "name LIKE 'A%'", "name LIKE '?'")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from costmodel.estimate import ColumnInfo
from costmodel.expr import Column, Expr, Literal, column_ids, conjuncts, transform
from costmodel.render import to_sql


def predicate_key(predicates: Sequence[Expr], columns: Mapping[int, ColumnInfo]) -> tuple[str, str, str] | None:
    """(table, predicate, template) of a conjunction on one table's columns; None when it reads several tables,
    no column, or a column the plan does not scan."""
    parts = [part for predicate in predicates for part in conjuncts(predicate)]
    cids = frozenset().union(*(column_ids(p) for p in parts)) if parts else frozenset()
    if not cids or any(cid not in columns for cid in cids):
        return None
    tables = {columns[cid].table.lower() for cid in cids}
    if len(tables) != 1:
        return None

    def name_of(column: Column) -> str:
        return columns[column.cid].column.lower()

    def template(expr: Expr) -> Expr | None:
        return Literal("?", "string") if isinstance(expr, Literal) else None

    exact = sorted(to_sql(p, name_of) for p in parts)
    shape = sorted(to_sql(transform(p, template), name_of) for p in parts)
    return tables.pop(), " AND ".join(exact), " AND ".join(shape)
