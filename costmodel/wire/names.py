"""Spelling columns when writing a plan out: each name must resolve to the same column where it lands."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Final

from costmodel.expr import Column, Subquery, has_subquery, walk
from costmodel.kinds.registry import kind_of
from costmodel.plan import Field, Join, Node, children, node_expressions, output_fields, scoped_memo
from costmodel.shared_walk import shared_bottom_up


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class NameIndex:
    """A scope's columns by spelling (``name`` and ``qualifier.name``, lower case): the one cid a spelling names,
    or None when it names several; and each cid's first field."""

    by_name: Mapping[str, int | None]
    first: Mapping[int, Field]

    def __init__(self, by_name: Mapping[str, int | None], first: Mapping[int, Field]) -> None:
        object.__setattr__(self, "by_name", by_name)
        object.__setattr__(self, "first", first)

    @staticmethod
    def of(scope: tuple[Field, ...]) -> NameIndex:
        by_name: dict[str, int | None] = {}
        first: dict[int, Field] = {}
        for f in scope:
            cid = f.cid
            if cid not in first:
                first[cid] = f
            _add(by_name, f.name.lower(), cid)
            if f.qualifier:  # two calls, not a loop over a tuple of spellings: compiled, the tuple costs more
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
    """Spells a column so that it resolves to the same cid in the scope it lands in.

    A column whose spelling names it alone in the whole tree being written (``naming``), and which is spelled no
    other way there, is spelled as it is without looking at the scope (``TreeNames.plain``). Only the rest build
    the scope's index (a join's from its inputs'), so a plan whose columns are all named apart builds none.
    """

    def __init__(
        self,
        node: Node,
        indexes: dict[int, tuple[Node, NameIndex]] | None = None,
        unique: TreeNames | None = None,
    ) -> None:
        self.node = node
        self._indexes = indexes
        self._unique = unique
        self._index: NameIndex | None = None

    @staticmethod
    def for_node(node: Node) -> Namer:
        """The namer for ``node``'s expressions (its kind's ``scope``); inside ``plan_memo`` remembered per node
        (the plan and its EXPLAIN tree name the same nodes)."""
        namers = scoped_memo("namer")
        if namers is None:
            return Namer(node)
        known = namers.get(id(node))
        if known is not None and known[0] is node:
            namer: Namer = known[1]
            return namer
        # the tree's names cover this node's scope, which is the same in any tree that holds the node: reusable
        namer = Namer(node, scoped_memo("name_index"), _TREE_NAMES.get())
        namers[id(node)] = (node, namer)
        return namer

    def index(self) -> NameIndex:
        if self._index is None:
            self._index = _scope_index(self.node, self._indexes)
        return self._index

    def __call__(self, col: Column) -> str:
        if self._unique is not None and self._unique.plain(col):
            return col.name
        index = self.index()
        if index.by_name.get(col.name.lower()) == col.cid:  # the spelling names this column alone
            return col.name
        f = index.first.get(col.cid)
        if f is not None:
            return f"{f.qualifier}.{f.name}" if f.qualifier else f.name
        return col.name  # an outer (correlated) reference keeps its spelling


def _scope_index(node: Node, memo: dict[int, tuple[Node, NameIndex]] | None) -> NameIndex:
    """The index of ``node``'s scope; inside ``plan_memo`` a join's built from its inputs' remembered indexes."""
    scope = kind_of(node).scope(node)
    if memo is None:
        return NameIndex.of(scope)
    if isinstance(node, Join):
        joined = output_fields(node)
        if len(joined) == len(scope):  # its output is its scope
            return _output_index(node, memo)
        return _output_index(node.left, memo).then(_output_index(node.right, memo))
    for kid in children(node):
        if output_fields(kid) is scope:
            return _output_index(kid, memo)
    return NameIndex.of(scope)


#: The column names of the tree being written or explained (``naming``), for the namers made meanwhile.
_TREE_NAMES: Final[ContextVar[TreeNames | None]] = ContextVar("tree_names", default=None)


class naming:  # noqa: N801 - a block, used as ``with naming(plan):``, as ``plan_memo`` is
    """While open (inside ``plan_memo``), namers made for the nodes of ``root``'s tree know its column names
    (``tree_names``). A class, not ``contextlib``: compiled, its enter and exit are native calls."""

    def __init__(self, root: Node) -> None:
        self.root = root
        self._token: Token[TreeNames | None] | None = None

    def __enter__(self) -> None:
        if _TREE_NAMES.get() is None:
            trees = scoped_memo("tree_names")
            if trees is not None:
                self._token = _TREE_NAMES.set(_remembered_names(self.root, trees))

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _TREE_NAMES.reset(self._token)
            self._token = None


def _remembered_names(root: Node, trees: dict[int, tuple[Node, TreeNames]]) -> TreeNames:
    """``tree_names(root)``, once per root in this ``plan_memo`` (the answer writes and explains the same plan)."""
    known = trees.get(id(root))
    if known is not None and known[0] is root:
        return known[1]
    names = tree_names(root)
    trees[id(root)] = (root, names)
    return names


class TreeNames:
    """The spellings of a tree's columns (``tree_names``): for each spelling, the one cid it names (None: several
    do), and for each cid, its one spelling (bare and qualified, lower case; None: it is spelled more than one
    way, as an alias renames it)."""

    def __init__(self) -> None:
        self.cids: dict[str, int | None] = {}
        self.spelled: dict[int, tuple[str, str | None] | None] = {}

    def add(self, f: Field) -> None:
        bare = f.name.lower()
        qualified = f"{f.qualifier}.{f.name}".lower() if f.qualifier else None
        _add(self.cids, bare, f.cid)
        if qualified is not None:
            _add(self.cids, qualified, f.cid)
        if f.cid not in self.spelled:
            self.spelled[f.cid] = (bare, qualified)
        elif self.spelled[f.cid] != (bare, qualified):
            self.spelled[f.cid] = None

    def plain(self, col: Column) -> bool:
        """Whether ``col`` is spelled as it is in any scope of the tree: its spelling names no other column, and
        every column of its cid answers to it (so where the cid is in scope the spelling finds it, and where it
        is not, an outer reference, it keeps its spelling anyway)."""
        key = col.name.lower()
        if self.cids.get(key) != col.cid:
            return False
        spelled = self.spelled.get(col.cid)
        return spelled is not None and (key == spelled[0] or key == spelled[1])


def tree_names(root: Node) -> TreeNames:
    """The spellings of every column in ``root``'s tree, subquery plans included. A scope is made of its inputs'
    outputs (a leaf's: its own columns; tests/costmodel/test_namer.py), so these are all the columns any namer of
    the tree can meet.

    >>> from costmodel.plan import Scan
    >>> names = tree_names(Scan("s", "t", fields=(Field(1, "a", "t"), Field(2, "A"), Field(3, "b"))))
    >>> names.cids
    {'a': None, 't.a': 1, 'b': 3}
    >>> names.plain(Column("t.a", 1)), names.plain(Column("a", 1)), names.plain(Column("b", 3))
    (True, False, True)
    """
    names = TreeNames()
    seen: dict[int, tuple[Field, ...]] = {}  # output tuples already taken (a filter passes on its input's), held
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        kids = children(node)
        groups = [output_fields(node)] if kids else [output_fields(node), kind_of(node).scope(node)]
        for fields in groups:
            if id(fields) in seen:
                continue
            seen[id(fields)] = fields
            for f in fields:
                names.add(f)
        stack.extend(kids)
        for expr in node_expressions(node):
            if has_subquery(expr):
                stack.extend(sub.plan for sub in walk(expr) if isinstance(sub, Subquery))
    return names


def _output_index(node: Node, memo: dict[int, tuple[Node, NameIndex]]) -> NameIndex:
    """The index of ``node``'s output columns, remembered per node: a node passing its input's columns shares
    its index, a join combines its inputs'."""
    return shared_bottom_up(node, memo, NameIndex.of, lambda _join, left, right: left.then(right))
