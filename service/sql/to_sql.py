"""Wire plan -> SQL text (Spark, DuckDB or any dialect sqlglot writes).

Nodes are folded into one SELECT block while SQL's clause order allows it
(FROM, WHERE, GROUP BY, HAVING, window, SELECT, DISTINCT, ORDER BY, LIMIT) and
wrapped as a derived table when it does not, so a filter the optimizer placed
below a join shows up as a filtered subquery at exactly that place.

A wire column ``q.c`` is resolved through a scope (``_Col`` list) to the SQL
expression that reaches it from the current block, so derived tables may
rename columns without the plan knowing.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from service.sql.common import WIRE_TO_SQLGLOT_FN, sqlglot_type
from service.sql.errors import SqlError

Node = dict[str, Any]
Expr = dict[str, Any]

# Block stages, in SQL clause order.
FROM, WHERE, AGG, HAVING, WINDOW, PROJECT, DISTINCT, ORDER, LIMIT, SETOP = range(10)

_CMP: dict[str, type[exp.Expression]] = {
    "=": exp.EQ,
    "!=": exp.NEQ,
    "<>": exp.NEQ,
    "<": exp.LT,
    "<=": exp.LTE,
    ">": exp.GT,
    ">=": exp.GTE,
    "like": exp.Like,
    "ilike": exp.ILike,
    "rlike": exp.RegexpLike,
}
_ARITH: dict[str, type[exp.Expression]] = {
    "+": exp.Add,
    "-": exp.Sub,
    "*": exp.Mul,
    "%": exp.Mod,
    "div": exp.IntDiv,
}

# Binding strength, loosest first; used to parenthesise operands.
_PREC: dict[type[exp.Expression], int] = {
    exp.Or: 1,
    exp.And: 2,
    exp.Not: 3,
    **{t: 4 for t in _CMP.values()},
    exp.In: 4,
    exp.Between: 4,
    exp.Is: 4,
    exp.DPipe: 5,
    exp.Add: 6,
    exp.Sub: 6,
    exp.Mul: 7,
    exp.Div: 7,
    exp.Mod: 7,
    exp.IntDiv: 7,
    exp.Neg: 8,
}


def _prec(e: exp.Expression) -> int:
    return _PREC.get(type(e), 10)


def _wrap_operand(e: exp.Expression, parent_prec: int, strict: bool = False) -> exp.Expression:
    """Parenthesise ``e`` when it binds looser than its parent operator."""
    p = _prec(e)
    if p < parent_prec or (strict and p == parent_prec):
        return exp.Paren(this=e)
    return e


def _ident(name: str) -> exp.Identifier:
    """An identifier, quoted only when the name is not a plain lower-case word."""
    safe = name.isidentifier() and name == name.lower() and name.upper() not in _KEYWORDS
    return exp.Identifier(this=name, quoted=not safe)


_KEYWORDS = {k.upper() for k in sqlglot.tokens.Tokenizer.KEYWORDS} | {
    "DATE",
    "TIMESTAMP",
    "ORDER",
    "GROUP",
    "USER",
    "VALUE",
    "YEAR",
    "MONTH",
    "DAY",
    "KEY",
    "TIME",
    "INTERVAL",
}


def _column(name: str, table: str | None = None) -> exp.Column:
    return exp.Column(this=_ident(name), table=_ident(table) if table else None)


@dataclass
class _Col:
    """One output column of a block: its wire name and how SQL reaches it."""

    qual: str | None
    name: str
    ref: exp.Expression
    window: bool = False  # ref holds a window function


@dataclass
class _Block:
    """A SELECT under construction."""

    select: exp.Expression
    cols: list[_Col]
    stage: int
    projected: bool = False
    complete: bool = True  # cols lists every column (False: scan columns unknown)
    sources: int = 1  # FROM items (tables/derived tables) joined in this block
    out_names: list[str] = field(default_factory=list)


def plan_to_sql(plan: dict[str, Any], dialect: str = "spark", catalog: dict[str, Any] | None = None) -> str:
    """Render a wire plan as pretty-printed SQL in ``dialect``.

    ``catalog`` is optional: with it, scans know every column (needed only when
    a plan's final output is a bare ``SELECT *`` over a wrapped join).
    """
    try:
        sqlglot.Dialect.get_or_raise(dialect)
    except ValueError as err:
        raise SqlError("unknown_dialect", f"unknown SQL dialect {dialect!r}") from err
    if not isinstance(plan, dict) or "op" not in plan:
        raise SqlError("invalid_plan", "a plan is a node object with an 'op'")
    renderer = _Renderer(plan, catalog)
    query = renderer.finish(renderer.node(plan, []))
    try:
        return query.sql(dialect=dialect, pretty=True)
    except SqlglotError as err:
        raise SqlError("invalid_plan", f"cannot write this plan as {dialect} SQL: {err}") from err


def _collect_refs(plan: Any, out: dict[str, list[str]]) -> None:
    """Every ``q.c`` column reference in the plan, grouped by qualifier."""
    if isinstance(plan, dict):
        col = plan.get("col")
        if isinstance(col, str) and "." in col:
            qual, name = col.rsplit(".", 1)
            names = out.setdefault(qual.lower(), [])
            if name not in names:
                names.append(name)
        for value in plan.values():
            _collect_refs(value, out)
    elif isinstance(plan, list):
        for value in plan:
            _collect_refs(value, out)


class _Renderer:
    def __init__(self, plan: Node, catalog: dict[str, Any] | None) -> None:
        self.refs: dict[str, list[str]] = {}
        _collect_refs(plan, self.refs)
        self.tables: dict[str, list[str]] = {}
        for name, raw in ((catalog or {}).get("tables") or {}).items():
            cols = raw.get("columns", []) if isinstance(raw, dict) else []
            self.tables[name.lower()] = [c if isinstance(c, str) else c["name"] for c in cols]
        self.counter = itertools.count(1)

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
    def node(self, n: Node, outer: list[list[_Col]]) -> _Block:
        """Render ``n``; ``outer`` are the enclosing scopes for correlated names."""
        op = n.get("op")
        method = getattr(self, f"op_{op}", None)
        if method is None:
            raise SqlError("invalid_plan", f"unknown node op {op!r}", detail={"id": n.get("id")})
        return method(n, outer)

    def op_scan(self, n: Node, outer: list[list[_Col]]) -> _Block:
        table = n.get("table")
        if not isinstance(table, str) or not table:
            raise SqlError("invalid_plan", "scan needs a table name", detail={"id": n.get("id")})
        qual = n.get("alias") or table
        known = self.tables.get(table.lower())
        names = list(known) if known is not None else list(self.refs.get(qual.lower(), []))
        parts = table.split(".")
        source = exp.Table(
            this=_ident(parts[-1]),
            db=_ident(parts[-2]) if len(parts) > 1 else None,
            catalog=_ident(parts[-3]) if len(parts) > 2 else None,
            alias=exp.TableAlias(this=_ident(qual)) if n.get("alias") else None,
        )
        block = _Block(
            select=exp.Select(from_=exp.From(this=source)),
            cols=[_Col(qual, c, _column(c, qual)) for c in names],
            stage=FROM,
            complete=known is not None,
        )
        filters = n.get("filters") or []
        if filters:
            preds = [self.expr(f, [block.cols, *outer]) for f in filters]
            self.add_where(block, _and(preds))
        return block

    def op_filter(self, n: Node, outer: list[list[_Col]]) -> _Block:
        block = self.node(self.child(n, "input"), outer)
        if block.stage <= WHERE:
            self.add_where(block, self.expr(n.get("predicate"), [block.cols, *outer]))
        elif block.stage in (AGG, HAVING) and not block.projected:
            pred = self.expr(n.get("predicate"), [block.cols, *outer])
            having = block.select.args.get("having")
            block.select.set("having", exp.Having(this=_and([having.this, pred]) if having else pred))
            block.stage = HAVING
        else:
            block = self.wrap(block)
            self.add_where(block, self.expr(n.get("predicate"), [block.cols, *outer]))
        return block

    @staticmethod
    def add_where(block: _Block, pred: exp.Expression) -> None:
        where = block.select.args.get("where")
        block.select.set("where", exp.Where(this=_and([where.this, pred]) if where else pred))
        block.stage = max(block.stage, WHERE)

    def op_project(self, n: Node, outer: list[list[_Col]]) -> _Block:
        block = self.node(self.child(n, "input"), outer)
        if block.projected or block.stage == SETOP:
            block = self.wrap(block)
        scope = [block.cols, *outer]
        items: list[exp.Expression] = []
        cols: list[_Col] = []
        for item in n.get("exprs") or []:
            wire = item.get("expr")
            name = item.get("as")
            if not isinstance(name, str):
                raise SqlError("invalid_plan", "project exprs need an 'as' name", detail={"id": n.get("id")})
            sql = self.expr(wire, scope)
            qual = None
            if isinstance(wire, dict) and isinstance(wire.get("col"), str):
                hit = self.lookup(wire["col"], block.cols)
                if hit is not None and hit.name == name:
                    qual = hit.qual
            if isinstance(sql, exp.Column) and sql.name == name:
                items.append(sql)
            else:
                items.append(exp.Alias(this=sql, alias=_ident(name)))
            cols.append(_Col(qual, name, _column(name)))
        if not items:
            raise SqlError("invalid_plan", "project needs at least one expression", detail={"id": n.get("id")})
        block.select.set("expressions", items)
        block.cols = cols
        block.projected = True
        block.complete = True
        block.out_names = [c.name for c in cols]
        block.stage = max(block.stage, PROJECT)
        self.dedupe_outputs(block)
        return block

    def op_aggregate(self, n: Node, outer: list[list[_Col]]) -> _Block:
        block = self.node(self.child(n, "input"), outer)
        if block.stage > WHERE or block.projected:
            block = self.wrap(block)
        scope = [block.cols, *outer]
        cols: list[_Col] = []
        groups: list[exp.Expression] = []
        for item in n.get("group_by") or []:
            if isinstance(item, dict) and "as" in item and "expr" in item:
                sql = self.expr(item["expr"], scope)
                cols.append(_Col(None, item["as"], sql))
            else:
                sql = self.expr(item, scope)
                hit = self.lookup(item.get("col", ""), block.cols) if isinstance(item, dict) and "col" in item else None
                if hit is not None:
                    cols.append(_Col(hit.qual, hit.name, sql))
                else:
                    cols.append(_Col(None, sql.alias_or_name or f"_g{len(cols) + 1}", sql))
            if isinstance(sql, exp.Literal):
                raise SqlError("invalid_plan", "grouping by a constant cannot be written in SQL GROUP BY")
            groups.append(sql)
        for item in n.get("aggregates") or []:
            cols.append(_Col(None, item["as"], self.expr(item["expr"], scope)))
        if groups:
            block.select.set("group", exp.Group(expressions=groups))
        block.cols = cols
        block.complete = True
        block.stage = AGG
        return block

    def op_window(self, n: Node, outer: list[list[_Col]]) -> _Block:
        block = self.node(self.child(n, "input"), outer)
        needed = _refs_in([n.get("partition_by"), n.get("order_by"), n.get("functions")])
        nested = any(c.window for c in block.cols if any(self.matches(r, c) for r in needed))
        if block.projected or block.stage >= ORDER or block.stage == SETOP or nested:
            block = self.wrap(block)
        scope = [block.cols, *outer]
        partition = [self.expr(p, scope) for p in n.get("partition_by") or []]
        order = [self.sort_key(k, scope) for k in n.get("order_by") or []]
        for item in n.get("functions") or []:
            window = exp.Window(
                this=self.expr(item["expr"], scope),
                partition_by=partition and [p.copy() for p in partition] or None,
                order=exp.Order(expressions=[o.copy() for o in order]) if order else None,
                spec=_frame(item.get("frame")),
                over="OVER",
            )
            block.cols.append(_Col(None, item["as"], window, window=True))
        block.stage = max(block.stage, WINDOW)
        return block

    def op_distinct(self, n: Node, outer: list[list[_Col]]) -> _Block:
        block = self.node(self.child(n, "input"), outer)
        if block.stage > PROJECT:
            block = self.wrap(block)
        self.ensure_projected(block)
        block.select.set("distinct", exp.Distinct())
        block.stage = DISTINCT
        return block

    def op_sort(self, n: Node, outer: list[list[_Col]]) -> _Block:
        block = self.node(self.child(n, "input"), outer)
        keys = n.get("keys") or []
        if block.stage >= ORDER or block.stage == SETOP:
            block = self.wrap(block)
        elif block.projected:
            ordered = self.output_sort_keys(block, keys)
            if ordered is None:
                block = self.wrap(block)
            else:
                block.select.set("order", exp.Order(expressions=ordered))
                block.stage = ORDER
                return block
        needed = _refs_in(keys)
        if any(c.window for c in block.cols if any(self.matches(r, c) for r in needed)):
            block = self.wrap(block)
        scope = [block.cols, *outer]
        block.select.set("order", exp.Order(expressions=[self.sort_key(k, scope) for k in keys]))
        block.stage = ORDER
        return block

    def output_sort_keys(self, block: _Block, keys: list[Expr]) -> list[exp.Expression] | None:
        """ORDER BY output names of a projected block, or None when a key is not one."""
        out: list[exp.Expression] = []
        for key in keys:
            wire = key.get("expr") if isinstance(key, dict) else None
            if not isinstance(wire, dict) or not isinstance(wire.get("col"), str):
                return None
            hits = [i for i, c in enumerate(block.cols) if self.matches(wire["col"], c)]
            if len(hits) != 1:
                return None
            name = block.out_names[hits[0]]
            target: exp.Expression = (
                exp.Literal.number(hits[0] + 1) if block.out_names.count(name) > 1 else _column(name)
            )
            out.append(_ordered(target, key))
        return out

    def op_limit(self, n: Node, outer: list[list[_Col]]) -> _Block:
        block = self.node(self.child(n, "input"), outer)
        if block.stage >= LIMIT:
            block = self.wrap(block)
        count = n.get("count")
        offset = n.get("offset") or 0
        if count is not None:
            block.select.set("limit", exp.Limit(expression=exp.Literal.number(int(count))))
        if offset:
            block.select.set("offset", exp.Offset(expression=exp.Literal.number(int(offset))))
        block.stage = LIMIT
        return block

    def op_alias(self, n: Node, outer: list[list[_Col]]) -> _Block:
        block = self.node(self.child(n, "input"), outer)
        name = n.get("name")
        if not isinstance(name, str) or not name:
            raise SqlError("invalid_plan", "alias needs a name", detail={"id": n.get("id")})
        columns = n.get("columns")
        return self.wrap(block, alias=name, columns=list(columns) if columns else None)

    def op_join(self, n: Node, outer: list[list[_Col]]) -> _Block:
        jtype = n.get("type", "inner")
        left = self.node(self.child(n, "left"), outer)
        right = self.node(self.child(n, "right"), outer)
        if jtype in ("semi", "anti"):
            return self.semi_join(n, left, right, outer)
        if left.stage != FROM or left.projected:
            left = self.wrap(left)
        if right.stage != FROM or right.projected or right.sources != 1 or right.select.args.get("joins"):
            right = self.wrap(right)
        scope = [left.cols + right.cols, *outer]
        on = n.get("on")
        lifted: list[Any] = []
        if jtype in ("inner", "cross") and on is not None:
            # Spark refuses correlated subqueries in a join condition. For an inner join
            # ``ON c AND s`` equals ``ON c WHERE s``, and a block with a WHERE is wrapped
            # before any further join, so the lifted conjuncts filter exactly this join.
            kept = [p for p in _conjuncts(on) if not _has_subquery(p)]
            lifted = [p for p in _conjuncts(on) if _has_subquery(p)]
            if lifted:
                on = {"fn": "and", "args": kept} if len(kept) > 1 else (kept[0] if kept else None)
        target = right.select.args["from_"].this
        if jtype == "cross" or (jtype == "inner" and on is None):
            join = exp.Join(this=target, kind="CROSS")
            if on is not None:
                join.set("kind", None)
                join.set("on", self.expr(on, scope))
        elif jtype in ("inner", "left", "right", "full"):
            if on is None:
                raise SqlError("invalid_plan", f"{jtype} join needs an 'on' condition", detail={"id": n.get("id")})
            join = exp.Join(this=target, on=self.expr(on, scope))
            if jtype != "inner":
                join.set("side", jtype.upper())
        else:
            raise SqlError("invalid_plan", f"unknown join type {jtype!r}", detail={"id": n.get("id")})
        joins = list(left.select.args.get("joins") or [])
        joins.append(join)
        left.select.set("joins", joins)
        left.cols = left.cols + right.cols
        left.complete = left.complete and right.complete
        left.sources += right.sources
        if lifted:
            self.add_where(left, _and([self.expr(p, scope) for p in lifted]))
        return left

    def semi_join(self, n: Node, left: _Block, right: _Block, outer: list[list[_Col]]) -> _Block:
        """``[NOT] EXISTS (SELECT 1 FROM right WHERE on)``; null-aware anti = NOT IN semantics."""
        if left.stage > WHERE or left.projected:
            left = self.wrap(left)
        if right.stage > WHERE or right.projected:
            right = self.wrap(right)
        on = n.get("on")
        if on is not None:
            cond = self.expr(on, [right.cols, left.cols, *outer])
            if n.get("type") == "anti" and n.get("null_aware"):
                # NOT IN excludes a row when the comparison is TRUE or NULL for some inner row.
                cond = exp.Coalesce(this=cond, expressions=[exp.true()])
            self.add_where(right, cond)
        right.select.set("expressions", [exp.Literal.number(1)])
        pred: exp.Expression = exp.Exists(this=right.select)
        if n.get("type") == "anti":
            pred = exp.Not(this=pred)
        self.add_where(left, pred)
        return left

    def op_union(self, n: Node, outer: list[list[_Col]]) -> _Block:
        return self.setop(n, outer, exp.Union)

    def op_intersect(self, n: Node, outer: list[list[_Col]]) -> _Block:
        return self.setop(n, outer, exp.Intersect)

    def op_except(self, n: Node, outer: list[list[_Col]]) -> _Block:
        return self.setop(n, outer, exp.Except)

    def setop(self, n: Node, outer: list[list[_Col]], kind: type[exp.Expression]) -> _Block:
        inputs = n.get("inputs") or []
        if len(inputs) < 2 or (kind is not exp.Union and len(inputs) != 2):
            raise SqlError("invalid_plan", f"{n.get('op')} needs two inputs (union: two or more)")
        queries: list[exp.Expression] = []
        first: _Block | None = None
        for child in inputs:
            block = self.node(child, outer)
            if block.stage >= ORDER:
                block = self.wrap(block)
            if first is None:
                first = block
            queries.append(self.finish(block))
        assert first is not None
        tree = queries[0]
        for q in queries[1:]:
            tree = kind(this=tree, expression=q, distinct=not n.get("all", False))
        cols = [_Col(c.qual, name, _column(name)) for c, name in zip(first.cols, first.out_names, strict=True)]
        return _Block(select=tree, cols=cols, stage=SETOP, projected=True, out_names=list(first.out_names))

    # ---- blocks --------------------------------------------------------
    def ensure_projected(self, block: _Block) -> None:
        """Give the block an explicit SELECT list (``*`` where that is exact)."""
        if block.projected:
            return
        plain = [c for c in block.cols if isinstance(c.ref, exp.Column) and c.ref.name == c.name and not c.window]
        quals = {c.qual for c in block.cols if c in plain}
        names = [c.name.lower() for c in plain]
        # ``*`` is exact when it cannot expose clashing names: one source, or
        # every column known and every name distinct. Grouped blocks list keys.
        one_source = len(quals) <= 1 and block.sources == 1
        all_distinct = block.complete and len(set(names)) == len(names)
        star_ok = block.stage not in (AGG, HAVING) and (one_source or all_distinct)
        extras = [c for c in block.cols if c not in plain]
        items: list[exp.Expression] = []
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
                name = _unique(f"{c.qual}_{c.name}" if c.qual else c.name, taken)
            taken.add(name.lower())
            if isinstance(c.ref, exp.Column) and c.ref.name == name:
                items.append(c.ref.copy())
            else:
                items.append(exp.Alias(this=c.ref.copy(), alias=_ident(name)))
            cols.append(c)
            out.append(name)
        if not items:
            items.append(exp.Star())
        block.select.set("expressions", items)
        block.cols = [_Col(c.qual, c.name, _column(o)) for c, o in zip(cols, out, strict=True)]
        block.out_names = out
        block.projected = True
        block.stage = max(block.stage, PROJECT)

    @staticmethod
    def dedupe_outputs(block: _Block) -> None:
        """Duplicate output names become name_2, ... so a derived table can expose them."""
        taken: set[str] = set()
        for i, name in enumerate(block.out_names):
            if name.lower() not in taken:
                taken.add(name.lower())
                continue
            new = _unique(name, taken)
            taken.add(new.lower())
            block.out_names[i] = new
            item = block.select.expressions[i]
            block.select.expressions[i].replace(exp.Alias(this=item.unalias().copy(), alias=_ident(new)))

    def finish(self, block: _Block) -> exp.Expression:
        """The block as a complete query."""
        if block.stage == SETOP:
            return block.select
        self.ensure_projected(block)
        return block.select

    def wrap(self, block: _Block, alias: str | None = None, columns: list[str] | None = None) -> _Block:
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
        table_alias = exp.TableAlias(this=_ident(name))
        if columns:
            table_alias.set("columns", [_ident(c) for c in columns])
        sub = exp.Subquery(this=query, alias=table_alias)
        cols: list[_Col] = []
        for i, c in enumerate(block.cols):
            sql_name = columns[i] if columns else block.out_names[i]
            wire_name = columns[i] if columns else c.name
            qual = alias if alias is not None else (c.qual if not keep_qual else name)
            cols.append(_Col(qual, wire_name, _column(sql_name, name)))
        return _Block(
            select=exp.Select(from_=exp.From(this=sub)),
            cols=cols,
            stage=FROM,
            complete=block.complete or not star,
        )

    # ---- names ---------------------------------------------------------
    @staticmethod
    def matches(ref: str, col: _Col) -> bool:
        if "." in ref:
            qual, name = ref.rsplit(".", 1)
            return col.qual is not None and col.qual.lower() == qual.lower() and col.name.lower() == name.lower()
        return col.name.lower() == ref.lower()

    def lookup(self, ref: str, cols: list[_Col]) -> _Col | None:
        hits = [c for c in cols if self.matches(ref, c)]
        if len(hits) > 1 and "." not in ref:
            unqualified = [c for c in hits if c.qual is None]
            hits = unqualified or hits
        if not hits:
            return None
        first = hits[0]
        if any(h.ref != first.ref for h in hits[1:]):
            raise SqlError("invalid_plan", f"column {ref} is ambiguous", detail={"column": ref})
        return first

    def resolve(self, ref: str, scopes: list[list[_Col]]) -> exp.Expression:
        for cols in scopes:
            hit = self.lookup(ref, cols)
            if hit is not None:
                return hit.ref.copy()
        # Without a catalog a bare name may belong to a scan we could not list.
        if "." not in ref:
            return _column(ref)
        qual, name = ref.rsplit(".", 1)
        known = sorted({f"{c.qual}.{c.name}" if c.qual else c.name for cols in scopes for c in cols})
        raise SqlError(
            "unknown_column",
            f"column {ref} is not produced below this node",
            detail={"column": ref, "available": known},
        )

    # ---- expressions ---------------------------------------------------
    def sort_key(self, key: Expr, scope: list[list[_Col]]) -> exp.Expression:
        return _ordered(self.expr(key.get("expr"), scope), key)

    def expr(self, e: Any, scope: list[list[_Col]]) -> exp.Expression:
        """Wire expression -> sqlglot expression, names resolved in ``scope``."""
        if not isinstance(e, dict):
            raise SqlError("invalid_plan", f"an expression must be an object, got {e!r}")
        if "col" in e:
            return self.resolve(str(e["col"]), scope)
        if "lit" in e:
            return _literal(e)
        if "subquery" in e:
            return self.subquery(e, scope)
        fn = e.get("fn")
        if not isinstance(fn, str):
            raise SqlError("invalid_plan", f"unknown expression {e!r}")
        fn_l = fn.lower()
        args = [self.expr(a, scope) for a in e.get("args") or []]
        return _function(fn_l, args, e)

    def subquery(self, e: Expr, scope: list[list[_Col]]) -> exp.Expression:
        block = self.node(e["subquery"], scope)
        if e.get("kind") == "exists":
            return exp.Exists(this=self.finish(block))
        query = self.finish(block)
        if e.get("kind") == "in":
            targets = [self.expr(a, scope) for a in e.get("args") or []]
            if not targets:
                raise SqlError("invalid_plan", "an IN subquery needs args [x]")
            target = targets[0] if len(targets) == 1 else exp.Tuple(expressions=targets)
            return exp.In(this=_wrap_operand(target, 5), query=exp.Subquery(this=query))
        if e.get("kind", "scalar") != "scalar":
            raise SqlError("invalid_plan", f"unknown subquery kind {e.get('kind')!r}")
        return exp.Subquery(this=query)


def _refs_in(value: Any) -> list[str]:
    found: dict[str, list[str]] = {}
    _collect_refs(value, found)
    out = [f"{q}.{n}" for q, names in found.items() for n in names]

    def bare(v: Any) -> None:
        if isinstance(v, dict):
            if isinstance(v.get("col"), str) and "." not in v["col"]:
                out.append(v["col"])
            for x in v.values():
                bare(x)
        elif isinstance(v, list):
            for x in v:
                bare(x)

    bare(value)
    return out


def _conjuncts(pred: Any) -> list[Any]:
    """A wire predicate's top-level AND parts, nested ``and`` calls flattened."""
    if isinstance(pred, dict) and pred.get("fn") == "and":
        return [part for arg in pred.get("args") or [] for part in _conjuncts(arg)]
    return [pred]


def _has_subquery(value: Any) -> bool:
    if isinstance(value, dict):
        return "subquery" in value or any(_has_subquery(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_subquery(v) for v in value)
    return False


def _unique(name: str, taken: set[str]) -> str:
    if name.lower() not in taken:
        return name
    for i in itertools.count(2):
        candidate = f"{name}_{i}"
        if candidate.lower() not in taken:
            return candidate
    raise AssertionError("unreachable")


def _and(preds: list[exp.Expression]) -> exp.Expression:
    out = _wrap_operand(preds[0], 2)
    for p in preds[1:]:
        out = exp.And(this=out, expression=_wrap_operand(p, 2))
    return out


def _ordered(e: exp.Expression, key: Expr) -> exp.Expression:
    return exp.Ordered(this=e, desc=bool(key.get("desc")), nulls_first=bool(key.get("nulls_first")))


def _frame(frame: Any) -> exp.Expression | None:
    """The wire frame extension ``{"kind", "start", "end"}`` as a sqlglot WindowSpec."""
    if not frame:
        return None

    def bound(text: str) -> tuple[Any, Any]:
        words = str(text).lower().split()
        if words == ["current", "row"]:
            return "CURRENT ROW", None
        if len(words) == 2 and words[1] in ("preceding", "following"):
            value: Any = "UNBOUNDED" if words[0] == "unbounded" else exp.Literal.number(int(words[0]))
            return value, words[1].upper()
        raise SqlError("invalid_plan", f"bad window frame bound {text!r}")

    start, start_side = bound(frame.get("start", "unbounded preceding"))
    end, end_side = bound(frame.get("end", "current row"))
    kind = str(frame.get("kind", "rows")).upper()
    return exp.WindowSpec(kind=kind, start=start, start_side=start_side, end=end, end_side=end_side)


def _literal(e: Expr) -> exp.Expression:
    value = e["lit"]
    typ = str(e.get("type") or "").lower()
    if value is None:
        if typ in ("", "null"):
            return exp.Null()
        return exp.Cast(this=exp.Null(), to=sqlglot_type(typ))
    if typ == "boolean" or isinstance(value, bool):
        return exp.Boolean(this=bool(value))
    if typ in ("date", "timestamp"):
        return exp.Cast(this=exp.Literal.string(str(value)), to=sqlglot_type(typ))
    if typ == "string" or isinstance(value, str) and typ not in ("decimal", "double", "int", "bigint"):
        return exp.Literal.string(str(value))
    if typ in ("int", "bigint", "smallint", "tinyint") or (isinstance(value, int) and typ == ""):
        number = _signed(str(abs(int(value))), int(value) < 0)
        if typ == "bigint" and -(2**31) <= int(value) < 2**31:
            return exp.Cast(this=number, to=sqlglot_type("bigint"))
        return number
    if typ in ("double", "float"):
        f = float(value)
        if math.isnan(f) or math.isinf(f):
            return exp.Cast(this=exp.Literal.string(str(f)), to=sqlglot_type("double"))
        text = repr(abs(f))
        if "e" not in text:
            text += "E0"
        return _signed(text, f < 0)
    # decimal (or an untyped float): plain positional notation keeps it DECIMAL in Spark.
    text = format(Decimal(str(value)), "f")
    return _signed(text.lstrip("-"), text.startswith("-"))


def _signed(digits: str, negative: bool) -> exp.Expression:
    """A numeric literal from unsigned digits; negatives are parenthesised ``(-3)``."""
    number = exp.Literal.number(digits)
    return exp.Paren(this=exp.Neg(this=number)) if negative else number


def _function(fn: str, args: list[exp.Expression], e: Expr) -> exp.Expression:
    """A wire operator or function call as sqlglot, operands parenthesised by precedence."""
    n = len(args)

    def need(count: int) -> None:
        if n != count:
            raise SqlError("invalid_plan", f"{fn} takes {count} arguments, got {n}")

    if fn in _CMP:
        need(2)
        return _CMP[fn](this=_wrap_operand(args[0], 5), expression=_wrap_operand(args[1], 5))
    if fn == "-" and n == 1:
        return exp.Neg(this=_wrap_operand(args[0], 8))
    if fn in _ARITH:
        need(2)
        p = _PREC[_ARITH[fn]]
        return _ARITH[fn](this=_wrap_operand(args[0], p), expression=_wrap_operand(args[1], p, strict=True))
    if fn == "/":
        need(2)
        return exp.Div(
            this=_wrap_operand(args[0], 7), expression=_wrap_operand(args[1], 7, strict=True), typed=False, safe=True
        )
    if fn in ("and", "or"):
        if n == 0:
            raise SqlError("invalid_plan", f"{fn} needs arguments")
        kind = exp.And if fn == "and" else exp.Or
        p = _PREC[kind]
        out = _wrap_operand(args[0], p)
        for a in args[1:]:
            out = kind(this=out, expression=_wrap_operand(a, p))
        return out
    if fn == "not":
        need(1)
        return exp.Not(this=_wrap_operand(args[0], 5))
    if fn == "is_null":
        need(1)
        return exp.Is(this=_wrap_operand(args[0], 5), expression=exp.Null())
    if fn == "is_not_null":
        need(1)
        return exp.Not(this=exp.Is(this=_wrap_operand(args[0], 5), expression=exp.Null()))
    if fn == "in":
        if n < 2:
            raise SqlError("invalid_plan", "in needs [x, v1, ...]")
        return exp.In(this=_wrap_operand(args[0], 5), expressions=args[1:])
    if fn == "between":
        need(3)
        return exp.Between(
            this=_wrap_operand(args[0], 5), low=_wrap_operand(args[1], 5), high=_wrap_operand(args[2], 5)
        )
    if fn == "cast":
        need(1)
        if not e.get("type"):
            raise SqlError("invalid_plan", "cast needs a 'type'")
        return exp.Cast(this=args[0], to=sqlglot_type(str(e["type"])))
    if fn == "case":
        if n < 2:
            raise SqlError("invalid_plan", "case needs [cond, value, ...]")
        ifs = [exp.If(this=args[i], true=args[i + 1]) for i in range(0, n - 1, 2)]
        return exp.Case(ifs=ifs, default=args[-1] if n % 2 else None)
    if fn == "extract":
        need(2)
        unit = e["args"][0].get("lit") if isinstance(e["args"][0], dict) else None
        if not isinstance(unit, str):
            raise SqlError("invalid_plan", "extract's first argument is the unit as a string literal")
        return exp.Extract(this=exp.Var(this=unit.upper()), expression=args[1])
    if fn == "concat":
        if n == 0:
            raise SqlError("invalid_plan", "concat needs arguments")
        out = _wrap_operand(args[0], 6)
        for a in args[1:]:
            out = exp.DPipe(this=out, expression=_wrap_operand(a, 6), safe=True)
        return out
    if fn == "count" and n == 0:
        return exp.Count(this=exp.Star())
    if fn == "udf":
        name = e.get("name")
        if not isinstance(name, str):
            raise SqlError("invalid_plan", "a udf needs a 'name'")
        return exp.Anonymous(this=name, expressions=args)
    name = WIRE_TO_SQLGLOT_FN.get(fn, fn)
    call_args: list[exp.Expression] = [exp.Distinct(expressions=args)] if e.get("distinct") else args
    try:
        return exp.func(name, *call_args)
    except (SqlglotError, ValueError, TypeError, KeyError) as err:
        raise SqlError("invalid_plan", f"cannot call {fn} with {n} arguments: {err}") from err
