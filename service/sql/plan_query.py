"""Queries and FROM -> plan: set operations, CTEs, derived tables, joins.

A query is a SELECT, a set operation or a parenthesised query with ORDER BY /
LIMIT; each becomes its node tree without moving anything (see docs/sql-adapter.md).
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from service.sql.parse import Tables, unsupported
from service.sql.plan_expr import ExprBuilder, Node
from service.sql.table_sample import sample_node


def int_literal(node: exp.Expr | None, what: str) -> int:
    if isinstance(node, exp.Literal) and not node.is_string and re.fullmatch(r"\d+", node.this):
        return int(node.this)
    raise unsupported(f"{what} that is not an integer literal", node)


def _refuse_pivot(src: exp.Expr) -> None:
    """PIVOT/UNPIVOT turn rows into columns: no plan node does that, so they are refused by name."""
    for pivot in src.args.get("pivots") or []:
        raise unsupported("UNPIVOT" if pivot.args.get("unpivot") else "PIVOT", pivot)


class QueryBuilder(ExprBuilder):
    """Walks a qualified sqlglot tree and emits wire nodes."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self.ctes: dict[str, exp.CTE] = {}
        #: each CTE body's plan (``_cte_body``), by the CTE and the CTEs it sees, with the CTE kept as a guard
        self._cte_plans: dict[tuple[int, tuple[tuple[str, int], ...]], tuple[exp.CTE, Node]] = {}
        # The outermost SELECT (after qualification) and the names the engine gives its outputs.
        self.top_names: tuple[exp.Select, list[str]] | None = None
        #: whether the query holds any aggregate or window call (``survey``); False skips looking for them
        self.has_aggregates = True
        self.has_windows = True
        self.subqueries = 0
        #: the SQL's dialect, by name alone (a ``TABLESAMPLE`` without a method means what its dialect says)
        self.dialect = "spark"

    def output_names(self, sel: exp.Select, items: list[exp.Expr]) -> list[str] | None:
        """The caller-visible names of ``sel``'s items when it names the query's outputs, else None."""
        if self.top_names is None or self.top_names[0] is not sel or len(self.top_names[1]) != len(items):
            return None
        return list(self.top_names[1])

    # ---- queries -------------------------------------------------------
    def query(self, q: exp.Expr, ctes: dict[str, exp.CTE]) -> Node:
        """Any query expression: SELECT, set operation or parenthesised query."""
        with_ = q.args.get("with_")
        if with_ is not None:
            if with_.args.get("recursive"):
                raise unsupported("WITH RECURSIVE", with_)
            ctes = dict(ctes)
            for cte in with_.expressions:
                ctes[cte.alias_or_name.lower()] = cte
        saved = self.ctes
        self.ctes = ctes  # subqueries inside expressions see the same CTEs
        try:
            if isinstance(q, exp.Subquery):
                node = self.query(q.this, ctes)
                return self._modifiers(q, node, ctes)
            if isinstance(q, exp.SetOperation):
                return self._setop(q, ctes)
            if isinstance(q, exp.Select):
                return self._select(q, ctes)
            raise unsupported(f"{q.key.upper()} query", q)
        finally:
            self.ctes = saved

    def _modifiers(self, q: exp.Expr, node: Node, ctes: dict[str, exp.CTE]) -> Node:
        """ORDER BY / LIMIT / OFFSET attached to a set operation or parenthesised query."""
        order = q.args.get("order")
        if order is not None:
            keys = [self._sort_key(o, [], output_scope=True) for o in order.expressions]
            node = {"op": "sort", "keys": keys, "input": node}
        return self._limit(q, node)

    def _limit(self, q: exp.Expr, node: Node) -> Node:
        limit = q.args.get("limit")
        offset = q.args.get("offset")
        if limit is None and offset is None:
            return node
        count: int | None = None
        if limit is not None:
            if not isinstance(limit, exp.Limit) or limit.args.get("offset") is not None or limit.expressions:
                raise unsupported("this LIMIT/FETCH form", limit)
            options = limit.args.get("limit_options")
            if options is not None and any(options.args.values()):  # LIMIT 10 PERCENT: a share, not a count
                raise unsupported("LIMIT with PERCENT / WITH TIES", limit)
            count = int_literal(limit.expression, "LIMIT")
        skip = int_literal(offset.expression, "OFFSET") if offset is not None else 0
        return {"op": "limit", "count": count, "offset": skip, "input": node}

    def _setop(self, q: exp.SetOperation, ctes: dict[str, exp.CTE]) -> Node:
        if q.args.get("by_name") or q.args.get("side") or q.args.get("kind") or q.args.get("on"):
            raise unsupported("set operation BY NAME / OUTER / CORRESPONDING", q)
        op = {exp.Union: "union", exp.Intersect: "intersect", exp.Except: "except"}.get(type(q))
        if op is None:
            raise unsupported(q.key.upper(), q)
        all_ = not q.args.get("distinct")
        parts = self._flatten_union(q, all_) if op == "union" else [q.this, q.expression]
        node: Node = {"op": op, "all": all_, "inputs": [self.query(p, ctes) for p in parts]}
        return self._modifiers(q, node, ctes)

    def _flatten_union(self, q: exp.Expr, all_: bool) -> list[exp.Expr]:
        """``a UNION b UNION c`` is one n-ary union when every level agrees on ALL."""

        def plain(x: exp.Expr) -> bool:
            return (
                isinstance(x, exp.Union)
                and (not x.args.get("distinct")) == all_
                and not any(x.args.get(k) for k in ("order", "limit", "offset", "with_", "by_name", "side", "kind"))
            )

        out: list[exp.Expr] = []
        for side in (q.this, q.expression):
            out.extend(self._flatten_union(side, all_) if plain(side) else [side])
        return out

    # ---- FROM ----------------------------------------------------------
    def _source(self, src: exp.Expr, ctes: dict[str, exp.CTE]) -> Node:
        if isinstance(src, exp.Table):
            if not isinstance(src.this, exp.Identifier):
                raise unsupported("table-valued function in FROM", src)
            _refuse_pivot(src)
            if src.args.get("joins") or src.args.get("laterals"):
                raise unsupported("nested joins on a table", src)
            alias = src.alias_or_name
            cte = ctes.get(src.name.lower()) if not src.db else None
            if cte is not None:
                earlier = {k: v for k, v in ctes.items() if v is not cte}
                return self._sampled(src, self._alias(alias, cte.args.get("alias"), self._cte_body(cte, earlier)))
            key = self.tables.lookup(src) if self.tables.known else ".".join(p.name for p in src.parts)
            node: Node = {"op": "scan", "table": key or src.name}
            if alias != node["table"]:
                node["alias"] = alias
            node["filters"] = []
            return self._sampled(src, node)
        if isinstance(src, exp.Subquery):
            _refuse_pivot(src)
            if src.args.get("joins"):
                raise unsupported("parenthesised join in FROM", src)
            inner = self.query(src.this, ctes)
            inner = (
                self._modifiers(src, inner, ctes)
                if src.this is not None and any(src.args.get(k) for k in ("order", "limit", "offset"))
                else inner
            )
            return self._sampled(src, self._alias(src.alias_or_name, src.args.get("alias"), inner))
        raise unsupported(f"{src.key.upper()} in FROM", src)

    def _sampled(self, src: exp.Expr, node: Node) -> Node:
        """``node`` under the ``TABLESAMPLE`` of ``src``, if it has one (a plan without it would return other rows:
        a form the wire cannot carry is refused, never dropped)."""
        sample = src.args.get("sample")
        return node if sample is None else sample_node(sample, self.dialect, node)

    def _cte_body(self, cte: exp.CTE, earlier: dict[str, exp.CTE]) -> Node:
        """The plan of a CTE's body, translated once per CTE and the CTEs it sees: each reference inlines it, and
        ``numbered`` copies every node of the plan (and shares expressions, which nothing changes), so references
        share the one translation."""
        key = (id(cte), tuple([(name, id(other)) for name, other in earlier.items()]))
        known = self._cte_plans.get(key)
        if known is not None and known[0] is cte:
            return known[1]
        plan = self.query(cte.this, earlier)
        self._cte_plans[key] = (cte, plan)
        return plan

    @staticmethod
    def _alias(name: str, table_alias: exp.Expr | None, inner: Node) -> Node:
        node: Node = {"op": "alias", "name": name}
        columns = table_alias.columns if isinstance(table_alias, exp.TableAlias) else []
        if columns:
            node["columns"] = [c.name for c in columns]
        node["input"] = inner
        return node

    def _from_tree(self, sel: exp.Select, ctes: dict[str, exp.CTE]) -> Node:
        from_ = sel.args.get("from_")
        if from_ is None:
            raise unsupported("SELECT without FROM", sel)
        node = self._source(from_.this, ctes)
        for join in sel.args.get("joins") or []:
            node = self._join(node, join, ctes)
        return node

    def _join(self, left: Node, join: exp.Join, ctes: dict[str, exp.CTE]) -> Node:
        if join.args.get("method"):
            raise unsupported(f"{join.args['method']} JOIN", join)
        if join.args.get("using"):
            raise unsupported("JOIN ... USING", join)
        if join.args.get("match_condition") or join.args.get("global_"):
            raise unsupported("ASOF / GLOBAL join", join)
        if isinstance(join.this, exp.Unnest):
            return self._unnest(left, join)
        right = self._source(join.this, ctes)
        side = (join.side or "").lower()
        kind = (join.kind or "").lower()
        on = join.args.get("on")
        if kind in ("semi", "anti"):
            if side == "right":
                raise unsupported(f"RIGHT {kind.upper()} JOIN", join)
            jtype = kind
        elif kind == "cross":
            jtype = "cross"
        elif side in ("left", "right", "full"):
            jtype = side
        elif kind in ("", "inner", "outer"):
            jtype = "inner" if on is not None else "cross"
        else:
            raise unsupported(f"{kind.upper()} JOIN", join)
        if on is None and jtype in ("left", "right", "full"):
            raise unsupported("outer join without ON", join)
        return {
            "op": "join",
            "type": jtype,
            "on": self.expr(on) if on is not None else None,
            "left": left,
            "right": right,
        }

    def _unnest(self, left: Node, join: exp.Join) -> Node:
        """``CROSS JOIN UNNEST(x) AS a(c)`` / ``LEFT JOIN UNNEST(x) AS a(c) ON TRUE``: a ``generate`` node,
        the same as Spark's ``LATERAL VIEW [OUTER] explode(x) a AS c``."""
        unnest: exp.Unnest = join.this
        alias = unnest.args.get("alias")
        side = (join.side or "").lower()
        on = join.args.get("on")
        outer = side == "left" and isinstance(on, exp.Boolean) and on.this
        inner = (join.kind or "").upper() == "CROSS" or (not side and on is None)
        if len(unnest.expressions) != 1 or unnest.args.get("offset") or not (outer or inner):
            raise unsupported("this UNNEST form", join)
        if not isinstance(alias, exp.TableAlias) or not alias.name or not alias.columns:
            raise unsupported("UNNEST without an alias and column names", join)
        return {
            "op": "generate",
            "generator": {"fn": "explode", "args": [self.expr(unnest.expressions[0])]},
            "outer": bool(outer),
            "alias": alias.name,
            "columns": [c.name for c in alias.columns],
            "input": left,
        }

    # ---- SELECT --------------------------------------------------------

    def _select(self, sel: exp.Select, ctes: dict[str, exp.CTE]) -> Node:
        raise NotImplementedError

    def _sort_key(self, o: exp.Ordered, subst: Any, output_scope: bool = False) -> Any:
        raise NotImplementedError
