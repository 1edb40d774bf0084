"""SQL text -> wire plan: a naive, faithful translation.

The cost model decides where filters go, so this module must not move any:
WHERE becomes one ``filter`` right above the FROM/JOIN tree, join conditions
stay in the join's ``on``, subqueries stay subquery expressions. Anything that
cannot be expressed in the wire format without changing meaning is refused
with a ``SqlError`` naming the construct, never approximated.

Names are resolved by sqlglot's ``qualify`` against the wire catalog, so every
column in the plan is ``alias.column`` (or a bare output name of a project,
aggregate or window below).
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import re
from collections.abc import Iterator, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError, SqlglotError, TokenError
from sqlglot.optimizer.qualify import qualify

from service.sql.common import INT32_MAX, INT32_MIN, SQLGLOT_TO_WIRE_FN, wire_type
from service.sql.errors import SqlError

Node = dict[str, Any]
Expr = dict[str, Any]
Subst = list[tuple[exp.Expression, Expr]]

_BINARY: dict[type[exp.Expression], str] = {
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.Like: "like",
    exp.ILike: "ilike",
    exp.RegexpLike: "rlike",
    exp.IntDiv: "div",
}

# Function flags sqlglot sets from the dialect that do not change the rows
# (Spark's COUNT returns BIGINT).
_HARMLESS_FLAGS = ("big_int",)

# Select arguments that change meaning and that the wire format cannot carry.
_REFUSED_SELECT_ARGS: dict[str, str] = {
    "laterals": "LATERAL VIEW",
    "qualify": "QUALIFY",
    "windows": "named WINDOW clause",
    "pivots": "PIVOT",
    "connect": "CONNECT BY",
    "sort": "SORT BY",
    "cluster": "CLUSTER BY",
    "distribute": "DISTRIBUTE BY",
    "into": "SELECT INTO",
    "prewhere": "PREWHERE",
    "sample": "TABLESAMPLE",
    "match": "MATCH_RECOGNIZE",
    "locks": "FOR UPDATE",
    "exclude": "SELECT * EXCLUDE",
}


def _position(node: exp.Expression | None) -> tuple[int | None, int | None]:
    """Line and column of the first token sqlglot recorded under ``node``."""
    if node is None:
        return None, None
    for sub in node.walk():
        meta = getattr(sub, "_meta", None) or {}
        if "line" in meta:
            # sqlglot's col is where the token ends; report where it starts.
            width = (meta.get("end") or 0) - (meta.get("start") or 0)
            return meta.get("line"), max(1, meta.get("col", 1) - width)
    return None, None


def _unsupported(what: str, node: exp.Expression | None = None) -> SqlError:
    line, col = _position(node)
    message = f"{what} cannot be translated faithfully into a plan"
    return SqlError("unsupported", message, line, col, {"construct": what})


@functools.lru_cache(maxsize=4096)
def _known_type(typ: str) -> str:
    """``typ`` when sqlglot can read it as a Spark type, else "unknown"; cached: catalogs repeat."""
    try:
        exp.DataType.build(typ, dialect="spark")
    except (SqlglotError, ValueError):
        return "unknown"
    return typ


class _Tables:
    """The wire catalog, looked up case-insensitively (Spark names are)."""

    def __init__(self, catalog: dict[str, Any] | None) -> None:
        self.known = catalog is not None
        self.by_lower: dict[str, tuple[str, list[tuple[str, str]]]] = {}
        if catalog is None:
            return
        if not isinstance(catalog, dict) or not isinstance(catalog.get("tables", {}), dict):
            raise SqlError("invalid_catalog", 'catalog must be {"tables": {name: {"columns": [...]}}}')
        for name, raw in (catalog.get("tables") or {}).items():
            cols: list[tuple[str, str]] = []
            for col in (raw or {}).get("columns", []) if isinstance(raw, dict) else []:
                if isinstance(col, str):
                    cols.append((col, "unknown"))
                elif isinstance(col, dict) and isinstance(col.get("name"), str):
                    cols.append((col["name"], str(col.get("type") or "unknown")))
            self.by_lower[name.lower()] = (name, cols)

    def lookup(self, table: exp.Table) -> str | None:
        """The catalog key for a table reference, or None when absent."""
        full = ".".join(p.name for p in table.parts).lower()
        for key in (full, table.name.lower()):
            if key in self.by_lower:
                return self.by_lower[key][0]
        return None

    def schema(self) -> dict[str, dict[str, str]]:
        """The catalog as sqlglot's qualify wants it."""
        return {name: {col: _known_type(typ) for col, typ in cols} for name, cols in self.by_lower.values()}

    def columns_of(self, names: Sequence[str]) -> list[str]:
        """``table.column`` for every column of the named tables (error detail)."""
        out: list[str] = []
        for name in names:
            hit = self.by_lower.get(name.lower())
            if hit:
                out.extend(f"{hit[0]}.{c}" for c, _ in hit[1])
        return out


def sql_to_plan(sql: str, catalog: dict[str, Any] | None, dialect: str = "spark") -> Node:
    """Translate one SQL query into a wire plan (see docs/sql-adapter.md)."""
    try:
        sqlglot.Dialect.get_or_raise(dialect)
    except ValueError as err:
        raise SqlError("unknown_dialect", f"unknown SQL dialect {dialect!r}") from err
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except ParseError as err:
        first = err.errors[0] if err.errors else {}
        raise SqlError(
            "parse_error", str(first.get("description") or err), first.get("line"), first.get("col")
        ) from err
    except TokenError as err:
        line, col = _line_col(str(err))
        raise SqlError("parse_error", str(err), line, col) from err
    if len(statements) != 1:
        raise SqlError("parse_error", f"expected exactly one statement, got {len(statements)}")
    stmt = statements[0]
    if not isinstance(stmt, exp.Query):
        raise _unsupported(f"{stmt.key.upper()} statement (only queries are supported)", stmt)
    tables = _Tables(catalog)
    _check_tables(stmt, tables)
    qualified = _qualify(stmt, tables, dialect, sql)
    node = _Builder(tables).query(qualified, {})
    return _assign_ids(node)


def _line_col(message: str) -> tuple[int | None, int | None]:
    hit = re.search(r"Line:? (\d+), Col:? (\d+)", message)
    return (int(hit.group(1)), int(hit.group(2))) if hit else (None, None)


def _check_tables(stmt: exp.Expression, tables: _Tables) -> None:
    """Refuse tables the catalog does not know (CTE names are fine)."""
    if not tables.known:
        return
    cte_names = {cte.alias_or_name.lower() for cte in stmt.find_all(exp.CTE)}
    for table in stmt.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue
        if not table.db and table.name.lower() in cte_names:
            continue
        if tables.lookup(table) is None:
            line, col = _position(table)
            raise SqlError(
                "unknown_table",
                f"table {'.'.join(part.name for part in table.parts)} is not in the catalog",  # no alias
                line,
                col,
                {"table": table.name, "available": sorted(v[0] for v in tables.by_lower.values())},
            )


def _qualify(stmt: exp.Expression, tables: _Tables, dialect: str, sql: str) -> exp.Expression:
    """Qualify every column and expand stars; turn sqlglot's complaints into SqlErrors."""
    try:
        return qualify(
            stmt,
            schema=tables.schema() if tables.known else None,
            dialect=dialect,
            validate_qualify_columns=tables.known,
            quote_identifiers=False,
            sql=sql,
        )
    except OptimizeError as err:
        message = str(err)
        line, col = _line_col(message)
        hit = re.search(r"Column '(.+?)' could not be resolved", message) or re.search(
            r"Unknown column: (\S+)", message
        )
        if hit:
            column = hit.group(1).strip('"`')
            named = [c for c in stmt.find_all(exp.Column) if c.name.lower() == column.lower()]
            if named:
                line, col = _position(named[0])
            used = sorted({t.name for t in stmt.find_all(exp.Table)})
            raise SqlError(
                "unknown_column",
                f"column {column} does not exist in {', '.join(used)}",
                line,
                col,
                {"column": column, "available": tables.columns_of(used)},
            ) from err
        raise SqlError("invalid_query", message.split(". Line")[0], line, col) from err


def _assign_ids(node: Node) -> Node:
    """Number nodes n1, n2, ... in pre-order (a node, its subqueries, its children)."""
    counter = [0]

    def expr(e: Any) -> Any:
        if isinstance(e, list):
            return [expr(x) for x in e]
        if not isinstance(e, dict):
            return e
        if "subquery" in e:
            out = dict(e)
            out["subquery"] = visit(e["subquery"])
            if "args" in out:
                out["args"] = expr(out["args"])
            return out
        return {k: expr(v) for k, v in e.items()}

    def visit(n: Node) -> Node:
        counter[0] += 1
        out: Node = {"op": n["op"], "id": f"n{counter[0]}"}
        children = ("input", "left", "right", "inputs")
        for key, value in n.items():
            if key in ("op", "id") or key in children:
                continue
            out[key] = expr(value)
        for key in children:
            if key in n:
                out[key] = [visit(c) for c in n[key]] if key == "inputs" else visit(n[key])
        return out

    return visit(node)


def _walk_scope(e: exp.Expression) -> Iterator[exp.Expression]:
    """Nodes of ``e`` in this query scope: nested queries are not entered."""
    yield e
    for child in e.iter_expressions():
        if isinstance(child, (exp.Query, exp.Subquery)):
            continue
        yield from _walk_scope(child)


def _aggregates_in(e: exp.Expression) -> list[exp.AggFunc]:
    """Aggregate calls of this scope; a window's own function is not one."""
    found: list[exp.AggFunc] = []

    def visit(node: exp.Expression, is_window_fn: bool) -> None:
        if isinstance(node, (exp.Query, exp.Subquery)):
            return
        if isinstance(node, exp.AggFunc) and not is_window_fn:
            found.append(node)
            return
        for child in node.iter_expressions():
            visit(child, isinstance(node, exp.Window) and child is node.this)

    visit(e, False)
    return found


def _windows_in(e: exp.Expression) -> list[exp.Window]:
    return [n for n in _walk_scope(e) if isinstance(n, exp.Window)]


_BINARY_ARGS = frozenset({"this", "expression"})
# Arguments each handled node may carry; any other argument set on it changes
# meaning in a way the converter does not model, so it is refused.
_ALLOWED_ARGS: dict[type[exp.Expression], frozenset[str]] = {
    **{t: _BINARY_ARGS for t in _BINARY},
    exp.Like: frozenset({"this", "expression", "negate"}),
    exp.ILike: frozenset({"this", "expression", "negate"}),
    exp.Is: frozenset({"this", "expression", "negate"}),
    exp.Div: frozenset({"this", "expression", "typed", "safe"}),
    exp.DPipe: frozenset({"this", "expression", "safe"}),
    exp.Concat: frozenset({"expressions", "safe", "coalesce"}),
    exp.And: _BINARY_ARGS,
    exp.Or: _BINARY_ARGS,
    exp.Not: frozenset({"this"}),
    exp.Neg: frozenset({"this"}),
    exp.Paren: frozenset({"this"}),
    exp.Column: frozenset({"this", "table", "db", "catalog"}),
    exp.Literal: frozenset({"this", "is_string"}),
    exp.In: frozenset({"this", "expressions", "query"}),
    exp.Between: frozenset({"this", "low", "high"}),
    exp.Case: frozenset({"this", "ifs", "default"}),
    exp.If: frozenset({"this", "true", "false"}),
    exp.Extract: frozenset({"this", "expression"}),
    exp.Exists: frozenset({"this"}),
    exp.Cast: frozenset({"this", "to"}),
    exp.TryCast: frozenset({"this", "to"}),
    exp.Interval: frozenset({"this", "unit"}),
    exp.TsOrDsToDate: frozenset({"this"}),
    exp.Subquery: frozenset({"this", "order", "limit", "offset"}),
}


def _guard(e: exp.Expression) -> None:
    """Refuse a node that carries an option the converter would silently drop."""
    allowed = _ALLOWED_ARGS.get(type(e))
    if allowed is None:
        return
    for key, value in e.args.items():
        if key not in allowed and value not in (None, False, [], ""):
            raise _unsupported(f"{e.key.upper()} with {key.upper()}", e)


def _int_literal(node: exp.Expression | None, what: str) -> int:
    if isinstance(node, exp.Literal) and not node.is_string and re.fullmatch(r"\d+", node.this):
        return int(node.this)
    raise _unsupported(f"{what} that is not an integer literal", node)


def _add_months(day: dt.date, months: int) -> dt.date:
    """Calendar month arithmetic with end-of-month clamping (Spark's add_months)."""
    total = day.year * 12 + day.month - 1 + months
    year, month = divmod(total, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return dt.date(year, month + 1, min(day.day, last))


class _Builder:
    """Walks a qualified sqlglot tree and emits wire nodes."""

    def __init__(self, tables: _Tables) -> None:
        self.tables = tables
        self.ctes: dict[str, exp.CTE] = {}

    # ---- queries -------------------------------------------------------
    def query(self, q: exp.Expression, ctes: dict[str, exp.CTE]) -> Node:
        """Any query expression: SELECT, set operation or parenthesised query."""
        with_ = q.args.get("with_")
        if with_ is not None:
            if with_.args.get("recursive"):
                raise _unsupported("WITH RECURSIVE", with_)
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
            raise _unsupported(f"{q.key.upper()} query", q)
        finally:
            self.ctes = saved

    def _modifiers(self, q: exp.Expression, node: Node, ctes: dict[str, exp.CTE]) -> Node:
        """ORDER BY / LIMIT / OFFSET attached to a set operation or parenthesised query."""
        order = q.args.get("order")
        if order is not None:
            keys = [self._sort_key(o, [], output_scope=True) for o in order.expressions]
            node = {"op": "sort", "keys": keys, "input": node}
        return self._limit(q, node)

    def _limit(self, q: exp.Expression, node: Node) -> Node:
        limit = q.args.get("limit")
        offset = q.args.get("offset")
        if limit is None and offset is None:
            return node
        count: int | None = None
        if limit is not None:
            if not isinstance(limit, exp.Limit) or limit.args.get("offset") is not None:
                raise _unsupported("this LIMIT/FETCH form", limit)
            count = _int_literal(limit.expression, "LIMIT")
        skip = _int_literal(offset.expression, "OFFSET") if offset is not None else 0
        return {"op": "limit", "count": count, "offset": skip, "input": node}

    def _setop(self, q: exp.SetOperation, ctes: dict[str, exp.CTE]) -> Node:
        if q.args.get("by_name") or q.args.get("side") or q.args.get("kind") or q.args.get("on"):
            raise _unsupported("set operation BY NAME / OUTER / CORRESPONDING", q)
        op = {exp.Union: "union", exp.Intersect: "intersect", exp.Except: "except"}.get(type(q))
        if op is None:
            raise _unsupported(q.key.upper(), q)
        all_ = not q.args.get("distinct")
        parts = self._flatten_union(q, all_) if op == "union" else [q.this, q.expression]
        node: Node = {"op": op, "all": all_, "inputs": [self.query(p, ctes) for p in parts]}
        return self._modifiers(q, node, ctes)

    def _flatten_union(self, q: exp.Expression, all_: bool) -> list[exp.Expression]:
        """``a UNION b UNION c`` is one n-ary union when every level agrees on ALL."""

        def plain(x: exp.Expression) -> bool:
            return (
                isinstance(x, exp.Union)
                and (not x.args.get("distinct")) == all_
                and not any(x.args.get(k) for k in ("order", "limit", "offset", "with_", "by_name", "side", "kind"))
            )

        out: list[exp.Expression] = []
        for side in (q.this, q.expression):
            out.extend(self._flatten_union(side, all_) if plain(side) else [side])
        return out

    # ---- FROM ----------------------------------------------------------
    def _source(self, src: exp.Expression, ctes: dict[str, exp.CTE]) -> Node:
        if isinstance(src, exp.Table):
            if not isinstance(src.this, exp.Identifier):
                raise _unsupported("table-valued function in FROM", src)
            if src.args.get("joins") or src.args.get("pivots") or src.args.get("laterals"):
                raise _unsupported("PIVOT / nested joins on a table", src)
            alias = src.alias_or_name
            cte = ctes.get(src.name.lower()) if not src.db else None
            if cte is not None:
                earlier = {k: v for k, v in ctes.items() if v is not cte}
                return self._alias(alias, cte.args.get("alias"), self.query(cte.this, earlier))
            key = self.tables.lookup(src) if self.tables.known else ".".join(p.name for p in src.parts)
            node: Node = {"op": "scan", "table": key or src.name}
            if alias != node["table"]:
                node["alias"] = alias
            node["filters"] = []
            return node
        if isinstance(src, exp.Subquery):
            if src.args.get("joins") or src.args.get("pivots"):
                raise _unsupported("parenthesised join in FROM", src)
            inner = self.query(src.this, ctes)
            inner = (
                self._modifiers(src, inner, ctes)
                if src.this is not None and any(src.args.get(k) for k in ("order", "limit", "offset"))
                else inner
            )
            return self._alias(src.alias_or_name, src.args.get("alias"), inner)
        raise _unsupported(f"{src.key.upper()} in FROM", src)

    @staticmethod
    def _alias(name: str, table_alias: exp.Expression | None, inner: Node) -> Node:
        node: Node = {"op": "alias", "name": name}
        columns = table_alias.columns if isinstance(table_alias, exp.TableAlias) else []
        if columns:
            node["columns"] = [c.name for c in columns]
        node["input"] = inner
        return node

    def _from_tree(self, sel: exp.Select, ctes: dict[str, exp.CTE]) -> Node:
        from_ = sel.args.get("from_")
        if from_ is None:
            raise _unsupported("SELECT without FROM", sel)
        node = self._source(from_.this, ctes)
        for join in sel.args.get("joins") or []:
            node = self._join(node, join, ctes)
        return node

    def _join(self, left: Node, join: exp.Join, ctes: dict[str, exp.CTE]) -> Node:
        if join.args.get("method"):
            raise _unsupported(f"{join.args['method']} JOIN", join)
        if join.args.get("using"):
            raise _unsupported("JOIN ... USING", join)
        if join.args.get("match_condition") or join.args.get("global_"):
            raise _unsupported("ASOF / GLOBAL join", join)
        right = self._source(join.this, ctes)
        side = (join.side or "").lower()
        kind = (join.kind or "").lower()
        on = join.args.get("on")
        if kind in ("semi", "anti"):
            if side == "right":
                raise _unsupported(f"RIGHT {kind.upper()} JOIN", join)
            jtype = kind
        elif kind == "cross":
            jtype = "cross"
        elif side in ("left", "right", "full"):
            jtype = side
        elif kind in ("", "inner", "outer"):
            jtype = "inner" if on is not None else "cross"
        else:
            raise _unsupported(f"{kind.upper()} JOIN", join)
        if on is None and jtype in ("left", "right", "full"):
            raise _unsupported("outer join without ON", join)
        return {
            "op": "join",
            "type": jtype,
            "on": self.expr(on) if on is not None else None,
            "left": left,
            "right": right,
        }

    # ---- SELECT --------------------------------------------------------
    def _select(self, sel: exp.Select, ctes: dict[str, exp.CTE]) -> Node:
        for arg, what in _REFUSED_SELECT_ARGS.items():
            if sel.args.get(arg):
                raise _unsupported(what, sel.args[arg] if isinstance(sel.args[arg], exp.Expression) else sel)
        if sel.args.get("kind"):
            raise _unsupported(f"SELECT AS {sel.args['kind']}", sel)
        distinct = sel.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise _unsupported("DISTINCT ON", distinct)

        node = self._from_tree(sel, ctes)
        where = sel.args.get("where")
        if where is not None:
            node = {"op": "filter", "predicate": self.expr(where.this), "input": node}

        items = list(sel.expressions)
        for item in items:
            if isinstance(item.unalias(), exp.Star) or (
                isinstance(item.unalias(), exp.Column) and isinstance(item.unalias().this, exp.Star)
            ):
                raise _unsupported("SELECT * without a catalog", item)
        names = [item.alias_or_name for item in items]
        raws = [item.unalias() for item in items]
        order = sel.args.get("order")
        order_items = list(order.expressions) if order is not None else []
        having = sel.args.get("having")
        group = sel.args.get("group")

        # ORDER BY may name a select alias; resolve those to the expression.
        def order_input_expr(o: exp.Ordered) -> exp.Expression:
            key = o.this
            if isinstance(key, exp.Column) and not key.table and key.name in names:
                return raws[names.index(key.name)]
            return key

        subst: Subst = []
        used: set[str] = set(n.lower() for n in names)

        def fresh(prefix: str) -> str:
            i = 1
            while f"{prefix}{i}" in used:
                i += 1
            used.add(f"{prefix}{i}")
            return f"{prefix}{i}"

        # -- aggregation
        aggs: list[exp.AggFunc] = []
        for e in [*raws, *([having.this] if having is not None else []), *(order_input_expr(o) for o in order_items)]:
            for a in _aggregates_in(e):
                if not any(a == seen for seen in aggs):
                    aggs.append(a)
        grouped: frozenset[str] = frozenset()
        if group is not None or aggs:
            sources = [sel.args["from_"].this, *(j.this for j in sel.args.get("joins") or [])]
            grouped = frozenset(s.alias_or_name for s in sources)
            node = self._aggregate(node, group, aggs, raws, names, subst, fresh)
            if having is not None:
                node = {"op": "filter", "predicate": self.expr(having.this, subst, grouped=grouped), "input": node}
        elif having is not None:
            raise _unsupported("HAVING without aggregation", having)

        # -- windows: one node per distinct (PARTITION BY, ORDER BY)
        windows: list[exp.Window] = []
        for e in [*raws, *(order_input_expr(o) for o in order_items)]:
            for w in _windows_in(e):
                if not any(w == seen for seen in windows):
                    windows.append(w)
        if windows:
            node = self._windows(node, windows, raws, names, subst, fresh, grouped)

        project: Node = {
            "op": "project",
            "exprs": [
                {"expr": self.expr(r, subst, grouped=grouped), "as": n} for r, n in zip(raws, names, strict=True)
            ],
        }

        # -- ORDER BY: above the project when every key is an output, else below it
        out_keys: list[Expr] | None = []
        for o in order_items:
            key = o.this
            name: str | None = None
            if isinstance(key, exp.Column) and not key.table and key.name in names:
                name = key.name
            else:
                for r, n in zip(raws, names, strict=True):
                    if key == r:
                        name = n
                        break
            if name is None:
                out_keys = None
                break
            desc, nulls_first = bool(o.args.get("desc")), bool(o.args.get("nulls_first"))
            out_keys.append({"expr": {"col": name}, "desc": desc, "nulls_first": nulls_first})

        if order_items and out_keys is None:
            if distinct is not None:
                raise _unsupported("ORDER BY an expression that is not in the SELECT DISTINCT list", order)
            keys = [
                {
                    "expr": self.expr(order_input_expr(o), subst, grouped=grouped),
                    "desc": bool(o.args.get("desc")),
                    "nulls_first": bool(o.args.get("nulls_first")),
                }
                for o in order_items
            ]
            node = {"op": "sort", "keys": keys, "input": node}
            node = self._limit(sel, node)
            project["input"] = node
            return project

        project["input"] = node
        node = project
        if distinct is not None:
            node = {"op": "distinct", "input": node}
        if order_items:
            node = {"op": "sort", "keys": out_keys, "input": node}
        return self._limit(sel, node)

    def _aggregate(
        self,
        node: Node,
        group: exp.Group | None,
        aggs: list[exp.AggFunc],
        raws: list[exp.Expression],
        names: list[str],
        subst: Subst,
        fresh: Any,
    ) -> Node:
        keys: list[Any] = []
        if group is not None:
            for arg in ("rollup", "cube", "grouping_sets", "totals"):
                if group.args.get(arg):
                    raise _unsupported(f"GROUP BY {arg.upper().replace('_', ' ')}", group)
            for g in group.expressions:
                if isinstance(g, exp.Column):
                    wire = self.expr(g)
                    keys.append(wire)
                    subst.append((g, wire))
                    continue
                if isinstance(g, exp.Literal):
                    raise _unsupported("GROUP BY a constant", g)
                name = None
                for r, n in zip(raws, names, strict=True):
                    if r == g and not any(n == k.get("as") for k in keys if isinstance(k, dict)):
                        name = n
                        break
                name = name or fresh("_g")
                keys.append({"expr": self.expr(g), "as": name})
                subst.append((g, {"col": name}))
        outputs: list[Expr] = []
        taken = {k["as"] for k in keys if "as" in k} | {k["col"].split(".")[-1] for k in keys if "col" in k}
        for a in aggs:
            name = None
            for r, n in zip(raws, names, strict=True):
                if r == a and n not in taken:
                    name = n
                    break
            name = name or fresh("_a")
            taken.add(name)
            outputs.append({"expr": self.expr(a, agg_ok=True), "as": name})
            subst.append((a, {"col": name}))
        return {"op": "aggregate", "group_by": keys, "aggregates": outputs, "input": node}

    def _windows(
        self,
        node: Node,
        windows: list[exp.Window],
        raws: list[exp.Expression],
        names: list[str],
        subst: Subst,
        fresh: Any,
        grouped: frozenset[str],
    ) -> Node:
        groups: dict[tuple[str, str], list[exp.Window]] = {}
        for w in windows:
            if w.args.get("alias") or not isinstance(w.this, exp.Func):
                raise _unsupported("named window reference", w)
            if w.args.get("over") not in (None, "OVER") or w.args.get("first") is not None:
                raise _unsupported("this window form", w)
            spec = (
                "|".join(p.sql() for p in w.args.get("partition_by") or []),
                w.args["order"].sql() if w.args.get("order") else "",
            )
            groups.setdefault(spec, []).append(w)
        new_subst: Subst = []
        for ws in groups.values():
            first = ws[0]
            fns: list[Expr] = []
            for w in ws:
                name = None
                for r, n in zip(raws, names, strict=True):
                    if r == w:
                        name = n
                        break
                name = name or fresh("_w")
                item: Expr = {"expr": self.expr(w.this, subst, skip_top=True, grouped=grouped), "as": name}
                frame = self._frame(w.args.get("spec"))
                if frame is not None:
                    item["frame"] = frame
                fns.append(item)
                new_subst.append((w, {"col": name}))
            order = first.args.get("order")
            node = {
                "op": "window",
                "partition_by": [self.expr(p, subst, grouped=grouped) for p in first.args.get("partition_by") or []],
                "order_by": [self._sort_key(o, subst, grouped=grouped) for o in (order.expressions if order else [])],
                "functions": fns,
                "input": node,
            }
        subst.extend(new_subst)
        return node

    @staticmethod
    def _frame(spec: exp.Expression | None) -> dict[str, str] | None:
        """A window frame as the wire extension ``{"kind", "start", "end"}``."""
        if spec is None:
            return None
        if spec.args.get("exclude"):
            raise _unsupported("window frame EXCLUDE", spec)

        def bound(value: Any, side: Any) -> str:
            if isinstance(value, str):
                text = value.lower()
                if text == "current row":
                    return text
                if text == "unbounded":
                    return f"unbounded {str(side).lower()}"
            if isinstance(value, exp.Literal) and not value.is_string and re.fullmatch(r"\d+", value.this):
                return f"{value.this} {str(side).lower()}"
            raise _unsupported("window frame bound that is not a literal row count", spec)

        kind = str(spec.args.get("kind") or "").lower()
        if kind not in ("rows", "range"):
            raise _unsupported(f"{kind.upper()} window frame", spec)
        start = bound(spec.args.get("start"), spec.args.get("start_side"))
        end = bound(spec.args.get("end"), spec.args.get("end_side")) if spec.args.get("end") else "current row"
        return {"kind": kind, "start": start, "end": end}

    def _sort_key(
        self, o: exp.Ordered, subst: Subst, output_scope: bool = False, grouped: frozenset[str] = frozenset()
    ) -> Expr:
        key = o.this
        if output_scope:
            # Set-operation ORDER BY names the output columns of the first input.
            key = key.transform(lambda n: exp.column(n.name) if isinstance(n, exp.Column) else n)
        return {
            "expr": self.expr(key, subst, grouped=grouped),
            "desc": bool(o.args.get("desc")),
            "nulls_first": bool(o.args.get("nulls_first")),
        }

    # ---- expressions ---------------------------------------------------
    def expr(
        self,
        e: exp.Expression,
        subst: Subst | None = None,
        skip_top: bool = False,
        agg_ok: bool = False,
        grouped: frozenset[str] = frozenset(),
    ) -> Expr:
        """One sqlglot expression -> wire expression, replacing ``subst`` matches by columns.

        ``grouped``: the FROM aliases of an aggregating SELECT; above its
        aggregate a column of theirs that is not a group key is an error, as in SQL.
        """
        subst = subst or []
        if not skip_top:
            for key, wire in subst:
                if e == key:
                    return dict(wire)

        def sub(x: exp.Expression) -> Expr:
            return self.expr(x, subst, grouped=grouped)

        _guard(e)
        if e.args.get("negate") and isinstance(e, (exp.Like, exp.ILike, exp.Is)):
            positive = e.copy()
            positive.set("negate", None)
            return {"fn": "not", "args": [self.expr(positive, subst, grouped=grouped)]}

        if isinstance(e, exp.Paren):
            return sub(e.this)
        if isinstance(e, exp.Column):
            if isinstance(e.this, exp.Star):
                raise _unsupported("qualified star outside the select list", e)
            if e.table and e.table in grouped:
                line, col = _position(e)
                raise SqlError(
                    "invalid_query", f"column {e.sql()} must appear in GROUP BY or inside an aggregate", line, col
                )
            return {"col": ".".join(p.name for p in e.parts)}
        if isinstance(e, exp.Literal):
            return self._literal(e)
        if isinstance(e, exp.Boolean):
            return {"lit": bool(e.this), "type": "boolean"}
        if isinstance(e, exp.Null):
            return {"lit": None, "type": "null"}
        if isinstance(e, exp.Neg):
            inner = sub(e.this)
            numeric = inner.get("type") in ("int", "bigint", "double", "decimal")
            if "lit" in inner and numeric and isinstance(inner["lit"], (int, float)):
                value = -inner["lit"]
                out = {"lit": value, "type": inner["type"]}
                if out["type"] == "bigint" and INT32_MIN <= value <= INT32_MAX:
                    out["type"] = "int"
                return out
            return {"fn": "-", "args": [inner]}
        if isinstance(e, (exp.Cast, exp.TryCast)):
            return self._cast(e, sub)
        if isinstance(e, (exp.Add, exp.Sub)) and (
            isinstance(e.expression, exp.Interval) or isinstance(e.this, exp.Interval)
        ):
            return self._fold_interval(e, sub)
        if isinstance(e, exp.Interval):
            raise _unsupported("INTERVAL outside date-literal arithmetic", e)
        if isinstance(e, exp.Escape):
            raise _unsupported("LIKE ... ESCAPE", e)
        if isinstance(e, (exp.And, exp.Or)):
            op = "and" if isinstance(e, exp.And) else "or"
            args: list[Expr] = []
            for part in (e.this, e.expression):
                w = sub(part)
                if w.get("fn") == op:
                    args.extend(w["args"])
                else:
                    args.append(w)
            return {"fn": op, "args": args}
        if isinstance(e, exp.DPipe):
            args = []
            for part in (e.this, e.expression):
                w = sub(part)
                args.extend(w["args"] if w.get("fn") == "concat" else [w])
            return {"fn": "concat", "args": args}
        if isinstance(e, exp.Concat):
            if e.args.get("coalesce"):
                raise _unsupported("CONCAT that skips NULLs", e)
            return {"fn": "concat", "args": [sub(x) for x in e.expressions]}
        if type(e) in _BINARY:
            if isinstance(e, exp.Div) and e.args.get("typed"):
                raise _unsupported("integer-typed division", e)
            return {"fn": _BINARY[type(e)], "args": [sub(e.this), sub(e.expression)]}
        if isinstance(e, exp.Not):
            if isinstance(e.this, exp.Is) and isinstance(e.this.expression, exp.Null):
                return {"fn": "is_not_null", "args": [sub(e.this.this)]}
            return {"fn": "not", "args": [sub(e.this)]}
        if isinstance(e, exp.Is):
            if isinstance(e.expression, exp.Null):
                return {"fn": "is_null", "args": [sub(e.this)]}
            raise _unsupported(f"IS {e.expression.sql()}", e)
        if isinstance(e, exp.In):
            return self._in(e, sub)
        if isinstance(e, exp.Between):
            if e.args.get("symmetric"):
                raise _unsupported("BETWEEN SYMMETRIC", e)
            return {"fn": "between", "args": [sub(e.this), sub(e.args["low"]), sub(e.args["high"])]}
        if isinstance(e, exp.Case):
            operand = e.this
            args = []
            for branch in e.args.get("ifs") or []:
                cond = branch.this
                args.append({"fn": "=", "args": [sub(operand), sub(cond)]} if operand is not None else sub(cond))
                args.append(sub(branch.args["true"]))
            if e.args.get("default") is not None:
                args.append(sub(e.args["default"]))
            return {"fn": "case", "args": args}
        if isinstance(e, exp.If):
            args = [sub(e.this), sub(e.args["true"])]
            if e.args.get("false") is not None:
                args.append(sub(e.args["false"]))
            return {"fn": "case", "args": args}
        if isinstance(e, exp.Extract):
            return {"fn": "extract", "args": [{"lit": e.this.name.lower(), "type": "string"}, sub(e.expression)]}
        if isinstance(e, exp.Exists):
            return {"subquery": self.query(e.this, self.ctes), "kind": "exists"}
        if isinstance(e, exp.Subquery):
            return {"subquery": self.query(e, self.ctes), "kind": "scalar"}
        if isinstance(e, (exp.Any, exp.All)):
            raise _unsupported(f"{e.key.upper()} subquery comparison", e)
        if isinstance(e, exp.Window):
            raise _unsupported("window function outside the SELECT list or ORDER BY", e)
        if isinstance(e, exp.TsOrDsToDate) and not e.args.get("format"):
            inner = sub(e.this)
            if inner.get("type") == "date" or inner.get("fn") == "cast" and inner.get("type") == "date":
                return inner
            return {"fn": "cast", "args": [inner], "type": "date"}
        if isinstance(e, exp.Func):
            if isinstance(e, exp.AggFunc) and not (skip_top or agg_ok):
                raise _unsupported("aggregate function outside SELECT/HAVING/ORDER BY", e)
            return self._function(e, sub)
        raise _unsupported(f"expression {e.key.upper()} ({e.sql()[:60]})", e)

    @staticmethod
    def _literal(e: exp.Literal) -> Expr:
        if e.is_string:
            return {"lit": e.this, "type": "string"}
        text = e.this
        if re.fullmatch(r"\d+", text):
            value = int(text)
            return {"lit": value, "type": "int" if value <= INT32_MAX else "bigint"}
        if "e" in text.lower():
            return {"lit": float(text), "type": "double"}
        try:
            exact = Decimal(text)
        except InvalidOperation as err:
            raise _unsupported(f"numeric literal {text}", e) from err
        as_float = float(text)
        if Decimal(repr(as_float)) == exact:
            return {"lit": as_float, "type": "decimal"}
        return {"lit": text, "type": "decimal"}

    def _cast(self, e: exp.Cast, sub: Any) -> Expr:
        if e.args.get("format") or e.args.get("default") or e.args.get("action"):
            raise _unsupported("CAST with FORMAT/DEFAULT", e)
        to: exp.DataType = e.args["to"]
        typ = wire_type(to)
        if isinstance(e.this, exp.Literal) and e.this.is_string and typ in ("date", "timestamp"):
            text = e.this.this.strip()
            try:
                if typ == "date":
                    return {"lit": dt.date.fromisoformat(text).isoformat(), "type": "date"}
                dt.datetime.fromisoformat(text)
                return {"lit": text, "type": "timestamp"}
            except ValueError:
                pass
        return {"fn": "cast", "args": [sub(e.this)], "type": typ}

    def _fold_interval(self, e: exp.Add | exp.Sub, sub: Any) -> Expr:
        """``date 'X' +/- interval 'N' unit`` -> a date literal (the only interval form)."""
        interval, base = (e.expression, e.this) if isinstance(e.expression, exp.Interval) else (e.this, e.expression)
        if isinstance(e, exp.Sub) and interval is e.this:
            raise _unsupported("INTERVAL minus a date", e)
        left = sub(base)
        if left.get("type") != "date" or "lit" not in left:
            raise _unsupported("INTERVAL arithmetic on something other than a date literal", e)
        amount_node = interval.this
        unit = interval.args.get("unit")
        text = amount_node.name if isinstance(amount_node, exp.Literal) else ""
        parts = text.split()
        if unit is None and len(parts) == 2:
            text, unit_name = parts
        else:
            unit_name = unit.name if unit is not None else ""
        unit_name = unit_name.lower().rstrip("s")
        if not re.fullmatch(r"-?\d+", text.strip()) or unit_name not in ("day", "week", "month", "year"):
            raise _unsupported(f"INTERVAL {interval.sql()}", interval)
        n = int(text) * (-1 if isinstance(e, exp.Sub) else 1)
        day = dt.date.fromisoformat(left["lit"])
        if unit_name == "day":
            day = day + dt.timedelta(days=n)
        elif unit_name == "week":
            day = day + dt.timedelta(weeks=n)
        elif unit_name == "month":
            day = _add_months(day, n)
        else:
            day = _add_months(day, 12 * n)
        return {"lit": day.isoformat(), "type": "date"}

    def _in(self, e: exp.In, sub: Any) -> Expr:
        if e.args.get("unnest") or e.args.get("field"):
            raise _unsupported("IN UNNEST", e)
        query = e.args.get("query")
        if query is not None:
            target = e.this
            args = [sub(x) for x in target.expressions] if isinstance(target, exp.Tuple) else [sub(target)]
            inner = (
                query.this
                if isinstance(query, exp.Subquery) and not any(query.args.get(k) for k in ("order", "limit", "offset"))
                else query
            )
            return {"subquery": self.query(inner, self.ctes), "kind": "in", "args": args}
        return {"fn": "in", "args": [sub(e.this), *[sub(v) for v in e.expressions]]}

    def _function(self, e: exp.Func, sub: Any) -> Expr:
        """A named function: wire name + positional args, checked to rebuild identically."""
        if isinstance(e, exp.Anonymous):
            return {"fn": e.name.lower(), "args": [sub(x) for x in e.expressions]}
        name = e.sql_name().lower()
        if isinstance(e, exp.Count) and (e.this is None or isinstance(e.this, exp.Star)) and not e.expressions:
            return {"fn": "count", "args": []}
        distinct = False
        positional: list[exp.Expression] = []
        this = e.args.get("this")
        if isinstance(this, exp.Distinct):
            distinct = True
            positional = list(this.expressions)
            rebuilt_args: list[exp.Expression] = [exp.Distinct(expressions=[p.copy() for p in positional])]
        else:
            for key in e.arg_types:
                value = e.args.get(key)
                if value is None or value is False:
                    continue
                if isinstance(value, list):
                    positional.extend(value)
                elif isinstance(value, exp.Expression):
                    positional.append(value)
                elif key not in _HARMLESS_FLAGS:
                    raise _unsupported(f"function {name.upper()} with option {key}", e)
            rebuilt_args = [p.copy() for p in positional]
        try:
            rebuilt = exp.func(name, *rebuilt_args)
        except (SqlglotError, ValueError, TypeError, KeyError) as err:
            raise _unsupported(f"function {name.upper()}", e) from err
        for flag in _HARMLESS_FLAGS:
            if e.args.get(flag) is not None:
                rebuilt.set(flag, e.args[flag])
        if rebuilt != e:
            raise _unsupported(f"function {name.upper()} in this form", e)
        out: Expr = {"fn": SQLGLOT_TO_WIRE_FN.get(name, name), "args": [sub(p) for p in positional]}
        if distinct:
            out["distinct"] = True
        return out
