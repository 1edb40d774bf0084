"""Expressions as SQL-like text, for decisions and EXPLAIN: ``c.name LIKE 'A%'``.

Example::

    >>> from costmodel.expr import Call, Column, Literal
    >>> to_sql(Call(">", (Column("a"), Literal(1, "int"))))
    'a > 1'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from costmodel.expr import ARITHMETIC, COMPARISONS, LIKES, Call, Column, Expr, Literal, Subquery

#: Operator precedence for rendering (higher binds tighter).
_PRECEDENCE: Final = {
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


def to_sql(expr: Expr, name_of: Callable[[Column], str] | None = None) -> str:
    """Render ``expr`` as SQL-like text for decisions and EXPLAIN (``c.name LIKE 'A%'``)."""
    return _render(expr, name_of or _own_name)


def _own_name(column: Column) -> str:
    return column.name


#: The precedence of a text no operator wraps in parentheses: a column, a literal, a call, CASE, a subquery.
_ATOM: Final = 100

#: A rendered operand: its text and how tightly it binds (its operator's precedence, or ``_ATOM``).
Rendered = tuple[str, int]


def _render(expr: Expr, name_of: Callable[[Column], str]) -> str:
    """Children before parents on an explicit stack (an expression may nest 10,000 levels): each operand's
    text is known when its parent is formatted (``_format``). No generators: a trampolined step per node cost
    more than the text itself."""
    done: list[Rendered] = []
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        if isinstance(node, Column):
            done.append((name_of(node), _ATOM))
        elif isinstance(node, Literal):
            done.append((_literal_sql(node), _ATOM))
        else:
            operands = _operands(node)
            if not ready and operands:
                stack.append((node, True))
                for arg in reversed(operands):
                    stack.append((arg, False))
                continue
            split = len(done) - len(operands)
            rendered = done[split:]
            del done[split:]
            done.append(_format(node, rendered))
    return done[0][0]


def _operands(expr: Call | Subquery) -> tuple[Expr, ...]:
    """The sub-expressions ``expr``'s text shows: an IN subquery shows its needle, other subqueries none."""
    if isinstance(expr, Subquery):
        return expr.args[:1] if expr.kind == "in" else ()
    return expr.args


def _wrapped(operand: Rendered, at_least: int) -> str:
    """The operand's text, in parentheses when it binds looser than its place needs."""
    text, prec = operand
    return f"({text})" if prec < at_least else text


def _format(expr: Call | Subquery, rendered: list[Rendered]) -> Rendered:
    """``expr``'s text from its operands' (``_operands``, rendered), and how tightly it binds."""
    if isinstance(expr, Subquery):
        inner = f"({expr.kind} subquery #{expr.plan.id})"
        if expr.kind == "exists":
            return f"EXISTS {inner}", _ATOM
        if expr.kind == "in":
            return f"{_wrapped(rendered[0], 5)} IN {inner}", _ATOM
        return inner, _ATOM
    fn = expr.fn
    prec = _PRECEDENCE.get(fn, 10)
    tight = prec + 1  # an operand binding tighter than this operator needs no parentheses
    if fn in ("and", "or"):
        return f" {fn.upper()} ".join(_wrapped(r, prec) for r in rendered), prec
    if fn == "not":
        return f"NOT {_wrapped(rendered[0], tight)}", prec
    if fn in COMPARISONS or fn in ARITHMETIC and len(rendered) == 2:
        op = "!=" if fn == "<>" else fn.upper() if fn.isalpha() else fn
        return f"{_wrapped(rendered[0], prec)} {op} {_wrapped(rendered[1], tight)}", prec
    if fn == "neg":
        return f"-{_wrapped(rendered[0], tight)}", prec
    if fn in LIKES or fn in ("rlike", "regexp"):
        op = fn.upper().replace("_", " ")
        return f"{_wrapped(rendered[0], tight)} {op} {_wrapped(rendered[1], tight)}", prec
    if fn == "in":
        return f"{_wrapped(rendered[0], tight)} IN ({', '.join(text for text, _ in rendered[1:])})", prec
    if fn == "between":
        x, low, high = (_wrapped(r, tight) for r in rendered[:3])
        return f"{x} BETWEEN {low} AND {high}", prec
    if fn == "is_null":
        return f"{_wrapped(rendered[0], tight)} IS NULL", prec
    if fn == "is_not_null":
        return f"{_wrapped(rendered[0], tight)} IS NOT NULL", prec
    texts = [text for text, _ in rendered]
    if fn == "cast":
        return f"CAST({texts[0]} AS {expr.type})", _ATOM
    if fn == "case":
        pairs = len(texts) // 2
        parts = ["CASE", *(f"WHEN {texts[2 * i]} THEN {texts[2 * i + 1]}" for i in range(pairs))]
        if len(texts) % 2:
            parts.append(f"ELSE {texts[-1]}")
        return " ".join([*parts, "END"]), _ATOM
    if fn == "udf":
        return f"{expr.name}({', '.join(texts)})", _ATOM
    inner = ", ".join(texts) if texts else ("*" if fn == "count" else "")
    prefix = "DISTINCT " if expr.distinct else ""
    return f"{fn}({prefix}{inner})", _ATOM
