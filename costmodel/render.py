"""Expressions as SQL-like text, for decisions and EXPLAIN: ``c.name LIKE 'A%'``.

Example::

    >>> from costmodel.expr import Call, Column, Literal
    >>> to_sql(Call(">", (Column("a"), Literal(1, "int"))))
    'a > 1'
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

from costmodel.expr import ARITHMETIC, COMPARISONS, LIKES, Column, Expr, Literal, Subquery
from costmodel.trampoline import Step, run

#: Operator precedence for rendering (higher binds tighter).
_PRECEDENCE = {
    "or": 1,
    "and": 2,
    "not": 3,
    "=": 4,
    "!=": 4,
    "<>": 4,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "<=>": 4,
    "like": 4,
    "ilike": 4,
    "rlike": 4,
    "in": 4,
    "between": 4,
    "is_null": 4,
    "is_not_null": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "%": 6,
    "div": 6,
    "mod": 6,
}


def _literal_sql(lit: Literal) -> str:
    value = lit.value
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        escaped = value.replace("'", "''")
        if lit.type in ("date", "timestamp"):
            return f"{lit.type.upper()} '{escaped}'"
        return f"'{escaped}'"
    return repr(value) if isinstance(value, float) else str(value)


#: Texts of predicates rendered with their own column names in this optimization, by object (``plan_memo``):
#: the decision log renders the same predicate at every operator it passes.
TEXTS: ContextVar[dict[int, tuple[Expr, str]] | None] = ContextVar("sql_texts", default=None)


def to_sql(expr: Expr, name_of: Callable[[Column], str] | None = None) -> str:
    """Render ``expr`` as SQL-like text for decisions and EXPLAIN (``c.name LIKE 'A%'``)."""
    if name_of is not None:
        return run(_render(expr, name_of, 0))
    memo = TEXTS.get()
    hit = memo.get(id(expr)) if memo is not None else None
    if hit is not None and hit[0] is expr:
        return hit[1]
    text = run(_render(expr, _own_name, 0))
    if memo is not None:
        memo[id(expr)] = (expr, text)
    return text


def _own_name(column: Column) -> str:
    return column.name


def _render(expr: Expr, name_of: Callable[[Column], str], parent_prec: int) -> Step[str]:
    """Trampolined (``costmodel.trampoline``): each sub-expression is a ``yield``, so depth costs no frames."""
    if isinstance(expr, Column):
        return name_of(expr)
    if isinstance(expr, Literal):
        return _literal_sql(expr)
    if isinstance(expr, Subquery):
        inner = f"({expr.kind} subquery #{expr.plan.id})"
        if expr.kind == "exists":
            return f"EXISTS {inner}"
        if expr.kind == "in":
            return f"{(yield _render(expr.args[0], name_of, 5))} IN {inner}"
        return inner
    fn = expr.fn
    args = expr.args
    prec = _PRECEDENCE.get(fn, 10)
    tight = prec + 1  # an operand binding tighter than this operator needs no parentheses
    # sub-calls go to module functions: compiled, closures calling each other are a reference cycle (ADR 0003)
    if fn in ("and", "or"):
        text = f" {fn.upper()} ".join((yield _listed(args, name_of, prec)))
    elif fn == "not":
        text = f"NOT {(yield _render(args[0], name_of, tight))}"
    elif fn in COMPARISONS or fn in ARITHMETIC and len(args) == 2:
        op = "!=" if fn == "<>" else fn.upper() if fn.isalpha() else fn
        left = yield _render(args[0], name_of, prec)
        text = f"{left} {op} {(yield _render(args[1], name_of, tight))}"
    elif fn == "neg":
        text = f"-{(yield _render(args[0], name_of, tight))}"
    elif fn in LIKES or fn in ("rlike", "regexp"):
        left = yield _render(args[0], name_of, tight)
        text = f"{left} {fn.upper().replace('_', ' ')} {(yield _render(args[1], name_of, tight))}"
    elif fn == "in":
        needle = yield _render(args[0], name_of, tight)
        text = f"{needle} IN ({', '.join((yield _listed(args[1:], name_of, 0)))})"
    elif fn == "between":
        x, low, high = yield _listed(args[:3], name_of, prec + 1)
        text = f"{x} BETWEEN {low} AND {high}"
    elif fn == "is_null":
        text = f"{(yield _render(args[0], name_of, tight))} IS NULL"
    elif fn == "is_not_null":
        text = f"{(yield _render(args[0], name_of, tight))} IS NOT NULL"
    elif fn == "cast":
        return f"CAST({(yield _render(args[0], name_of, 0))} AS {expr.type})"
    elif fn == "case":
        parts = ["CASE"]
        rendered = yield _listed(args, name_of, 0)
        pairs = len(args) // 2
        for i in range(pairs):
            parts.append(f"WHEN {rendered[2 * i]} THEN {rendered[2 * i + 1]}")
        if len(args) % 2:
            parts.append(f"ELSE {rendered[-1]}")
        parts.append("END")
        return " ".join(parts)
    elif fn == "udf":
        return f"{expr.name}({', '.join((yield _listed(args, name_of, 0)))})"
    else:
        inner = ", ".join((yield _listed(args, name_of, 0))) if args else ("*" if fn == "count" else "")
        prefix = "DISTINCT " if expr.distinct else ""
        return f"{fn}({prefix}{inner})"
    return f"({text})" if prec < parent_prec else text


def _listed(items: tuple[Expr, ...], name_of: Callable[[Column], str], prec: int) -> Step[list[str]]:
    """Each of ``items`` rendered (``_render``), in order."""
    out = []
    for item in items:
        out.append((yield _render(item, name_of, prec)))
    return out
