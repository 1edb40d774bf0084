"""Blocks: a SELECT under construction, its output columns and how names resolve.

A wire column ``q.c`` is resolved through a scope (``Col`` list) to the SQL
expression that reaches it from the current block, so derived tables may
rename columns without the plan knowing.
"""

from __future__ import annotations

import itertools
from typing import Any

from sqlglot import exp

from costmodel.wire.nodes import column_refs
from service.sql.common import dialect_name
from service.sql.errors import SqlError
from service.sql.render_cols import Block, Col
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


class BlockRenderer:
    """What every node renderer shares: dispatch, blocks, wrapping and name resolution."""

    def __init__(self, plan: Node, catalog: dict[str, Any] | None) -> None:
        self._plan = plan
        self._refs: dict[str, list[str]] | None = None  # ``column_refs(plan)``, made when a scan needs it
        self._catalog_tables: dict[str, Any] = (catalog or {}).get("tables") or {}
        #: the catalog's table names by their lower case (the last of a spelling wins), made on the first scan
        self._table_names: dict[str, str] | None = None
        self._columns: dict[str, list[str]] = {}  # a catalog table's column names, read on its first scan
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

    def scan_columns(self, table: str, qual: str) -> tuple[list[str], bool]:
        """A scan's columns and whether they are all of them: the catalog's list, else the columns the plan
        reads as ``qual.c`` (``column_refs``). Both are read on the first scan that needs them, not per plan:
        a catalog lists every table of a database, a plan reads a few."""
        if self._table_names is None:
            self._table_names = {name.lower(): name for name in self._catalog_tables}
        name = self._table_names.get(table.lower())
        if name is not None:
            found = self._columns.get(name)
            if found is None:
                raw = self._catalog_tables[name]
                cols = raw.get("columns", []) if isinstance(raw, dict) else []
                found = self._columns[name] = [c if isinstance(c, str) else c["name"] for c in cols]
            return list(found), True
        if self._refs is None:
            self._refs = column_refs(self._plan)
        return list(self._refs.get(qual.lower(), [])), False

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
        """Render one node whose inputs are ready (``Renderer``: one case per wire op)."""
        raise NotImplementedError

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
