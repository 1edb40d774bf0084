"""Spelling columns when writing a plan out: each name must resolve to the same column where it lands."""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.expr import Column
from costmodel.kinds.registry import kind_of
from costmodel.plan import Field, Node


@dataclass(frozen=True, slots=True)
class NameIndex:
    """A scope's columns by spelling (``name`` and ``qualifier.name``, lower case): the one cid a spelling names,
    or None when it names several; and each cid's first field."""

    by_name: dict[str, int | None]
    first: dict[int, Field]

    @staticmethod
    def of(scope: tuple[Field, ...]) -> NameIndex:
        by_name: dict[str, int | None] = {}
        first: dict[int, Field] = {}
        for f in scope:
            cid = f.cid
            first.setdefault(cid, f)
            name = f.name.lower()
            for key in (name, f"{f.qualifier}.{f.name}".lower()) if f.qualifier else (name,):
                if by_name.setdefault(key, cid) != cid:  # a spelling that names two columns names none
                    by_name[key] = None
        return NameIndex(by_name, first)


class Namer:
    """Spells a column so that it resolves to the same cid in the scope it lands in."""

    def __init__(self, scope: tuple[Field, ...], index: NameIndex | None = None):
        self.scope = scope
        self._index = index

    @staticmethod
    def for_node(node: Node) -> Namer:
        """The namer for ``node``'s expressions (its kind's ``scope``)."""
        return Namer(kind_of(node).scope(node))

    def index(self) -> NameIndex:
        if self._index is None:
            self._index = NameIndex.of(self.scope)
        return self._index

    def __call__(self, col: Column) -> str:
        index = self.index()
        if index.by_name.get(col.name.lower()) == col.cid:  # the spelling names this column alone
            return col.name
        f = index.first.get(col.cid)
        if f is not None:
            return f"{f.qualifier}.{f.name}" if f.qualifier else f.name
        return col.name  # an outer (correlated) reference keeps its spelling
