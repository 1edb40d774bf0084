"""Operators as a person names them: kind, table, id and path from the root, read from an EXPLAIN tree or
from a wire plan (subqueries included). The per-predicate summary (``costmodel.summary``) names the operators
its decisions name with these.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from costmodel.kinds.registry import kind_of
from costmodel.plan import Node, children

#: An EXPLAIN line: indentation (depth), the operator's label, then ``  [id rows=...]``.
_EXPLAIN_LINE = re.compile(r"^(?P<indent> *)(?P<label>.*?)\s+\[(?P<id>[^\s\]]+)(?: |\])")
#: The ``[id`` part alone: a literal first character, which the regex engine finds without trying every position
#: (the whole pattern's lazy label tries each one, and a line carries its predicates' text).
_BRACKETED_ID = re.compile(r"\[([^\s\]]+)[ \]]")


def explain_line(line: str) -> tuple[int, str, str] | None:
    """``(depth, label, id)`` of an EXPLAIN line, or None: what ``_EXPLAIN_LINE`` matches, found from the first
    ``[id`` after whitespace (the regex's leftmost match); a line whose label would be empty goes to the regex.

    >>> explain_line("    Filter: a[1] > 2  [n3 rows=10 cost=5 sel=0.5 [0.1, 0.9] statistics]")
    (4, 'Filter: a[1] > 2', 'n3')
    >>> explain_line("TableScan: t") is None
    True
    """
    indent = len(line) - len(line.lstrip(" "))
    pos = indent
    while True:
        hit = _BRACKETED_ID.search(line, pos)
        if hit is None:
            return None
        start = hit.start()
        if start > 0 and line[start - 1].isspace():
            end = len(line[:start].rstrip())  # the whitespace before the bracket is not the label's
            if end <= indent:  # an empty label: the regex decides how much of the indent is indent
                return _by_regex(line)
            return indent, line[indent:end], hit.group(1)
        pos = start + 1


def _by_regex(line: str) -> tuple[int, str, str] | None:
    hit = _EXPLAIN_LINE.match(line)
    return None if hit is None else (len(hit["indent"]), hit["label"], hit["id"])


@dataclass(frozen=True, slots=True)
class Operator:
    """An operator as a person names it: its kind, a table for scans, its id, and its path from the root."""

    id: str
    kind: str
    path: str

    @property
    def name(self) -> str:
        return f"{self.kind} ({self.id})"


#: A path names at most this many operators: the first ``PATH_HEAD`` from the root, then how many were left
#: out, then the ``PATH_TAIL`` nearest the operator. Spelled out whole, paths made a deep plan's summary
#: quadratic in its depth (every operator repeating every one above it).
PATH_HEAD, PATH_TAIL = 3, 12


def path_text(head: tuple[str, ...], tail: list[str], depth: int) -> str:
    """The path of an operator ``depth`` levels deep: ``head`` (the first kinds from the root) and ``tail`` (the
    last ones, the operator's own kind last); the middle of a long path is counted, not listed.

    >>> path_text(("A", "B"), ["A", "B"], 2)
    'A > B'
    >>> path_text(("A", "B", "C"), [str(i) for i in range(8, 20)], 20)
    'A > B > C > … 5 more … > 8 > 9 > 10 > 11 > 12 > 13 > 14 > 15 > 16 > 17 > 18 > 19'
    """
    if depth <= PATH_HEAD + PATH_TAIL:
        return " > ".join((*head, *tail[len(head) - depth :]) if depth > len(head) else head[:depth])
    left_out = depth - PATH_HEAD - PATH_TAIL
    return " > ".join((*head, f"… {left_out} more …", *tail[-PATH_TAIL:]))


def operators(explain_before: str, wanted: AbstractSet[str] | None = None) -> dict[str, Operator]:
    """Operators by id, read from the explain tree (indentation is depth); only those in ``wanted`` if given
    (a path is built per operator returned, and a summary names only the operators its decisions name).

    >>> ops = operators("Projection: a  [n1 rows=1 cost=1]\\n  TableScan: t  [n2 rows=1 cost=1]")
    >>> ops["n2"].kind, ops["n2"].path
    ('TableScan t', 'Projection > TableScan t')
    """
    out: dict[str, Operator] = {}
    stack: list[tuple[int, str]] = []
    for line in explain_before.splitlines():
        parsed = explain_line(line)
        if parsed is None:
            continue
        depth, label, op_id = parsed
        kind = label.split(":", 1)[0].strip()
        if kind == "TableScan":
            table = label.split(":", 1)[1].strip().split(" ", 1)[0] if ":" in label else ""
            kind = f"TableScan {table}".strip()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, kind))
        if wanted is not None and op_id not in wanted:
            continue
        head = tuple(k for _, k in stack[:PATH_HEAD])
        tail = [k for _, k in stack[-PATH_TAIL:]]
        out[op_id] = Operator(op_id, kind, path_text(head, tail, len(stack)))
    return out


def tree_operators(plan: Node, wanted: AbstractSet[str] | None = None) -> dict[str, Operator]:
    """``operators`` of ``plan``'s EXPLAIN tree, read from the plan itself: each operator named by its kind's
    ``title``, the tree walked in EXPLAIN's order (a later line with the same id wins, as there), so nothing is
    rendered. Subqueries are not in it, as they are not in the tree.

    >>> from costmodel.plan import Field, Filter, Scan
    >>> from costmodel.expr import Column
    >>> t = Scan("n2", "t", None, (), (Field("a", "int", 1),))
    >>> ops = tree_operators(Filter("n1", Column("a", 1), t))
    >>> ops["n2"].kind, ops["n2"].path
    ('TableScan t', 'Filter > TableScan t')
    """
    out: dict[str, Operator] = {}
    path: list[str] = []  # the kinds from the root down to the node being read
    stack: list[tuple[Node, int]] = [(plan, 0)]
    while stack:
        node, depth = stack.pop()
        kind = kind_of(node).title(node)
        del path[depth:]
        path.append(kind)
        if wanted is None or node.id in wanted:
            out[node.id] = Operator(node.id, kind, path_text(tuple(path[:PATH_HEAD]), path[-PATH_TAIL:], len(path)))
        for child in reversed(children(node)):
            stack.append((child, depth + 1))
    return out


#: Wire op names as the explain tree spells the operator kinds.
_KINDS = {"scan": "TableScan", "project": "Projection", "union": "Union", "intersect": "Intersect", "except": "Except"}


@dataclass(frozen=True, slots=True)
class _Above:
    """The operators above a node, shared by everything below it: its kind, what is above that, the depth,
    and the first kinds from the root (a tuple of each level's kinds would make a deep plan quadratic)."""

    kind: str
    parent: _Above | None
    depth: int
    head: tuple[str, ...]

    def below(self, kind: str) -> _Above:
        head = self.head + (kind,) if len(self.head) < PATH_HEAD else self.head
        return _Above(kind, self, self.depth + 1, head)

    def path(self) -> str:
        tail: list[str] = []
        link: _Above | None = self
        while link is not None and link.depth > 0 and len(tail) < PATH_TAIL:
            tail.append(link.kind)
            link = link.parent
        return path_text(self.head, tail[::-1], self.depth)


_ROOT = _Above("", None, 0, ())


def plan_operators(plan: Any, wanted: AbstractSet[str] | None = None) -> dict[str, Operator]:
    """Operators by id from a wire plan, subqueries included (the explain tree shows a subquery as ``#id``); only
    those in ``wanted`` if given, and the walk stops once it has them all.

    >>> ops = plan_operators({"op": "filter", "id": "n1", "input": {"op": "scan", "id": "n2", "table": "t"}})
    >>> ops["n2"].kind, ops["n2"].path
    ('TableScan t', 'Filter > TableScan t')
    """
    out: dict[str, Operator] = {}
    stack: list[tuple[Any, _Above]] = [(plan, _ROOT)] if type(plan) is dict or type(plan) is list else []
    while stack:  # iterative: plans may be thousands of levels deep
        node, above = stack.pop()
        if type(node) is list:
            for item in node:
                if _may_hold_operators(item):
                    stack.append((item, above))
            continue
        here = above
        if isinstance(node.get("op"), str) and isinstance(node.get("id"), str):
            op = node["op"]
            kind = _KINDS.get(op) or op.replace("_", " ").title()
            if op == "scan":
                kind = f"TableScan {node.get('table', '')}".strip()
            elif op == "join":
                kind = f"{str(node.get('type', 'inner')).title()} Join"
            here = above.below(kind)
            if node["id"] not in out and (wanted is None or node["id"] in wanted):
                out[node["id"]] = Operator(node["id"], kind, here.path())
                if wanted is not None and len(out) == len(wanted):
                    break
        for value in node.values():
            if _may_hold_operators(value):
                stack.append((value, here))
    return out


def _may_hold_operators(value: Any) -> bool:
    """Only containers hold operators, and a column or a literal holds none."""
    return type(value) is list or (type(value) is dict and "col" not in value and "lit" not in value)
