"""Wire expression pieces -> sqlglot: operators, literals, frames, identifiers.

Operands are parenthesised by binding strength, literals keep their wire type in
every dialect, and identifiers are quoted only when they must be, so the text
reads as a person would write it and parses back to the same meaning.
"""

from __future__ import annotations

import functools
import itertools
import math
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp

from costmodel.wire.nodes import column_refs
from service.sql.common import WIRE_TO_SQLGLOT_FN, build_function, dialect_of, sqlglot_type
from service.sql.errors import SQLGLOT_FAILURES, SqlError

Node = dict[str, Any]
Expr = dict[str, Any]

CMP: dict[str, type[exp.Expr]] = {
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
ARITH: dict[str, type[exp.Expr]] = {
    "+": exp.Add,
    "-": exp.Sub,
    "*": exp.Mul,
    "%": exp.Mod,
    "div": exp.IntDiv,
}

# Binding strength, loosest first; used to parenthesise operands.
PREC: dict[type[exp.Expr], int] = {
    exp.Or: 1,
    exp.And: 2,
    exp.Not: 3,
    **{t: 4 for t in CMP.values()},
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


def prec(e: exp.Expr) -> int:
    return PREC.get(type(e), 10)


def wrap_operand(e: exp.Expr, parent_prec: int, strict: bool = False) -> exp.Expr:
    """Parenthesise ``e`` when it binds looser than its parent operator."""
    p = prec(e)
    if p < parent_prec or (strict and p == parent_prec):
        return exp.Paren(this=e)
    return e


def ident(name: str) -> exp.Identifier:
    """An identifier, quoted only when the name is not a plain lower-case word."""
    plain = _PLAIN.get(name)
    if plain is None:
        plain = name.isidentifier() and name == name.lower() and name.upper() not in KEYWORDS
        if len(_PLAIN) < _PLAIN_MAX:
            _PLAIN[name] = plain
    return exp.Identifier(this=name, quoted=not plain)


#: Whether a name needs no quotes, by name: a plan spells the same few names again and again.
_PLAIN: dict[str, bool] = {}
_PLAIN_MAX = 10_000


KEYWORDS = {k.upper() for k in sqlglot.tokens.Tokenizer.KEYWORDS} | {
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


def column(name: str, table: str | None = None) -> exp.Column:
    return exp.Column(this=ident(name), table=ident(table) if table else None)


def refs_in(value: Any) -> list[str]:
    """The columns ``value`` reads: each qualified one once (``q.c``, its qualifier in lower case), then every
    bare name."""
    out = [f"{q}.{n}" for q, names in column_refs(value).items() for n in names]
    stack = [value]  # a loop: a nested function calling itself is a reference cycle on every call
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if isinstance(v.get("col"), str) and "." not in v["col"]:
                out.append(v["col"])
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))
    return out


def conjuncts(pred: Any) -> list[Any]:
    """A wire predicate's top-level AND parts, nested ``and`` calls flattened."""
    if isinstance(pred, dict) and pred.get("fn") == "and":
        return [part for arg in pred.get("args") or [] for part in conjuncts(arg)]
    return [pred]


def has_subquery(value: Any) -> bool:
    if isinstance(value, dict):
        return "subquery" in value or any(has_subquery(v) for v in value.values())
    if isinstance(value, list):
        return any(has_subquery(v) for v in value)
    return False


def unique(name: str, taken: set[str]) -> str:
    if name.lower() not in taken:
        return name
    for i in itertools.count(2):
        candidate = f"{name}_{i}"
        if candidate.lower() not in taken:
            return candidate
    raise AssertionError("unreachable")


def and_(preds: list[exp.Expr]) -> exp.Expr:
    out = wrap_operand(preds[0], 2)
    for p in preds[1:]:
        out = exp.And(this=out, expression=wrap_operand(p, 2))
    return out


def ordered(e: exp.Expr, key: Expr) -> exp.Expr:
    return exp.Ordered(this=e, desc=bool(key.get("desc")), nulls_first=bool(key.get("nulls_first")))


def frame(frame: Any) -> exp.Expr | None:
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


def literal(e: Expr, dialect: str = "spark") -> exp.Expr:
    """A wire literal as sqlglot writes it in ``dialect``, its type kept (``CAST`` where SQL's own would differ).

    >>> sqlglot_text = exp.Cast(this=exp.Literal.string("1996-01-01"), to=sqlglot_type("date")).sql("spark")
    >>> literal({"lit": "1996-01-01", "type": "date"}).sql("spark") == sqlglot_text == "CAST('1996-01-01' AS DATE)"
    True
    """
    value = e["lit"]
    typ = str(e.get("type") or "").lower()
    if value is None:
        if typ in ("", "null"):
            return exp.Null()
        return exp.Var(this=_cast_text(None, typ, dialect))
    if typ == "boolean" or isinstance(value, bool):
        return exp.Boolean(this=bool(value))
    if typ in ("date", "timestamp"):
        return exp.Var(this=_cast_text(str(value), typ, dialect))
    if typ == "string" or isinstance(value, str) and typ not in ("decimal", "double", "int", "bigint"):
        return exp.Literal.string(str(value))
    if typ in ("int", "bigint", "smallint", "tinyint") or (isinstance(value, int) and typ == ""):
        number = signed(str(abs(int(value))), int(value) < 0)
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
        return signed(text, f < 0)
    # decimal (or an untyped float): plain positional notation keeps it DECIMAL in Spark.
    text = format(Decimal(str(value)), "f")
    return signed(text.lstrip("-"), text.startswith("-"))


def output_name(sql: exp.Expr, e: Any) -> str:
    """The name of an unaliased output written as ``sql`` (from wire expression ``e``): sqlglot's, but for a typed
    literal written as text (``literal``), which answers as its ``CAST`` node would, with the literal's text.

    >>> output_name(literal({"lit": "1996-01-01", "type": "date"}), {"lit": "1996-01-01", "type": "date"})
    '1996-01-01'
    """
    if isinstance(sql, exp.Var) and isinstance(e, dict) and "lit" in e:
        return "NULL" if e["lit"] is None else str(e["lit"])
    return sql.alias_or_name


@functools.lru_cache(maxsize=4096)
def _cast_text(value: str | None, typ: str, dialect: str) -> str:
    """``CAST(value AS typ)`` (a string, or NULL) as sqlglot writes it in ``dialect``: a typed literal is then a node
    written as it is (``exp.Var``). Writing a cast, sqlglot's Spark generator parses the name of a type it checks
    for (``json``) afresh each time, which cost the rewritten SQL of a TPC-H query up to 5% of its request; the
    text depends on nothing but these three, so it is made once for each."""
    this = exp.Null() if value is None else exp.Literal.string(value)
    try:
        return exp.Cast(this=this, to=sqlglot_type(typ)).sql(dialect=dialect_of(dialect), pretty=True)
    except SQLGLOT_FAILURES as err:
        raise SqlError("invalid_plan", f"cannot write a {typ} literal in {dialect}: {err}") from err


def signed(digits: str, negative: bool) -> exp.Expr:
    """A numeric literal from unsigned digits; negatives are parenthesised ``(-3)``."""
    number = exp.Literal.number(digits)
    return exp.Paren(this=exp.Neg(this=number)) if negative else number


def function(fn: str, args: list[exp.Expr], e: Expr) -> exp.Expr:
    """A wire operator or function call as sqlglot, operands parenthesised by precedence."""
    n = len(args)

    def need(count: int) -> None:
        if n != count:
            raise SqlError("invalid_plan", f"{fn} takes {count} arguments, got {n}")

    if fn in CMP:
        need(2)
        return CMP[fn](this=wrap_operand(args[0], 5), expression=wrap_operand(args[1], 5))
    if fn == "neg" or (fn == "-" and n == 1):  # ``-`` with one argument: plans written before ``neg``
        need(1)
        return exp.Neg(this=wrap_operand(args[0], 8))
    if fn in ARITH:
        need(2)
        p = PREC[ARITH[fn]]
        return ARITH[fn](this=wrap_operand(args[0], p), expression=wrap_operand(args[1], p, strict=True))
    if fn == "/":
        need(2)
        return exp.Div(
            this=wrap_operand(args[0], 7), expression=wrap_operand(args[1], 7, strict=True), typed=False, safe=True
        )
    if fn in ("and", "or"):
        if n == 0:
            raise SqlError("invalid_plan", f"{fn} needs arguments")
        kind = exp.And if fn == "and" else exp.Or
        p = PREC[kind]
        out = wrap_operand(args[0], p)
        for a in args[1:]:
            out = kind(this=out, expression=wrap_operand(a, p))
        return out
    if fn == "not":
        need(1)
        return exp.Not(this=wrap_operand(args[0], 5))
    if fn == "is_null":
        need(1)
        return exp.Is(this=wrap_operand(args[0], 5), expression=exp.Null())
    if fn == "is_not_null":
        need(1)
        return exp.Not(this=exp.Is(this=wrap_operand(args[0], 5), expression=exp.Null()))
    if fn == "in":
        if n < 2:
            raise SqlError("invalid_plan", "in needs [x, v1, ...]")
        return exp.In(this=wrap_operand(args[0], 5), expressions=args[1:])
    if fn == "between":
        need(3)
        return exp.Between(this=wrap_operand(args[0], 5), low=wrap_operand(args[1], 5), high=wrap_operand(args[2], 5))
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
        out = wrap_operand(args[0], 6)
        for a in args[1:]:
            out = exp.DPipe(this=out, expression=wrap_operand(a, 6), safe=True)
        return out
    if fn == "grouping":
        return exp.Grouping(expressions=args)
    if fn == "grouping_id":
        return exp.GroupingId(expressions=args)
    if fn == "count" and n == 0:
        return exp.Count(this=exp.Star())
    if fn == "udf":
        name = e.get("name")
        if not isinstance(name, str):
            raise SqlError("invalid_plan", "a udf needs a 'name'")
        return exp.Anonymous(this=name, expressions=args)
    name = WIRE_TO_SQLGLOT_FN.get(fn, fn)
    call_args: list[exp.Expr] = [exp.Distinct(expressions=args)] if e.get("distinct") else args
    try:
        return build_function(name, call_args, copy=False)  # the arguments are new nodes
    except SQLGLOT_FAILURES as err:
        raise SqlError("invalid_plan", f"cannot call {fn} with {n} arguments: {err}") from err
