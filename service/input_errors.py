"""Errors about the request as the user wrote it: SQL errors at ``$.sql`` (or ``$.dialect``) with the tables the
service knows, a table never analyzed with the command that analyzes it, and top-level ``functions`` reported
where they were sent.

The engine reads a plan and ``options``; a user who sent SQL and top-level ``functions`` never wrote either, so
paths into them (``$.plan.input.table``, ``$.options.functions.f``) are translated back here.
"""

from __future__ import annotations

import re
from typing import Any

from costmodel.errors import ServiceError
from service.errors import InputError


def _messages() -> Any:
    from service.sql import messages  # SQL support is optional

    return messages


def analyze_hint(table: str) -> str:
    """How to make a table known: describe it, or analyze it (CLI or HTTP)."""
    return (
        f"describe it under catalog.tables, or analyze it: pushdown analyze <path> --name {table} "
        f"(or POST /tables/{table}/analyze)"
    )


def sql_error(exc: Any, sql: str, analyzed: list[str], dialect: str = "spark") -> InputError:
    """A ``service.sql.SqlError`` as the request's error: at ``$.sql`` with line, column and excerpt, at
    ``$.dialect`` for an unknown dialect; an unknown table also lists the analyzed tables and how to add one."""
    detail = {("name" if key == "column" else key): value for key, value in exc.detail.items()}
    if exc.code == "unknown_dialect":
        return InputError(exc.code, exc.message, "$.dialect", detail)
    message, line, column = exc.message, exc.line, exc.column
    if exc.code == "unknown_table":
        table = str(detail.get("table"))
        message, detail = _unknown_table(table, detail.get("available") or [], analyzed)
        if line is None:
            line, column = _table_position(sql, dialect, table)
    if line is not None and "excerpt" not in detail:
        shown = _messages().excerpt(sql, line, column)
        if shown is not None:
            detail["excerpt"] = shown
    detail.update(line=line, column=column)
    return InputError(exc.code, message, "$.sql", detail)


def _unknown_table(table: str, described: list[str], analyzed: list[str]) -> tuple[str, dict[str, Any]]:
    messages = _messages()
    available = sorted({*described, *analyzed})
    close = messages.did_you_mean(table, available)
    message = (
        f"table {table} is neither in the request's catalog nor among the analyzed tables"
        f"{messages.suggestion(close)} ({analyze_hint(table)})"
    )
    detail = {"table": table, "available": available, "did_you_mean": close, "hint": analyze_hint(table)}
    return message, detail


def engine_unknown_table(exc: ServiceError, sql: str, dialect: str, analyzed: list[str]) -> InputError:
    """The engine's ``unknown_table`` for a plan the SQL adapter built: said at ``$.sql``, where the user wrote
    the name, with its line and column."""
    table = str((exc.detail or {}).get("table"))
    message, detail = _unknown_table(table, list((exc.detail or {}).get("available") or []), analyzed)
    line, column = _table_position(sql, dialect, table)
    if line is not None:
        shown = _messages().excerpt(sql, line, column)
        if shown is not None:
            detail["excerpt"] = shown
    detail.update(line=line, column=column)
    return InputError("unknown_table", message, "$.sql", detail)


def _table_position(sql: str, dialect: str, table: str) -> tuple[int | None, int | None]:
    try:
        from sqlglot import exp

        from service.sql.parse import parse_query, position

        stmt = parse_query(sql, dialect)
    except Exception:  # noqa: BLE001 - the position is a courtesy; the error stands without it
        return None, None
    for node in stmt.find_all(exp.Table):
        if node.name.lower() == table.rsplit(".", 1)[-1].lower():
            return position(node)
    return None, None


_FUNCTION_PATH = re.compile(r"^\$\.options\.functions\.([^.\[]+)(.*)$")


def functions_path(exc: ServiceError, top_level: frozenset[str]) -> ServiceError:
    """``exc`` with a path into ``options.functions.<name>`` moved to ``functions.<name>`` when the request sent
    that declaration under top-level ``functions`` (the same object otherwise)."""
    hit = _FUNCTION_PATH.match(exc.path or "")
    if hit is None or hit.group(1) not in top_level:
        return exc
    moved = InputError(exc.code, exc.message, f"$.functions.{hit.group(1)}{hit.group(2)}", exc.detail)
    moved.__cause__ = exc
    return moved


def unknown_function_warnings(plan: Any, declared: Any) -> list[str]:
    """A warning per function in the answer's ``plan`` that the engine does not know, nobody declared, and whose
    name is close to one it knows: a typo keeps its predicate where the query put it without anyone noticing."""
    from costmodel.functions import KNOWN_FUNCTIONS

    names = {str(name).lower() for name in declared} if isinstance(declared, dict) else set()
    known = sorted({*KNOWN_FUNCTIONS, *names})
    called: dict[str, None] = {}
    stack = [plan]
    while stack:  # iterative: plans may be thousands of levels deep
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("fn"), str):
                called.setdefault(node["fn"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    warnings: list[str] = []
    for name in called:
        if name.lower() in known:
            continue
        close = _messages().did_you_mean(name, known)
        if close:
            warnings.append(
                f"function {name} is not one the engine knows, so predicates calling it stay where they are"
                f"{_messages().suggestion(close)} (or declare it under functions)"
            )
    return warnings
