"""Column lookup by name for the wire reader: each scope indexed once, a join's built from its inputs'.

Resolving a column used to scan its whole scope, so a chain of joins, each scope holding every column below it,
read in quadratic time. A scope's index maps a lower-case column name to the fields of that name, in scope
order (the order ambiguity errors list them in).

    >>> from costmodel.plan import Field
    >>> scopes = Scopes()
    >>> left, right = (Field(1, "a", "l"), Field(2, "b", "l")), (Field(3, "a", "r"),)
    >>> [f.cid for f in scopes.named(scopes.joined(left, right), "A")]
    [1, 3]
"""

from __future__ import annotations

from typing import Any

from costmodel.plan import Field

#: fields by lower-case name, and by (lower-case qualifier, lower-case name)
Index = dict[str | tuple[str, str], tuple[Field, ...]]


def index_of(scope: tuple[Field, ...]) -> Index:
    """A scope's fields by lower-case name and by qualifier and name, in scope order."""
    out: dict[str | tuple[str, str], tuple[Field, ...]] = {}
    for f in scope:
        name = f.name.lower()
        known = out.get(name)
        out[name] = (f,) if known is None else known + (f,)
        qualified = ((f.qualifier or "").lower(), name)
        known = out.get(qualified)
        out[qualified] = (f,) if known is None else known + (f,)
    return out


def joined_index(left: Index, right: Index) -> Index:
    """The index of ``left``'s scope followed by ``right``'s: the larger copied in C, the smaller merged in."""
    if len(right) > len(left):
        out = dict(right)
        for key, fields in left.items():
            out[key] = fields + out[key] if key in out else fields
        return out
    out = dict(left)
    for key, fields in right.items():
        out[key] = out[key] + fields if key in out else fields
    return out


class Scopes:
    """The indexes of the scopes one reader has met, by tuple object (entries keep the tuple: ids are reused)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Any, Index]] = {}

    def index(self, scope: tuple[Field, ...]) -> Index:
        hit = self._memo.get(id(scope))
        if hit is not None and hit[0] is scope:
            return hit[1]
        built = index_of(scope)
        self._memo[id(scope)] = (scope, built)
        return built

    def joined(self, left: tuple[Field, ...], right: tuple[Field, ...]) -> tuple[Field, ...]:
        """``left + right``, its index built from the two sides' (``output_fields`` keeps the tuples)."""
        scope = left + right
        if scope is not left and scope is not right:
            self._memo[id(scope)] = (scope, joined_index(self.index(left), self.index(right)))
        return scope

    def same_as(self, scope: tuple[Field, ...], other: tuple[Field, ...]) -> None:
        """Note that ``scope`` holds the same fields as ``other``, already indexed (a join's output)."""
        hit, known = self._memo.get(id(other)), self._memo.get(id(scope))
        if (
            hit is not None
            and hit[0] is other
            and len(scope) == len(other)
            and (known is None or known[0] is not scope)
        ):
            self._memo[id(scope)] = (scope, hit[1])

    def named(self, scope: tuple[Field, ...], name: str, qualifier: str = "") -> tuple[Field, ...]:
        """The fields of ``scope`` called ``name`` (any case), under ``qualifier`` when one is given, in scope
        order."""
        key = ((qualifier.lower(), name.lower())) if qualifier else name.lower()
        return self.index(scope).get(key, ())
