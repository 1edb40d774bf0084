"""What ``pushdown optimize`` and ``pushdown explain`` read: a request file, a ``.sql`` file or ``--sql``, turned into
the POST /optimize body and answered, or exit 2 saying what is wrong and where (a caret under a SQL error)."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import typer

from costmodel.errors import ServiceError
from service.deep_json import dumps_at_any_depth, loads_at_any_depth
from service.settings import Settings

#: Exit status for a request the service refuses (bad JSON, plan, catalog, options, SQL).
EXIT_BAD_INPUT = 2


def optimize_input(
    request_file: str | None,
    sql: str | None,
    catalog: Path | None,
    dialect: str | None,
    mode: str | None,
    functions: str | None = None,
) -> dict[str, Any]:
    """The answer for the command line's input, or exit 2 saying what is wrong and where."""
    from service.assembly import assemble
    from service.request import parse_optimize_request

    settings = Settings()
    source = sql_source(request_file, sql)
    text, where = source or (None, "")
    if source is None:
        if catalog is not None or dialect is not None or mode is not None or functions is not None:
            fail("--catalog, --dialect, --mode and --functions apply to SQL input; a request file carries its own", "$")
        if request_file is None:
            fail("give a request file, a .sql file or --sql", "$")
        raw = read_bytes(request_file)
    else:
        raw = sql_request(source[0], catalog, dialect, mode, functions)
    try:
        # the query's tables may be analyzed ones; a store the command line cannot open is left out (requests
        # that name no table still work)
        optimizer = assemble(settings, history=False, cache=False, warn=False).optimizer
        request = parse_optimize_request(raw, settings.max_json_depth)
        return optimizer.optimize(replace(request, detail="full"))  # the command prints it all
    except ServiceError as exc:
        line, column = sql_position(exc)
        if text is not None and line is not None:
            fail_at_sql(exc.message, text, where, line, column)
        fail(exc.message, exc.path)


def is_request_id(text: str) -> bool:
    """A recorded answer's id (a UUID or a caller's X-Request-ID) rather than a file to read.

    >>> is_request_id("3f2a-77"), is_request_id("query.sql"), is_request_id("-")
    (True, False, False)
    """
    return (
        text != "-"
        and not Path(text).exists()
        and re.fullmatch(r"[A-Za-z0-9._:-]{1,128}", text) is not None
        and not text.endswith((".json", ".sql"))
    )


def sql_source(request_file: str | None, sql: str | None) -> tuple[str, str] | None:
    """(query text, where it came from) for SQL input, None for a JSON request."""
    if sql is not None:
        if request_file is not None:
            fail("give either a file or --sql, not both", "$")
        return sql, "--sql"
    if request_file is not None and request_file.lower().endswith(".sql"):
        return read_bytes(request_file, "$.sql").decode("utf-8", errors="replace"), request_file
    return None


def sql_position(exc: Exception) -> tuple[int | None, int | None]:
    """Line and column of a SQL error, read from the adapter's own error.

    Not from ``InputError.detail``: there an unknown column's name (``detail.column``)
    overwrites the position's column.
    """
    from service.sql.errors import SqlError

    cause = exc.__cause__
    if isinstance(cause, SqlError) and isinstance(cause.line, int):
        return cause.line, cause.column if isinstance(cause.column, int) else None
    return None, None


def read_bytes(name: str, path: str = "$") -> bytes:
    """The file's bytes (``-``: standard input), or exit 2 naming the file."""
    try:
        return sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        fail(f"cannot read {name}: {exc.strerror or exc}", path)


def sql_request(
    text: str, catalog: Path | None, dialect: str | None, mode: str | None, functions: str | None = None
) -> bytes:
    """The POST /optimize body for a query, so it is validated exactly as the HTTP API validates it."""
    body: dict[str, Any] = {"sql": text, "dialect": dialect or "spark"}
    if catalog is not None:  # without one, the query's tables are the analyzed tables of those names
        try:
            body["catalog"] = loads_at_any_depth(read_bytes(str(catalog), "$.catalog"))
        except json.JSONDecodeError as exc:
            fail(f"{catalog} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}", "$.catalog")
    if mode is not None:
        body["options"] = {"mode": mode}
    if functions is not None:
        body["functions"] = functions_option(functions)
    return dumps_at_any_depth(body).encode()  # a deep catalog is refused by the request's depth limit


def functions_option(value: str) -> Any:
    """``--functions``: declarations as JSON text (``{"my_udf": {"cost": 5000}}``) or the name of a JSON file."""
    text = value
    if not value.lstrip().startswith("{"):
        text = read_bytes(value, "--functions").decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"--functions is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}", "--functions")


def fail(message: str, path: str) -> NoReturn:
    """Say what is wrong and where (a JSON path or an option), then exit 2."""
    typer.echo(f"error: {message}\n  at {path}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def fail_at_sql(message: str, text: str, where: str, line: int, column: int | None) -> NoReturn:
    """Point at the place in the query, as a compiler does: line, column and a caret under it."""
    lines = text.splitlines() or [""]
    shown = lines[line - 1] if 0 < line <= len(lines) else ""
    at = f"line {line}, column {column}" if column is not None else f"line {line}"
    out = [f"error: {message}", f"  at {at} of {where}"]
    if shown:
        gutter = f"{line} | "
        out.append(f"  {gutter}{shown}")
        if column:
            out.append("  " + " " * (len(gutter) - 2) + "| " + " " * (column - 1) + "^")
    typer.echo("\n".join(out), err=True)
    raise typer.Exit(EXIT_BAD_INPUT)
