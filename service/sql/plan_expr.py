"""Expression -> wire: one sqlglot expression becomes one wire expression.

Every handled node lists the options it may carry; an option the wire cannot
carry is refused rather than dropped, so a translated expression always means
what the SQL said.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from sqlglot import exp

from service.sql.common import INT32_MAX, INT32_MIN, SQLGLOT_TO_WIRE_FN, release, wire_type
from service.sql.errors import SqlError
from service.sql.expr_kinds import (
    BINARY,
    EXPR_KIND,
    K_ADD_SUB,
    K_ANY_ALL,
    K_BETWEEN,
    K_BINARY_OP,
    K_BOOLEAN,
    K_CASE,
    K_CAST,
    K_COLUMN,
    K_CONCAT,
    K_CONNECTOR,
    K_DPIPE,
    K_ESCAPE,
    K_EXISTS,
    K_EXTRACT,
    K_FUNC,
    K_GROUPING,
    K_IF,
    K_IN,
    K_INTERVAL,
    K_IS,
    K_LITERAL,
    K_NEG,
    K_NOT,
    K_NULL,
    K_PAREN,
    K_SUBQUERY,
    K_TS_OR_DS_TO_DATE,
    K_WINDOW,
)
from service.sql.func_forms import check_rebuilds, positional_args, rebuilds_in_place
from service.sql.parse import position, unsupported

Node = dict[str, Any]
Expr = dict[str, Any]
Subst = list[tuple[exp.Expr, Expr]]


_BINARY_ARGS = frozenset({"this", "expression"})
# Arguments each handled node may carry; any other argument set on it changes
# meaning in a way the converter does not model, so it is refused.
_ALLOWED_ARGS: dict[type[exp.Expr], frozenset[str]] = {
    **{t: _BINARY_ARGS for t in BINARY},
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


def guard(e: exp.Expr) -> None:
    """Refuse a node that carries an option the converter would silently drop."""
    allowed = _ALLOWED_ARGS.get(type(e))
    if allowed is None:
        return
    for key, value in e.args.items():
        if key not in allowed and value not in (None, False, [], ""):
            raise unsupported(f"{e.key.upper()} with {key.upper()}", e)


def add_months(day: dt.date, months: int) -> dt.date:
    """Calendar month arithmetic with end-of-month clamping (Spark's add_months)."""
    total = day.year * 12 + day.month - 1 + months
    year, month = divmod(total, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return dt.date(year, month + 1, min(day.day, last))


def same(a: exp.Expr, b: exp.Expr) -> bool:
    """Equal once redundant parentheses are dropped: ``(col)`` and ``col`` are one column."""
    while isinstance(a, exp.Paren):
        a = a.this
    while isinstance(b, exp.Paren):
        b = b.this
    return a == b


class ExprBuilder:
    """Expression translation; ``query`` (subqueries) comes from the plan builder."""

    ctes: dict[str, exp.CTE]
    #: subquery expressions made so far (the plan builder starts it at 0): without any, ``numbered`` need not
    #: look inside expressions
    subqueries: int

    def query(self, q: exp.Expr, ctes: dict[str, exp.CTE]) -> Node:
        raise NotImplementedError

    def subquery(self, q: exp.Expr, kind: str) -> Expr:
        """The wire form of a subquery expression of ``kind`` (scalar, exists or in) over the query ``q``."""
        self.subqueries += 1
        return {"subquery": self.query(q, self.ctes), "kind": kind}

    def expr(
        self,
        e: exp.Expr,
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

        def sub(x: exp.Expr) -> Expr:
            return self.expr(x, subst, grouped=grouped)

        if not isinstance(e, exp.Expr):  # an argument sqlglot left empty: DATEDIFF() reads as a call on None
            raise SqlError("unsupported", f"a call with a missing argument ({e!r}) cannot be translated faithfully")
        guard(e)
        if e.args.get("negate") and isinstance(e, (exp.Like, exp.ILike, exp.Is)):
            positive = e.copy()
            positive.set("negate", None)
            wire = {"fn": "not", "args": [self.expr(positive, subst, grouped=grouped)]}
            release(positive)  # a copy only read here: freed now, not by the cyclic collector
            return wire

        kind = EXPR_KIND(e)
        if kind == K_PAREN:
            return sub(e.this)
        # the kind names the node's class: ``cast`` says so to the type checker
        if kind == K_COLUMN:
            column = cast(exp.Column, e)
            if isinstance(column.this, exp.Star):
                raise unsupported("qualified star outside the select list", e)
            if column.table and column.table in grouped:
                line, col = position(e)
                raise SqlError(
                    "invalid_query", f"column {e.sql()} must appear in GROUP BY or inside an aggregate", line, col
                )
            return {"col": ".".join(p.name for p in column.parts)}
        if kind == K_LITERAL:
            return self._literal(cast(exp.Literal, e))
        if kind == K_BOOLEAN:
            return {"lit": bool(e.this), "type": "boolean"}
        if kind == K_NULL:
            return {"lit": None, "type": "null"}
        if kind == K_NEG:
            inner = sub(e.this)
            numeric = inner.get("type") in ("int", "bigint", "double", "decimal")
            if "lit" in inner and numeric and isinstance(inner["lit"], (int, float)):
                value = -inner["lit"]
                out = {"lit": value, "type": inner["type"]}
                if out["type"] == "bigint" and INT32_MIN <= value <= INT32_MAX:
                    out["type"] = "int"
                return out
            return {"fn": "neg", "args": [inner]}  # the engine's unary minus (``-`` takes two)
        if kind == K_CAST:
            return self._cast(cast(exp.Cast, e), sub)
        if kind == K_ADD_SUB and (isinstance(e.expression, exp.Interval) or isinstance(e.this, exp.Interval)):
            return self._fold_interval(cast(exp.Add | exp.Sub, e), sub)
        if kind == K_INTERVAL:
            raise unsupported("INTERVAL outside date-literal arithmetic", e)
        if kind == K_ESCAPE:
            raise unsupported("LIKE ... ESCAPE", e)
        if kind == K_CONNECTOR:
            op = "and" if isinstance(e, exp.And) else "or"
            args: list[Expr] = []
            for part in (e.this, e.expression):
                w = sub(part)
                if w.get("fn") == op:
                    args.extend(w["args"])
                else:
                    args.append(w)
            return {"fn": op, "args": args}
        if kind == K_DPIPE:
            args = []
            for part in (e.this, e.expression):
                w = sub(part)
                args.extend(w["args"] if w.get("fn") == "concat" else [w])
            return {"fn": "concat", "args": args}
        if kind == K_CONCAT:
            if e.args.get("coalesce"):
                raise unsupported("CONCAT that skips NULLs", e)
            return {"fn": "concat", "args": [sub(x) for x in e.expressions]}
        if kind in (K_BINARY_OP, K_ADD_SUB):  # an addition without an interval too
            if isinstance(e, exp.Div) and e.args.get("typed"):
                raise unsupported("integer-typed division", e)
            return {"fn": BINARY[type(e)], "args": [sub(e.this), sub(e.expression)]}
        if kind == K_NOT:
            if isinstance(e.this, exp.Is) and isinstance(e.this.expression, exp.Null):
                return {"fn": "is_not_null", "args": [sub(e.this.this)]}
            return {"fn": "not", "args": [sub(e.this)]}
        if kind == K_IS:
            if isinstance(e.expression, exp.Null):  # also IS UNKNOWN
                return {"fn": "is_null", "args": [sub(e.this)]}
            if isinstance(e.expression, exp.Boolean):
                # x IS TRUE = coalesce(x, false); x IS FALSE = coalesce(not x, false): exact under NULLs.
                tested = sub(e.this) if e.expression.this else {"fn": "not", "args": [sub(e.this)]}
                return {"fn": "coalesce", "args": [tested, {"lit": False, "type": "boolean"}]}
            raise unsupported(f"IS {e.expression.sql()}", e)
        if kind == K_IN:
            return self._in(cast(exp.In, e), sub)
        if kind == K_BETWEEN:
            if e.args.get("symmetric"):
                raise unsupported("BETWEEN SYMMETRIC", e)
            return {"fn": "between", "args": [sub(e.this), sub(e.args["low"]), sub(e.args["high"])]}
        if kind == K_CASE:
            operand = e.this
            args = []
            for branch in e.args.get("ifs") or []:
                cond = branch.this
                args.append({"fn": "=", "args": [sub(operand), sub(cond)]} if operand is not None else sub(cond))
                args.append(sub(branch.args["true"]))
            if e.args.get("default") is not None:
                args.append(sub(e.args["default"]))
            return {"fn": "case", "args": args}
        if kind == K_IF:
            args = [sub(e.this), sub(e.args["true"])]
            if e.args.get("false") is not None:
                args.append(sub(e.args["false"]))
            return {"fn": "case", "args": args}
        if kind == K_EXTRACT:
            return {"fn": "extract", "args": [{"lit": e.this.name.lower(), "type": "string"}, sub(e.expression)]}
        if kind == K_EXISTS:
            return self.subquery(e.this, "exists")
        if kind == K_SUBQUERY:
            return self.subquery(e, "scalar")
        if kind == K_ANY_ALL:
            raise unsupported(f"{e.key.upper()} subquery comparison", e)
        if kind == K_WINDOW:
            raise unsupported("window function outside the SELECT list or ORDER BY", e)
        if kind == K_TS_OR_DS_TO_DATE and not e.args.get("format"):
            inner = sub(e.this)
            if inner.get("type") == "date" or inner.get("fn") == "cast" and inner.get("type") == "date":
                return inner
            return {"fn": "cast", "args": [inner], "type": "date"}
        if kind == K_GROUPING:
            if not (skip_top or agg_ok):
                raise unsupported(f"{e.sql()} outside SELECT/HAVING/ORDER BY", e)
            return {
                "fn": "grouping" if isinstance(e, exp.Grouping) else "grouping_id",
                "args": [sub(x) for x in e.expressions],
            }
        if kind in (K_FUNC, K_TS_OR_DS_TO_DATE):  # one with a format too
            if isinstance(e, exp.AggFunc) and not (skip_top or agg_ok):
                raise unsupported("aggregate function outside SELECT/HAVING/ORDER BY", e)
            return self._function(cast(exp.Func, e), sub)
        raise unsupported(f"expression {e.key.upper()} ({e.sql()[:60]})", e)

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
            raise unsupported(f"numeric literal {text}", e) from err
        as_float = float(text)
        if Decimal(repr(as_float)) == exact:
            return {"lit": as_float, "type": "decimal"}
        return {"lit": text, "type": "decimal"}

    def _cast(self, e: exp.Cast, sub: Any) -> Expr:
        if e.args.get("format") or e.args.get("default") or e.args.get("action"):
            raise unsupported("CAST with FORMAT/DEFAULT", e)
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
            raise unsupported("INTERVAL minus a date", e)
        left = sub(base)
        if left.get("type") != "date" or "lit" not in left:
            raise unsupported("INTERVAL arithmetic on something other than a date literal", e)
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
            raise unsupported(f"INTERVAL {interval.sql()}", interval)
        n = int(text) * (-1 if isinstance(e, exp.Sub) else 1)
        day = dt.date.fromisoformat(left["lit"])
        if unit_name == "day":
            day = day + dt.timedelta(days=n)
        elif unit_name == "week":
            day = day + dt.timedelta(weeks=n)
        elif unit_name == "month":
            day = add_months(day, n)
        else:
            day = add_months(day, 12 * n)
        return {"lit": day.isoformat(), "type": "date"}

    def _in(self, e: exp.In, sub: Any) -> Expr:
        if e.args.get("unnest") or e.args.get("field"):
            raise unsupported("IN UNNEST", e)
        query = e.args.get("query")
        if query is not None:
            target = e.this
            args = [sub(x) for x in target.expressions] if isinstance(target, exp.Tuple) else [sub(target)]
            inner = (
                query.this
                if isinstance(query, exp.Subquery) and not any(query.args.get(k) for k in ("order", "limit", "offset"))
                else query
            )
            return {**self.subquery(inner, "in"), "args": args}
        return {"fn": "in", "args": [sub(e.this), *[sub(v) for v in e.expressions]]}

    def _function(self, e: exp.Func, sub: Any) -> Expr:
        """A named function: wire name + positional args, checked to rebuild identically (``func_forms``)."""
        if isinstance(e, exp.Anonymous):
            return {"fn": e.name.lower(), "args": [sub(x) for x in e.expressions]}
        if isinstance(e, exp.TsOrDsAdd):
            return _day_shift(e, sub)
        name = e.sql_name().lower()
        if isinstance(e, exp.Count) and (e.this is None or isinstance(e.this, exp.Star)) and not e.expressions:
            return {"fn": "count", "args": []}
        this = e.args.get("this")
        if isinstance(this, exp.Distinct):
            positional = list(this.expressions)
            distinct = exp.Distinct(expressions=[p.copy() for p in positional])
            check_rebuilds(e, name, [distinct])
            release(distinct)  # copied by the check: freed now, not by the cyclic collector
            return _call(name, positional, sub, distinct=True)
        positional = positional_args(e, name)
        if not rebuilds_in_place(e, name, positional):
            check_rebuilds(e, name, positional)
        return _call(name, positional, sub, distinct=False)


def _day_shift(e: exp.TsOrDsAdd, sub: Any) -> Expr:
    """Spark's ``date_add(d, n)`` / ``date_sub(d, n)``: sqlglot reads both as one day shift (``date_sub``'s count
    times -1). Any unit other than days is refused: the wire's ``date_add`` counts days."""
    unit = e.args.get("unit")
    if unit is not None and unit.name.upper() != "DAY":
        raise unsupported(f"date arithmetic in {unit.name.upper()}", e)
    if e.args.get("return_type") is not None:
        raise unsupported("date arithmetic with a return type", e)
    days = e.expression
    negated = (
        isinstance(days, exp.Mul)
        and isinstance(days.expression, exp.Neg)
        and isinstance(days.expression.this, exp.Literal)
        and days.expression.this.this == "1"
    )
    if negated:
        return {"fn": "date_sub", "args": [sub(e.this), sub(days.this)]}
    return {"fn": "date_add", "args": [sub(e.this), sub(days)]}


def _call(name: str, positional: list[exp.Expr], sub: Any, distinct: bool) -> Expr:
    out: Expr = {"fn": SQLGLOT_TO_WIRE_FN.get(name, name), "args": [sub(p) for p in positional]}
    if distinct:
        out["distinct"] = True
    return out
