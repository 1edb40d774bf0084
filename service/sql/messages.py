"""Error messages in SQL terms: what is wrong, where (a caret under the line), and what the user may have meant.

sqlglot's parse errors name its own classes (``Required keyword: 'expression' missing for <class
'sqlglot.expressions.core.EQ'>``); a user wrote ``=``, so the message says ``=``.

    >>> syntax_message("Required keyword: 'expression' missing for <class 'sqlglot.expressions.core.EQ'>", "=")
    "incomplete comparison: '=' has nothing on its right-hand side"
    >>> syntax_message("Expecting )", "a")
    "expected ')' near 'a'"
    >>> print(excerpt("SELECT a\\nFROM t WHERE", 2, 8))
    FROM t WHERE
           ^
    >>> did_you_mean("ordrs", ["orders", "items"])
    ['orders']
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Final

#: sqlglot node names as the SQL a user wrote them
_OPERATORS: Final = {
    "EQ": "=",
    "NEQ": "<>",
    "NullSafeEQ": "<=>",
    "GT": ">",
    "GTE": ">=",
    "LT": "<",
    "LTE": "<=",
    "And": "AND",
    "Or": "OR",
    "Not": "NOT",
    "Add": "+",
    "Sub": "-",
    "Mul": "*",
    "Div": "/",
    "Mod": "%",
    "Like": "LIKE",
    "ILike": "ILIKE",
    "In": "IN",
    "Is": "IS",
    "Between": "BETWEEN",
    "Where": "WHERE",
    "Having": "HAVING",
    "Join": "JOIN",
    "Select": "SELECT",
    "From": "FROM",
    "Order": "ORDER BY",
    "Group": "GROUP BY",
    "Limit": "LIMIT",
    "Alias": "AS",
    "Cast": "CAST",
    "Case": "CASE",
}
_COMPARISONS: Final = frozenset({"=", "<>", "<=>", ">", ">=", "<", "<="})
_CLAUSES: Final = frozenset({"WHERE", "HAVING", "ORDER BY", "GROUP BY", "LIMIT"})
#: the operand sqlglot names by its argument key, as a user would name it
_OPERANDS: Final = {"expression": "right-hand side", "this": "operand", "high": "upper bound", "low": "lower bound"}


def sql_name(node_class: str) -> str:
    """A sqlglot node class name as the SQL keyword or operator it parses (the class name, upper case, else)."""
    return _OPERATORS.get(node_class, node_class.upper())


def syntax_message(description: str, highlight: str | None) -> str:
    """sqlglot's parse error ``description`` in SQL terms, without the library's class names."""
    near = f" near {highlight.strip()!r}" if highlight and highlight.strip() else ""
    missing = re.match(r"Required keyword: '(\w+)' missing for <class '[\w.]*?(\w+)'>", description)
    if missing:
        operand, node = missing.groups()
        what = sql_name(node)
        if what in _CLAUSES:
            return f"incomplete {what} clause: it has no condition or expression after it"
        kind = "comparison" if what in _COMPARISONS else "expression"
        side = _OPERANDS.get(operand, operand)
        if side == "right-hand side":
            return f"incomplete {kind}: {what!r} has nothing on its right-hand side"
        return f"incomplete {kind}: {what!r} is missing its {side}"
    expecting = re.match(r"Expecting (.+)", description)
    if expecting:
        return f"expected {expecting.group(1).strip()!r}{near}"
    if description.startswith("Invalid expression / Unexpected token"):
        return f"unexpected {highlight.strip()!r}" if highlight and highlight.strip() else "unexpected input"
    # whatever else sqlglot says, without class reprs
    return re.sub(r"<class '[\w.]*?(\w+)'>", lambda m: sql_name(m.group(1)), description) + near


def token_message(error: str) -> str:
    """A tokenizer error in SQL terms: almost always an unterminated string or quoted name."""
    return "the SQL cannot be split into tokens: an unterminated string literal or quoted name?"


def start_column(column: int | None, highlight: str | None) -> int | None:
    """sqlglot's column is where the highlighted token ends; the caret goes where it starts."""
    if column is None:
        return None
    return max(1, column - len(highlight or " ") + 1)


def excerpt(sql: str, line: int | None, column: int | None) -> str | None:
    """The SQL line at fault with a caret under ``column`` (1-based), or None without a position."""
    if line is None or column is None:
        return None
    lines = sql.splitlines() or [""]
    if not 1 <= line <= len(lines):
        return None
    text = lines[line - 1]
    return f"{text}\n{' ' * (min(column, len(text) + 1) - 1)}^"


def did_you_mean(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates closest to ``name`` (case-insensitively), best first; bare names also match qualified ones."""
    by_lower: dict[str, str] = {}
    for candidate in candidates:
        by_lower.setdefault(candidate.lower(), candidate)
        by_lower.setdefault(candidate.rsplit(".", 1)[-1].lower(), candidate)
    hits = difflib.get_close_matches(name.lower(), list(by_lower), n=n, cutoff=0.6)
    return list(dict.fromkeys(by_lower[hit] for hit in hits))


def suggestion(matches: list[str]) -> str:
    """``; did you mean x?`` (or ``x or y``), empty without matches."""
    if not matches:
        return ""
    return f"; did you mean {' or '.join(matches)}?"


def dialects() -> list[str]:
    """The SQL dialects sqlglot reads (the names ``dialect`` accepts)."""
    from sqlglot.dialects.dialect import Dialect

    return sorted(name for name in Dialect.classes if name)
