"""Wire nodes -> SQL clauses: each ``op_*`` folds its node into the block below
or wraps that block as a derived table when SQL's clause order does not allow it.
"""

from __future__ import annotations

from typing import Any, assert_never

from sqlglot import exp

from costmodel.kinds.registry import is_wire_op
from service.sql.errors import SqlError
from service.sql.render_block import (
    AGG,
    DISTINCT,
    FROM,
    HAVING,
    LIMIT,
    ORDER,
    PROJECT,
    SETOP,
    WHERE,
    WINDOW,
    Block,
    BlockRenderer,
    Col,
)
from service.sql.render_expr import (
    Expr,
    Node,
    and_,
    column,
    conjuncts,
    frame,
    has_subquery,
    ident,
    ordered,
    output_name,
    refs_in,
)
from service.sql.table_sample import sample_clause

#: Dialects that read ``LATERAL VIEW explode(...)``; the others get ``JOIN UNNEST(...)``.
LATERAL_VIEW_DIALECTS = ("spark", "spark2", "databricks", "hive")


class Renderer(BlockRenderer):
    """Renders one wire plan; ``node`` dispatches to the ``op_*`` methods."""

    def dispatch(self, n: Node, outer: list[list[Col]]) -> Block:
        """The ``op_*`` method of ``n``'s op: exhaustive over the wire ops (mypy names a new kind's op here)."""
        op = n.get("op")
        if not is_wire_op(op):
            raise SqlError("invalid_plan", f"unknown node op {op!r}", detail={"id": n.get("id")})
        match op:
            case "scan":
                return self.op_scan(n, outer)
            case "filter":
                return self.op_filter(n, outer)
            case "project":
                return self.op_project(n, outer)
            case "aggregate":
                return self.op_aggregate(n, outer)
            case "join":
                return self.op_join(n, outer)
            case "union":
                return self.setop(n, outer, exp.Union)
            case "intersect":
                return self.setop(n, outer, exp.Intersect)
            case "except":
                return self.setop(n, outer, exp.Except)
            case "sort":
                return self.op_sort(n, outer)
            case "limit":
                return self.op_limit(n, outer)
            case "window":
                return self.op_window(n, outer)
            case "distinct":
                return self.op_distinct(n, outer)
            case "alias":
                return self.op_alias(n, outer)
            case "generate":
                return self.op_generate(n, outer)
            case "sample":
                return self.op_sample(n, outer)
            case _:
                assert_never(op)

    def op_scan(self, n: Node, outer: list[list[Col]]) -> Block:
        table = n.get("table")
        if not isinstance(table, str) or not table:
            raise SqlError("invalid_plan", "scan needs a table name", detail={"id": n.get("id")})
        qual = n.get("alias") or table
        names, known = self.scan_columns(table, qual)
        parts = table.split(".")
        source = exp.Table(
            this=ident(parts[-1]),
            db=ident(parts[-2]) if len(parts) > 1 else None,
            catalog=ident(parts[-3]) if len(parts) > 2 else None,
            alias=exp.TableAlias(this=ident(qual)) if n.get("alias") else None,
        )
        select = exp.Select(from_=exp.From(this=source))
        self.made.append(select)
        block = Block(
            select=select,
            cols=[Col.of(qual, c, c, qual) for c in names],
            stage=FROM,
            complete=known,
        )
        filters = n.get("filters") or []
        if filters:
            preds = [self.expr(f, [block.cols, *outer]) for f in filters]
            self.add_where(block, and_(preds))
        return block

    def op_filter(self, n: Node, outer: list[list[Col]]) -> Block:
        block = self.node(self.child(n, "input"), outer)
        if block.stage <= WHERE:
            self.add_where(block, self.expr(n.get("predicate"), [block.cols, *outer]))
        elif block.stage in (AGG, HAVING) and not block.projected and not block.grouping_sets:
            pred = self.expr(n.get("predicate"), [block.cols, *outer])
            having = block.select.args.get("having")
            block.select.set("having", exp.Having(this=and_([having.this, pred]) if having else pred))
            block.stage = HAVING
        else:
            block = self.wrap(block)
            self.add_where(block, self.expr(n.get("predicate"), [block.cols, *outer]))
        return block

    def op_project(self, n: Node, outer: list[list[Col]]) -> Block:
        block = self.node(self.child(n, "input"), outer)
        if block.projected or block.stage == SETOP:
            block = self.wrap(block)
        scope = [block.cols, *outer]
        items: list[exp.Expr] = []
        cols: list[Col] = []
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
                items.append(exp.Alias(this=sql, alias=ident(name)))
            cols.append(Col.of(qual, name, name))
        if not items:
            raise SqlError("invalid_plan", "project needs at least one expression", detail={"id": n.get("id")})
        block.select.set("expressions", items)
        block.cols = cols
        block.projected = True
        block.complete = True
        block.out_names = [c.name for c in cols]
        block.stage = max(block.stage, PROJECT)
        return block

    def op_aggregate(self, n: Node, outer: list[list[Col]]) -> Block:
        block = self.node(self.child(n, "input"), outer)
        if block.stage > WHERE or block.projected:
            block = self.wrap(block)
        scope = [block.cols, *outer]
        cols: list[Col] = []
        groups: list[exp.Expr] = []
        for item in n.get("group_by") or []:
            if isinstance(item, dict) and "as" in item and "expr" in item:
                sql = self.expr(item["expr"], scope)
                cols.append(Col(None, item["as"], sql))
            else:
                sql = self.expr(item, scope)
                hit = self.lookup(item.get("col", ""), block.cols) if isinstance(item, dict) and "col" in item else None
                if hit is not None:
                    cols.append(Col(hit.qual, hit.name, sql))
                else:
                    cols.append(Col(None, output_name(sql, item) or f"_g{len(cols) + 1}", sql))
            if isinstance(sql, exp.Literal):
                raise SqlError("invalid_plan", "grouping by a constant cannot be written in SQL GROUP BY")
            groups.append(sql)
        for item in n.get("aggregates") or []:
            cols.append(Col(None, item["as"], self.expr(item["expr"], scope)))
            self.made.append(cols[-1].ref)  # copied wherever the column is read (``Col.fresh_ref``)
        sets = n.get("grouping_sets")
        if sets is not None:
            listed = [exp.Tuple(expressions=[groups[i].copy() for i in grouping]) for grouping in sets]
            block.select.set("group", exp.Group(expressions=[exp.GroupingSets(expressions=listed)]))
            block.grouping_sets = True
        elif groups:
            block.select.set("group", exp.Group(expressions=groups))
        block.cols = cols
        block.complete = True
        block.stage = AGG
        block.grouped = True
        return block

    def op_window(self, n: Node, outer: list[list[Col]]) -> Block:
        block = self.node(self.child(n, "input"), outer)
        needed = refs_in([n.get("partition_by"), n.get("order_by"), n.get("functions")])
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
                spec=frame(item.get("frame")),
                over="OVER",
            )
            block.cols.append(Col(None, item["as"], window, window=True))
            self.made.append(window)
        block.stage = max(block.stage, WINDOW)
        return block

    def op_generate(self, n: Node, outer: list[list[Col]]) -> Block:
        """``LATERAL VIEW [OUTER] explode(...) alias AS cols`` on the block's FROM (sqlglot writes DuckDB's
        ``CROSS JOIN UNNEST`` from it); a later join or a second FROM item wraps the block first."""
        block = self.node(self.child(n, "input"), outer)
        if block.stage > WHERE or block.projected or block.select.args.get("where") is not None:
            block = self.wrap(block)
        alias = n.get("alias")
        columns = n.get("columns")
        if not isinstance(alias, str) or not isinstance(columns, list) or not columns:
            raise SqlError("invalid_plan", "generate needs an alias and columns", detail={"id": n.get("id")})
        generator = self.expr(n.get("generator"), [block.cols, *outer])
        table_alias = exp.TableAlias(this=ident(alias), columns=[ident(c) for c in columns])
        if self.dialect in LATERAL_VIEW_DIALECTS:
            lateral = exp.Lateral(this=generator, view=True, outer=bool(n.get("outer")), alias=table_alias)
            block.select.append("laterals", lateral)
        elif isinstance(generator, exp.Explode) and not generator.expressions:
            # DuckDB and the rest: [LEFT] JOIN UNNEST(x) AS alias(cols) (sqlglot's own rewrite drops OUTER)
            unnest = exp.Unnest(expressions=[generator.this], alias=table_alias)
            join = (
                exp.Join(this=unnest, side="LEFT", on=exp.true())
                if n.get("outer")
                else exp.Join(this=unnest, kind="CROSS")
            )
            block.select.append("joins", join)
        else:
            raise SqlError(
                "invalid_plan", f"cannot write this generator for {self.dialect}", detail={"id": n.get("id")}
            )
        block.cols = block.cols + [Col.of(alias, c, c, alias) for c in columns]
        block.stage = max(block.stage, WHERE)  # FROM is closed: a join after it needs a derived table
        return block

    def op_distinct(self, n: Node, outer: list[list[Col]]) -> Block:
        block = self.node(self.child(n, "input"), outer)
        if block.stage > PROJECT:
            block = self.wrap(block)
        self.ensure_projected(block)
        block.select.set("distinct", exp.Distinct())
        block.stage = DISTINCT
        return block

    def op_sort(self, n: Node, outer: list[list[Col]]) -> Block:
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
        needed = refs_in(keys)
        if any(c.window for c in block.cols if any(self.matches(r, c) for r in needed)):
            block = self.wrap(block)
        scope = [block.cols, *outer]
        block.select.set("order", exp.Order(expressions=[self.sort_key(k, scope) for k in keys]))
        block.stage = ORDER
        return block

    def output_sort_keys(self, block: Block, keys: list[Expr]) -> list[exp.Expr] | None:
        """ORDER BY output names of a projected block, or None when a key is not one."""
        out: list[exp.Expr] = []
        for key in keys:
            wire = key.get("expr") if isinstance(key, dict) else None
            if not isinstance(wire, dict) or not isinstance(wire.get("col"), str):
                return None
            hits = [i for i, c in enumerate(block.cols) if self.matches(wire["col"], c)]
            if len(hits) != 1:
                return None
            name = block.out_names[hits[0]]
            target: exp.Expr = exp.Literal.number(hits[0] + 1) if block.out_names.count(name) > 1 else column(name)
            out.append(ordered(target, key))
        return out

    def op_limit(self, n: Node, outer: list[list[Col]]) -> Block:
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

    def op_sample(self, n: Node, outer: list[list[Col]]) -> Block:
        """``TABLESAMPLE`` on the block's one FROM item (a table, or a derived table): a block that has more than
        that one item, a filter or anything after FROM is wrapped first, so the sample draws from exactly its input's
        rows; what comes above (a filter, a join) applies to the sampled rows."""
        block = self.node(self.child(n, "input"), outer)
        source = block.select.args["from_"].this if isinstance(block.select, exp.Select) else None
        if (
            block.stage != FROM
            or block.projected
            or block.sources != 1
            or any(block.select.args.get(k) for k in ("joins", "laterals", "where"))
            or not isinstance(source, (exp.Table, exp.Subquery))
            or source.args.get("sample") is not None
        ):
            block = self.wrap(block)
            source = block.select.args["from_"].this
        source.set("sample", sample_clause(n, self.dialect))
        return block

    def op_alias(self, n: Node, outer: list[list[Col]]) -> Block:
        block = self.node(self.child(n, "input"), outer)
        name = n.get("name")
        if not isinstance(name, str) or not name:
            raise SqlError("invalid_plan", "alias needs a name", detail={"id": n.get("id")})
        columns = n.get("columns")
        return self.wrap(block, alias=name, columns=list(columns) if columns else None)

    def op_join(self, n: Node, outer: list[list[Col]]) -> Block:
        jtype = n.get("type", "inner")
        left = self.node(self.child(n, "left"), outer)
        right = self.node(self.child(n, "right"), outer)
        if jtype in ("semi", "anti"):
            return self.semi_join(n, left, right, outer)
        if left.stage != FROM or left.projected:
            left = self.wrap(left)
        if right.stage != FROM or right.projected or right.sources != 1 or right.select.args.get("joins"):
            right = self.wrap(right)
        here = self.concat(left.cols, right.cols)
        scope = [here, *outer]
        on = n.get("on")
        lifted: list[Any] = []
        if jtype in ("inner", "cross") and on is not None:
            # Spark refuses correlated subqueries in a join condition. For an inner join
            # ``ON c AND s`` equals ``ON c WHERE s``, and a block with a WHERE is wrapped
            # before any further join, so the lifted conjuncts filter exactly this join.
            # The same for a conjunct reading an enclosing query's column (a correlated subquery's
            # own join): Spark reads outer references in WHERE only.

            def liftable(p: Any) -> bool:
                return has_subquery(p) or any(self.lookup(r, here) is None for r in refs_in(p))

            kept: list[Any] = []
            for p in conjuncts(on):
                (lifted if liftable(p) else kept).append(p)
            if lifted:
                on = {"fn": "and", "args": kept} if len(kept) > 1 else (kept[0] if kept else None)
        target = right.select.args["from_"].this
        if jtype == "cross" or (jtype == "inner" and on is None):
            join = exp.Join(this=target, kind="CROSS")
            if on is not None:
                join.set("kind", None)
                join.set("on", self.expr(on, scope))
        elif jtype in ("inner", "left", "right", "full"):
            # An outer join without a condition pairs every row (the engine leaves ``on`` empty
            # when it moved a constant or one-sided condition into an input): ``ON TRUE``.
            join = exp.Join(this=target, on=self.expr(on, scope) if on is not None else exp.true())
            if jtype != "inner":
                join.set("side", jtype.upper())
        else:
            raise SqlError("invalid_plan", f"unknown join type {jtype!r}", detail={"id": n.get("id")})
        left.select.append("joins", join)  # in place: setting a longer list re-parents every join (quadratic)
        left.cols = here
        left.complete = left.complete and right.complete
        left.sources += right.sources
        if lifted:
            self.add_where(left, and_([self.expr(p, scope) for p in lifted]))
        return left

    def semi_join(self, n: Node, left: Block, right: Block, outer: list[list[Col]]) -> Block:
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
        pred: exp.Expr = exp.Exists(this=right.select)
        if n.get("type") == "anti":
            pred = exp.Not(this=pred)
        self.add_where(left, pred)
        return left

    def setop(self, n: Node, outer: list[list[Col]], kind: type[exp.Expr]) -> Block:
        inputs = n.get("inputs") or []
        if len(inputs) < 2 or (kind is not exp.Union and len(inputs) != 2):
            raise SqlError("invalid_plan", f"{n.get('op')} needs two inputs (union: two or more)")
        queries: list[exp.Expr] = []
        first: Block | None = None
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
        cols = [Col.of(c.qual, name, name) for c, name in zip(first.cols, first.out_names, strict=True)]
        return Block(select=tree, cols=cols, stage=SETOP, projected=True, out_names=list(first.out_names))
