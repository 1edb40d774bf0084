"""Blocks: a SELECT under construction, its output columns and how names resolve.

A wire column ``q.c`` is resolved through a scope (``Col`` list) to the SQL
expression that reaches it from the current block, so derived tables may
rename columns without the plan knowing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from costmodel.wire.nodes import column_refs
from service.sql.common import dialect_name
from service.sql.errors import SqlError
from service.sql.render_expr import (
    Expr,
    Node,
    and_,
    column,
    function,
    ident,
    literal,
    ordered,
    unique,
    wrap_operand,
)

_SET_OPS = ("union", "intersect", "except")


def _inputs(n: Node) -> list[Node]:
    """A node's relational inputs in the order its renderer reads them (malformed ones are its to report)."""
    found = [n.get(key) for key in ("input", "left", "right")]
    found += n.get("inputs") or [] if isinstance(n.get("inputs"), list) else []
    return [c for c in found if isinstance(c, dict) and "op" in c]


# Block stages, in SQL clause order.
FROM, WHERE, AGG, HAVING, WINDOW, PROJECT, DISTINCT, ORDER, LIMIT, SETOP = range(10)


class Col:
    """One output column of a block: its wire name and how SQL reaches it (``ref``).

    A column a table or derived table exposes is reached as ``table.column`` (``Col.of``), built when first asked
    for: a scan lists every column of its table and a query reads a few (a Column and two Identifiers per
    column, most of q15's rendering of its scans). Columns are compared by identity, never field by field.
    """

    def __init__(
        self,
        qual: str | None,
        name: str,
        ref: exp.Expr | None,
        window: bool = False,
        reached_as: tuple[str, str | None] | None = None,
    ) -> None:
        self.qual = qual
        self.name = name
        self.window = window  # ref holds a window function
        if ref is None and reached_as is None:
            raise ValueError("a column needs its expression or the (name, table) that reaches it")
        self._ref = ref
        self._column: tuple[str, str | None] = reached_as or ("", None)  # (name, table) while ref is unbuilt
        self._handed = False  # ``fresh_ref`` has given out ``ref`` itself

    @staticmethod
    def of(qual: str | None, name: str, sql_name: str, table: str | None = None) -> Col:
        """The column ``name`` reached as ``table.sql_name`` (bare ``sql_name`` without a table).

        >>> c = Col.of("t", "k", "k", "t")
        >>> c.is_column_named("k"), c.fresh_ref().sql(), c.fresh_ref() is c.fresh_ref()
        (True, 't.k', False)
        """
        return Col(qual, name, None, reached_as=(sql_name, table))

    @property
    def ref(self) -> exp.Expr:
        """The expression that reaches the column (not to be put in a tree: ``fresh_ref``)."""
        if self._ref is None:
            self._ref = column(self._column[0], self._column[1])
        return self._ref

    def fresh_ref(self) -> exp.Expr:
        """``ref`` to put in a tree: a node no tree holds yet (a tree node has one parent). The first call gives
        ``ref`` itself when no tree holds it (an aggregate's or window's call, read once by the SELECT list
        above it), later ones a copy.

        >>> agg = Col(None, "total", exp.Sum(this=column("x")))
        >>> first, second = agg.fresh_ref(), agg.fresh_ref()
        >>> first is agg.ref, second is agg.ref, second.sql()
        (True, False, 'SUM(x)')
        """
        ref = self._ref
        if ref is None:
            return column(self._column[0], self._column[1])
        if not self._handed and ref.parent is None:
            self._handed = True
            return ref
        # the tree's own deep copy, without copy.deepcopy's memo around it (a fifth of the copy's time)
        return ref.__deepcopy__({})

    def is_column_named(self, name: str) -> bool:
        """``ref`` is a bare or qualified column called ``name``."""
        if self._ref is None:
            return self._column[0] == name
        return isinstance(self._ref, exp.Column) and self._ref.name == name


@dataclass
class Block:
    """A SELECT under construction."""

    select: exp.Expr
    cols: list[Col]
    stage: int
    projected: bool = False
    complete: bool = True  # cols lists every column (False: scan columns unknown)
    sources: int = 1  # FROM items (tables/derived tables) joined in this block
    grouped: bool = False  # GROUP BY / aggregates: a ``*`` beside them is invalid SQL
    # GROUPING SETS: Spark cannot resolve a key inside HAVING beside an aggregate or GROUPING() call
    # (``HAVING count(*) > 1 AND t.k > 0`` is UNRESOLVED_COLUMN), so filters go to an outer WHERE.
    grouping_sets: bool = False
    out_names: list[str] = field(default_factory=list)


class BlockRenderer:
    """What every node renderer shares: dispatch, blocks, wrapping and name resolution."""

    def __init__(self, plan: Node, catalog: dict[str, Any] | None) -> None:
        self.refs = column_refs(plan)  # a scan's columns when the catalog does not list them
        self.tables: dict[str, list[str]] = {}
        for name, raw in ((catalog or {}).get("tables") or {}).items():
            cols = raw.get("columns", []) if isinstance(raw, dict) else []
            self.tables[name.lower()] = [c if isinstance(c, str) else c["name"] for c in cols]
        self.counter = itertools.count(1)
        #: the dialect being written, with its settings as sqlglot reads them (set by plan_to_sql)
        self.dialect_spec = "spark"
        # Column lists by name, so resolving a reference is not a scan of every column in scope (500 joins
        # hold 1,500 columns). Keyed by the list's id; the list itself and its length guard against reuse.
        self._by_name: dict[int, tuple[list[Col], int, dict[str, list[Col]]]] = {}
        # Inputs rendered ahead of their parent (see ``node``), by id, with the node itself as a guard.
        self._ready: dict[int, tuple[Node, Block]] = {}
        #: derived tables made so far (``wrap``): with fewer than two, none can repeat another (render_ctes.py)
        self.derived_tables: list[exp.Subquery] = []
        #: sqlglot nodes made here that may be left out of the tree (each block's SELECT, the expressions columns
        #: are reached by): ``plan_to_sql`` frees those once the tree is written (``common.release``)
        self.made: list[exp.Expr] = []

    @property
    def dialect(self) -> str:
        """The dialect's name alone (``dialect_spec`` without its settings), lower case."""
        return dialect_name(self.dialect_spec)

    # ---- helpers -------------------------------------------------------
    def fresh_alias(self) -> str:
        return f"_t{next(self.counter)}"

    @staticmethod
    def child(node: Node, key: str) -> Node:
        value = node.get(key)
        if not isinstance(value, dict) or "op" not in value:
            raise SqlError("invalid_plan", f"{node.get('op')} node {node.get('id', '')} needs a node under {key!r}")
        return value

    # ---- nodes ---------------------------------------------------------
    def node(self, n: Node, outer: list[list[Col]]) -> Block:
        """Render ``n``; ``outer`` are the enclosing scopes for correlated names.

        The node's relational descendants are rendered first, bottom-up and left to right (the order
        the ``op_*`` methods ask for them), with an explicit stack: a 500-join chain is 500 nodes deep,
        too deep to recurse through. Each ``op_*`` then finds its inputs ready.
        """
        ready = self._ready.pop(id(n), None)
        if ready is not None and ready[0] is n:
            return ready[1]
        order: list[Node] = []
        stack: list[tuple[Node, bool]] = [(c, False) for c in reversed(_inputs(n))]
        while stack:
            current, expanded = stack.pop()
            if expanded:
                order.append(current)
                continue
            stack.append((current, True))
            if current.get("op") not in _SET_OPS:  # a set operation wraps each input as it goes: it recurses
                stack.extend((c, False) for c in reversed(_inputs(current)))
        for current in order:
            self._ready[id(current)] = (current, self.dispatch(current, outer))
        return self.dispatch(n, outer)

    def dispatch(self, n: Node, outer: list[list[Col]]) -> Block:
        op = n.get("op")
        method = getattr(self, f"op_{op}", None)
        if method is None:
            raise SqlError("invalid_plan", f"unknown node op {op!r}", detail={"id": n.get("id")})
        return method(n, outer)

    @staticmethod
    def add_where(block: Block, pred: exp.Expr) -> None:
        where = block.select.args.get("where")
        block.select.set("where", exp.Where(this=and_([where.this, pred]) if where else pred))
        block.stage = max(block.stage, WHERE)

    # ---- blocks --------------------------------------------------------
    def ensure_projected(self, block: Block) -> None:
        """Give the block an explicit SELECT list (``*`` where that is exact)."""
        if block.projected:
            return
        plain = [c for c in block.cols if c.is_column_named(c.name) and not c.window]
        quals = {c.qual for c in block.cols if c in plain}
        names = [c.name.lower() for c in plain]
        # ``*`` is exact when it cannot expose clashing names: one source, or
        # every column known and every name distinct. Grouped blocks list keys.
        one_source = len(quals) <= 1 and block.sources == 1
        all_distinct = block.complete and len(set(names)) == len(names)
        windowed = any(c.window for c in block.cols)
        # ``*`` never stands beside aggregates (invalid) or window functions (some engines refuse it).
        star_ok = not block.grouped and (not windowed or not block.complete) and (one_source or all_distinct)
        extras = [c for c in block.cols if c not in plain]
        items: list[exp.Expr] = []
        if star_ok and (plain or not block.complete or not block.cols):
            items.append(exp.Star())
            cols = plain
            out = [c.name for c in plain]
        else:
            cols, out = [], []
            extras = block.cols
        taken = {c.name.lower() for c in cols}
        for c in extras:
            name = c.name
            if name.lower() in taken:
                name = unique(f"{c.qual}_{c.name}" if c.qual else c.name, taken)
            taken.add(name.lower())
            if c.is_column_named(name):
                items.append(c.fresh_ref())
            else:
                items.append(exp.Alias(this=c.fresh_ref(), alias=ident(name)))
            cols.append(c)
            out.append(name)
        if not items:
            items.append(exp.Star())
        block.select.set("expressions", items)
        block.cols = [Col.of(c.qual, c.name, o) for c, o in zip(cols, out, strict=True)]
        block.out_names = out
        block.projected = True
        block.stage = max(block.stage, PROJECT)

    @staticmethod
    def dedupe_outputs(block: Block) -> None:
        """Duplicate output names become name_2, ... so a derived table can expose them."""
        taken: set[str] = set()
        for i, name in enumerate(block.out_names):
            if name.lower() not in taken:
                taken.add(name.lower())
                continue
            new = unique(name, taken)
            taken.add(new.lower())
            block.out_names[i] = new
            item = block.select.expressions[i]
            block.select.expressions[i].replace(exp.Alias(this=item.unalias().copy(), alias=ident(new)))

    def finish(self, block: Block) -> exp.Expr:
        """The block as a complete query."""
        if block.stage == SETOP:
            return block.select
        self.ensure_projected(block)
        return block.select

    def wrap(self, block: Block, alias: str | None = None, columns: list[str] | None = None) -> Block:
        """Turn the block into a derived table and start a new block over it."""
        query = self.finish(block)
        if block.stage != SETOP:
            self.dedupe_outputs(block)
        star = (
            isinstance(query, exp.Select) and len(query.expressions) == 1 and isinstance(query.expressions[0], exp.Star)
        )
        quals = {c.qual for c in block.cols}
        name = alias
        keep_qual = False
        if name is None and star and len(quals) == 1 and None not in quals:
            name = next(iter(quals))
            keep_qual = True
        name = name or self.fresh_alias()
        if columns is not None and len(columns) != len(block.cols):
            raise SqlError("invalid_plan", f"alias {alias} lists {len(columns)} columns for {len(block.cols)}")
        table_alias = exp.TableAlias(this=ident(name))
        if columns:
            table_alias.set("columns", [ident(c) for c in columns])
        sub = exp.Subquery(this=query, alias=table_alias)
        self.derived_tables.append(sub)
        cols: list[Col] = []
        for i, c in enumerate(block.cols):
            sql_name = columns[i] if columns else block.out_names[i]
            wire_name = columns[i] if columns else c.name
            qual = alias if alias is not None else (c.qual if not keep_qual else name)
            cols.append(Col.of(qual, wire_name, sql_name, name))
        select = exp.Select(from_=exp.From(this=sub))
        self.made.append(select)
        return Block(
            select=select,
            cols=cols,
            stage=FROM,
            complete=block.complete or not star,
        )

    # ---- names ---------------------------------------------------------
    @staticmethod
    def matches(ref: str, col: Col) -> bool:
        if "." in ref:
            qual, name = ref.rsplit(".", 1)
            return col.qual is not None and col.qual.lower() == qual.lower() and col.name.lower() == name.lower()
        return col.name.lower() == ref.lower()

    def concat(self, first: list[Col], second: list[Col]) -> list[Col]:
        """``first + second``, handing ``first``'s name index on to the result (a join chain builds each
        index once instead of once per join: linear, not quadratic, in the number of joins)."""
        merged = first + second
        entry = self._by_name.pop(id(first), None)
        if entry is not None and entry[0] is first and entry[1] == len(first):
            index = entry[2]
            for c in second:
                index.setdefault(c.name.lower(), []).append(c)
                if c.qual is not None:
                    index.setdefault(f"{c.qual}.{c.name}".lower(), []).append(c)
            self._by_name[id(merged)] = (merged, len(merged), index)
        return merged

    def lookup(self, ref: str, cols: list[Col]) -> Col | None:
        entry = self._by_name.get(id(cols))
        if entry is None or entry[0] is not cols or entry[1] != len(cols):
            index: dict[str, list[Col]] = {}
            for c in cols:
                index.setdefault(c.name.lower(), []).append(c)
                if c.qual is not None:
                    index.setdefault(f"{c.qual}.{c.name}".lower(), []).append(c)
            entry = (cols, len(cols), index)
            self._by_name[id(cols)] = entry
        key = ref.lower()
        hits = entry[2].get(key)
        if hits and "." in key:  # ``q.c``: the columns qualified so (the key also finds a bare name with a dot)
            qual, name = key.rsplit(".", 1)
            hits = [c for c in hits if c.qual is not None and c.qual.lower() == qual and c.name.lower() == name]
        elif hits and len(hits) > 1:  # a bare name: the unqualified columns so named, if any, else all of them
            hits = [c for c in hits if c.qual is None] or hits
        if not hits:
            return None
        first = hits[0]
        if len(hits) > 1 and any(h.ref != first.ref for h in hits[1:]):
            raise SqlError("invalid_plan", f"column {ref} is ambiguous", detail={"column": ref})
        return first

    def resolve(self, ref: str, scopes: list[list[Col]]) -> exp.Expr:
        for cols in scopes:
            hit = self.lookup(ref, cols)
            if hit is not None:
                return hit.fresh_ref()
        # Without a catalog a bare name may belong to a scan we could not list.
        if "." not in ref:
            return column(ref)
        qual, name = ref.rsplit(".", 1)
        known = sorted({f"{c.qual}.{c.name}" if c.qual else c.name for cols in scopes for c in cols})
        raise SqlError(
            "unknown_column",
            f"column {ref} is not produced below this node",
            detail={"column": ref, "available": known},
        )

    # ---- expressions ---------------------------------------------------
    def sort_key(self, key: Expr, scope: list[list[Col]]) -> exp.Expr:
        return ordered(self.expr(key.get("expr"), scope), key)

    def expr(self, e: Any, scope: list[list[Col]]) -> exp.Expr:
        """Wire expression -> sqlglot expression, names resolved in ``scope``."""
        if not isinstance(e, dict):
            raise SqlError("invalid_plan", f"an expression must be an object, got {e!r}")
        if "col" in e:
            return self.resolve(str(e["col"]), scope)
        if "lit" in e:
            return literal(e, self.dialect_spec)
        if "subquery" in e:
            return self.subquery(e, scope)
        fn = e.get("fn")
        if not isinstance(fn, str):
            raise SqlError("invalid_plan", f"unknown expression {e!r}")
        fn_l = fn.lower()
        args = [self.expr(a, scope) for a in e.get("args") or []]
        return function(fn_l, args, e)

    def subquery(self, e: Expr, scope: list[list[Col]]) -> exp.Expr:
        block = self.node(e["subquery"], scope)
        if e.get("kind") == "exists":
            return exp.Exists(this=self.finish(block))
        query = self.finish(block)
        if e.get("kind") == "in":
            targets = [self.expr(a, scope) for a in e.get("args") or []]
            if not targets:
                raise SqlError("invalid_plan", "an IN subquery needs args [x]")
            target = targets[0] if len(targets) == 1 else exp.Tuple(expressions=targets)
            return exp.In(this=wrap_operand(target, 5), query=exp.Subquery(this=query))
        if e.get("kind", "scalar") != "scalar":
            raise SqlError("invalid_plan", f"unknown subquery kind {e.get('kind')!r}")
        return exp.Subquery(this=query)
