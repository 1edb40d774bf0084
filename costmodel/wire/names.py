"""Spelling columns when writing a plan out: each name must resolve to the same column where it lands."""

from __future__ import annotations

from costmodel.expr import Column
from costmodel.plan import Field


class Namer:
    """Spells a column so that it resolves to the same cid in the scope it lands in."""

    def __init__(self, scope: tuple[Field, ...]):
        self.scope = scope
        self._by_name: dict[str, set[int]] | None = None

    def _index(self) -> dict[str, set[int]]:
        if self._by_name is None:
            index: dict[str, set[int]] = {}
            for f in self.scope:
                index.setdefault(f.name.lower(), set()).add(f.cid)
                if f.qualifier:
                    index.setdefault(f"{f.qualifier}.{f.name}".lower(), set()).add(f.cid)
            self._by_name = index
        return self._by_name

    def __call__(self, col: Column) -> str:
        index = self._index()
        if index.get(col.name.lower()) == {col.cid}:
            return col.name
        for f in self.scope:
            if f.cid == col.cid:
                return f"{f.qualifier}.{f.name}" if f.qualifier else f.name
        return col.name  # an outer (correlated) reference keeps its spelling
