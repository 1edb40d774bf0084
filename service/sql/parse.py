"""Reading SQL: parse one query, check its tables, qualify its names.

Errors carry the SQL position, so everything that can fail before a plan is
built lives here: sqlglot's parse and tokenizer errors, tables missing from the
catalog, and columns qualify cannot resolve.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from typing import Any

from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError, SqlglotError, TokenError
from sqlglot.optimizer.qualify import qualify

from service.sql.common import child_nodes, dialect_of
from service.sql.errors import SQLGLOT_SLIPS, SqlError
from service.sql.limits import check_nesting, may_nest_too_deep
from service.sql.messages import (
    dialects,
    did_you_mean,
    excerpt,
    start_column,
    suggestion,
    syntax_message,
    token_message,
)

logger = logging.getLogger(__name__)


def position(node: exp.Expr | None) -> tuple[int | None, int | None]:
    """Line and column of the first token sqlglot recorded under ``node``."""
    if node is None:
        return None, None
    for sub in node.walk():
        line = sub.meta_get("line")
        if line is not None:
            # sqlglot's col is where the token ends; report where it starts.
            width = (sub.meta_get("end") or 0) - (sub.meta_get("start") or 0)
            return line, max(1, sub.meta_get("col", 1) - width)
    return None, None


def unsupported(what: str, node: exp.Expr | None = None) -> SqlError:
    line, col = position(node)
    message = f"{what} cannot be translated faithfully into a plan"
    return SqlError("unsupported", message, line, col, {"construct": what})


@functools.lru_cache(maxsize=4096)
def known_type(typ: str) -> str:
    """``typ`` when sqlglot can read it as a Spark type, else "unknown"; cached: catalogs repeat."""
    try:
        exp.DataType.build(typ, dialect="spark")
    except (SqlglotError, ValueError):
        return "unknown"
    return typ


class Tables:
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

    def schema(self) -> dict[str, object]:
        """The catalog as sqlglot's qualify wants it."""
        return {name: {col: known_type(typ) for col, typ in cols} for name, cols in self.by_lower.values()}

    def columns_of(self, names: Sequence[str]) -> list[str]:
        """``table.column`` for every column of the named tables (error detail)."""
        out: list[str] = []
        for name in names:
            hit = self.by_lower.get(name.lower())
            if hit:
                out.extend(f"{hit[0]}.{c}" for c, _ in hit[1])
        return out


def parse_query(sql: str, dialect: str) -> exp.Query:
    """The one query in ``sql``; anything else is a ``SqlError`` with its position."""
    try:
        reader = dialect_of(dialect)
    except ValueError as err:
        close = did_you_mean(dialect, dialects())
        raise SqlError(
            "unknown_dialect",
            f"unknown SQL dialect {dialect!r}{suggestion(close)}",
            detail={"dialect": dialect, "available": dialects(), "did_you_mean": close},
        ) from err
    try:
        tokens = reader.tokenize(sql)
    except TokenError as err:
        line, col = _line_col(str(err))
        raise SqlError("parse_error", token_message(str(err)), line, col, _at(sql, line, col)) from err
    except SQLGLOT_SLIPS as err:
        raise _slipped(err) from err
    if may_nest_too_deep(sql, reader.tokenizer_class):
        check_nesting(tokens)  # before the recursive-descent parser sees them
    try:
        statements = [s for s in reader.parser().parse(tokens, sql) if s is not None]
    except ParseError as err:
        first = err.errors[0] if err.errors else {}
        highlight = first.get("highlight")
        line, col = first.get("line"), start_column(first.get("col"), highlight)
        message = syntax_message(str(first.get("description") or err), highlight)
        raise SqlError("parse_error", message, line, col, _at(sql, line, col)) from err
    except SQLGLOT_SLIPS as err:
        raise _slipped(err) from err
    if len(statements) != 1:
        raise SqlError("parse_error", f"expected exactly one statement, got {len(statements)}")
    stmt = statements[0]
    if not isinstance(stmt, exp.Query):
        raise unsupported(f"{stmt.key.upper()} statement (only queries are supported)", stmt)
    return stmt


def _at(sql: str, line: int | None, col: int | None) -> dict[str, Any] | None:
    """The caret excerpt of a syntax error, as its detail."""
    shown = excerpt(sql, line, col)
    return {"excerpt": shown} if shown is not None else None


def _slipped(err: Exception) -> SqlError:
    # the parser's own exception says nothing in SQL terms: it is logged, the user told what to look at
    logger.info("the SQL parser failed on a query: %s: %s", type(err).__name__, err)
    return SqlError(
        "parse_error",
        "the query cannot be read: a function called with the wrong number or kind of arguments, or an "
        "unfinished construct?",
    )


def _line_col(message: str) -> tuple[int | None, int | None]:
    hit = re.search(r"Line:? (\d+), Col:? (\d+)", message)
    return (int(hit.group(1)), int(hit.group(2))) if hit else (None, None)


def check_tables(used: list[exp.Table], cte_names: set[str], tables: Tables) -> None:
    """Refuse tables the catalog does not know (CTE names, lower case, are fine)."""
    if not tables.known:
        return
    for table in used:
        if not isinstance(table.this, exp.Identifier):
            continue
        if not table.db and table.name.lower() in cte_names:
            continue
        if tables.lookup(table) is None:
            line, col = position(table)
            available = sorted(v[0] for v in tables.by_lower.values())
            close = did_you_mean(table.name, available)
            raise SqlError(
                "unknown_table",
                f"table {'.'.join(part.name for part in table.parts)} is not in the catalog{suggestion(close)}",
                line,
                col,
                {"table": table.name, "available": available, "did_you_mean": close},
            )


def qualify_query(stmt: exp.Expr, tables: Tables, dialect: str, sql: str) -> exp.Expr:
    """Qualify every column and expand stars; turn sqlglot's complaints into SqlErrors."""
    try:
        return qualify(
            stmt,
            schema=tables.schema() if tables.known else None,
            dialect=dialect_of(dialect),
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
                line, col = position(named[0])
            used = sorted({t.name for t in stmt.find_all(exp.Table)})
            available = tables.columns_of(used)
            close = did_you_mean(column.rsplit(".", 1)[-1], [name.rsplit(".", 1)[-1] for name in available])
            raise SqlError(
                "unknown_column",
                f"column {column} does not exist in {', '.join(used)}{suggestion(close)}",
                line,
                col,
                {"column": column, "available": available, "did_you_mean": close},
            ) from err
        raise SqlError("invalid_query", message.split(". Line")[0], line, col) from err


def balance(stmt: exp.Expr) -> exp.Expr:
    """Rebuild long AND/OR chains and UNION chains as balanced trees, in place; returns ``stmt``.

    sqlglot parses ``a OR b OR c ...`` as a left-deep tree, so 20,000 terms nest
    20,000 deep: every recursive walk overflows and qualification, which looks up
    each column's ancestors, is quadratic. AND, OR and a chain of UNIONs that all
    agree on ALL are associative, so a balanced tree means the same and is only
    log2(n) deep. The walk is iterative.
    >>> import sqlglot
    >>> tree = balance(sqlglot.parse_one("SELECT 1 FROM t WHERE " + " OR ".join(f"a = {i}" for i in range(64))))
    >>> max(_depth(n) for n in tree.find_all(exp.Or)) <= 8
    True
    """
    stack: list[exp.Expr] = [stmt]
    while stack:
        node = stack.pop()
        if _chain_root(node):
            leaves = _leaves(node)
            if len(leaves) > 2:
                _balanced(node, leaves)
                stack.extend(leaves)
                continue
        stack.extend(child_nodes(node))
    return stmt


def _same_link(a: exp.Expr, b: exp.Expr) -> bool:
    """``b`` continues ``a``'s chain: the same connector, or a plain union with the same ALL."""
    if type(a) is not type(b):
        return False
    if isinstance(a, exp.Connector):
        return True
    if isinstance(a, exp.Union):
        keys = ("order", "limit", "offset", "with_", "by_name", "side", "kind", "on")
        return bool(a.args.get("distinct")) == bool(b.args.get("distinct")) and not any(b.args.get(k) for k in keys)
    return False


def _chain_root(node: exp.Expr) -> bool:
    """A chain starts here (the walk reaches a chain's inner links only when it has two operands)."""
    if isinstance(node, exp.Union):
        return not any(node.args.get(k) for k in ("by_name", "side", "kind", "on"))
    return isinstance(node, (exp.And, exp.Or))


def _leaves(root: exp.Expr) -> list[exp.Expr]:
    """The chain's operands left to right, without recursion."""
    out: list[exp.Expr] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node is root or _same_link(root, node):
            stack.append(node.expression)
            stack.append(node.this)
        else:
            out.append(node)
    return out


def _balanced(root: exp.Expr, leaves: list[exp.Expr]) -> exp.Expr:
    """The same chain as a balanced tree; the root keeps its own arguments (UNION's WITH/ORDER/LIMIT). The old
    links below the root are emptied: they would hold the operands (and each other) in a reference cycle."""
    old: list[exp.Expr] = []
    stack = [root.this, root.expression]
    while stack:
        node = stack.pop()
        if isinstance(node, exp.Expr) and _same_link(root, node):
            old.append(node)
            stack.append(node.expression)
            stack.append(node.this)
    level = [leaf.pop() if leaf.parent is not None else leaf for leaf in leaves]
    while len(level) > 2:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            link = root.__class__(this=level[i], expression=level[i + 1])
            if isinstance(root, exp.Union):
                link.set("distinct", root.args.get("distinct"))
            nxt.append(link)
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    root.set("this", level[0])
    root.set("expression", level[1])
    for link in old:
        link.args.clear()
    return root


def _depth(node: exp.Expr) -> int:
    depth = 0
    while node.parent is not None:
        node = node.parent
        depth += 1
    return depth
