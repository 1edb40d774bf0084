"""Spelling columns when writing a plan out: each name must resolve to the same column where it lands."""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.expr import Column
from costmodel.kinds.registry import kind_of
from costmodel.plan import Field, Join, Node, children, output_fields, scoped_memo
from costmodel.shared_walk import shared_bottom_up


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
            if cid not in first:
                first[cid] = f
            _add(by_name, f.name.lower(), cid)
            if f.qualifier:
                _add(by_name, f"{f.qualifier}.{f.name}".lower(), cid)
        return NameIndex(by_name, first)

    def then(self, right: NameIndex) -> NameIndex:
        """The index of this scope followed by ``right``'s: the larger side is copied in C, the smaller merged
        in, so a chain of joins does not index every column below each join again."""
        larger, smaller = (right, self) if len(right.by_name) > len(self.by_name) else (self, right)
        by_name = dict(larger.by_name)
        for key, cid in smaller.by_name.items():
            _add(by_name, key, cid)
        first = dict(right.first)
        first.update(self.first)  # a cid on both sides is first met on the left
        return NameIndex(by_name, first)


def _add(by_name: dict[str, int | None], key: str, cid: int | None) -> None:
    """``key`` names ``cid`` too: None (several columns) once it names two."""
    if key not in by_name:
        by_name[key] = cid
    elif by_name[key] != cid:
        by_name[key] = None


class Namer:
    """Spells a column so that it resolves to the same cid in the scope it lands in."""

    def __init__(self, scope: tuple[Field, ...], index: NameIndex | None = None):
        self.scope = scope
        self._index = index

    @staticmethod
    def for_node(node: Node) -> Namer:
        """The namer for ``node``'s expressions (its kind's ``scope``); inside ``plan_memo`` remembered per node
        (the plan and its EXPLAIN tree name the same nodes), a join's built from its inputs' remembered indexes."""
        namers = scoped_memo("namer")
        if namers is None:
            return Namer(kind_of(node).scope(node))
        known = namers.get(id(node))
        if known is not None and known[0] is node:
            namer: Namer = known[1]
            return namer
        indexes = scoped_memo("name_index")
        assert indexes is not None  # the same plan_memo as the namers'
        namer = Namer._indexed(node, indexes)
        namers[id(node)] = (node, namer)
        return namer

    @staticmethod
    def _indexed(node: Node, memo: dict[int, tuple[Node, NameIndex]]) -> Namer:
        scope = kind_of(node).scope(node)
        index: NameIndex | None = None
        if isinstance(node, Join):
            joined = output_fields(node)
            index = _output_index(node, memo) if len(joined) == len(scope) else None  # its output is its scope
            if index is None:
                index = _output_index(node.left, memo).then(_output_index(node.right, memo))
        else:
            index = next((_output_index(kid, memo) for kid in children(node) if output_fields(kid) is scope), None)
        return Namer(scope, index)

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


def _output_index(node: Node, memo: dict[int, tuple[Node, NameIndex]]) -> NameIndex:
    """The index of ``node``'s output columns, remembered per node: a node passing its input's columns shares
    its index, a join combines its inputs'."""
    return shared_bottom_up(node, memo, NameIndex.of, lambda _join, left, right: left.then(right))
