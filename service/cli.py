"""The ``pushdown`` command: serve the API, or run the same use case on a request file or a SQL query.

This is the composition root of the command line, so it is the one module under
``service/`` that imports ``api`` (for the app and the request model).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from costmodel import PlanError
from service.errors import InputError
from service.settings import Settings

app = typer.Typer(
    help="Cost-based filter-pushdown decisions: serve the HTTP API or optimize a request file.",
    no_args_is_help=True,
    add_completion=False,
)

#: Exit status for a request the service refuses (bad JSON, plan, catalog, options, SQL).
EXIT_BAD_INPUT = 2


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Interface to bind [default: PUSHDOWN_HOST or 127.0.0.1]")] = None,
    port: Annotated[int | None, typer.Option(help="Port to bind [default: PUSHDOWN_PORT or 8000]")] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
    allow_no_token: Annotated[
        bool,
        typer.Option("--allow-no-token", help="Serve beyond loopback without a token anyway [PUSHDOWN_ALLOW_NO_TOKEN]"),
    ] = False,
) -> None:
    """Serve the HTTP API (POST /optimize, GET /healthz, /docs) with uvicorn."""
    import uvicorn

    from api.app import create_app
    from api.guard import is_loopback

    # Request work runs on threads; a shorter switch interval lets the event loop (and /healthz) take the
    # GIL back from a CPU-bound request sooner (1 ms instead of 5 ms).
    sys.setswitchinterval(0.001)

    settings = Settings()
    settings = settings.model_copy(update={"host": host or settings.host})  # the Host check knows the bind
    if (
        not is_loopback(settings.host)
        and settings.api_token is None
        and not (allow_no_token or settings.allow_no_token)
    ):
        _fail(
            f"refusing to serve on {settings.host} without a token: anyone who reaches it could use it. "
            "Set PUSHDOWN_API_TOKEN, bind 127.0.0.1, or pass --allow-no-token (PUSHDOWN_ALLOW_NO_TOKEN=true)",
            "--host",
        )
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port if port is None else port,
        log_level=log_level,
        # SIGTERM: stop accepting, give in-flight requests this long, then cut them (their work is bounded too).
        timeout_graceful_shutdown=settings.shutdown_grace_s,
    )


@app.command()
def optimize(
    request_file: Annotated[
        str | None,
        typer.Argument(help="A POST /optimize request body as JSON (- for stdin), or a query in a file ending .sql."),
    ] = None,
    sql: Annotated[str | None, typer.Option("--sql", help="The query as text, instead of a file.")] = None,
    catalog: Annotated[
        Path | None, typer.Option(help="Catalog JSON (tables, columns, statistics); required for SQL input.")
    ] = None,
    dialect: Annotated[str | None, typer.Option(help="SQL dialect of query and output (default: spark)")] = None,
    mode: Annotated[str | None, typer.Option(help="cost, always or never (default: cost)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw JSON response.")] = False,
) -> None:
    """Optimize one request or query and print the explain, cost tables and decision log (and the SQL after)."""
    from api.models import parse_optimize_request
    from service.optimize import OptimizeService, allow_deep_plans

    settings = Settings()
    allow_deep_plans()
    source = _sql_source(request_file, sql)
    text, where = source or (None, "")
    if source is None:
        if catalog is not None or dialect is not None or mode is not None:
            _fail("--catalog, --dialect and --mode apply to SQL input; a request file carries its own", "$")
        if request_file is None:
            _fail("give a request file, a .sql file or --sql", "$")
        raw = _read_bytes(request_file)
    else:
        raw = _sql_request(source[0], catalog, dialect, mode)
    try:
        from service.statistics import StatisticsStore  # a catalog may name tables analyzed before

        try:
            store: StatisticsStore | None = StatisticsStore.from_settings(settings)
        except ValueError:  # a store the command line cannot open: requests that name no table still work
            store = None
        service = OptimizeService(store)
        response = service.optimize(parse_optimize_request(raw, settings.max_json_depth))
    except (InputError, PlanError) as exc:
        line, column = _sql_position(exc)
        if text is not None and line is not None:
            _fail_at_sql(exc.message, text, where, line, column)
        _fail(exc.message, exc.path)
    typer.echo(json.dumps(response, indent=2) if as_json else render(response))


def _sql_source(request_file: str | None, sql: str | None) -> tuple[str, str] | None:
    """(query text, where it came from) for SQL input, None for a JSON request."""
    if sql is not None:
        if request_file is not None:
            _fail("give either a file or --sql, not both", "$")
        return sql, "--sql"
    if request_file is not None and request_file.lower().endswith(".sql"):
        return _read_bytes(request_file, "$.sql").decode("utf-8", errors="replace"), request_file
    return None


def _sql_position(exc: Exception) -> tuple[int | None, int | None]:
    """Line and column of a SQL error, read from the adapter's own error.

    Not from ``InputError.detail``: there an unknown column's name (``detail.column``)
    overwrites the position's column.
    """
    from service.sql.errors import SqlError

    cause = exc.__cause__
    if isinstance(cause, SqlError) and isinstance(cause.line, int):
        return cause.line, cause.column if isinstance(cause.column, int) else None
    return None, None


def _read_bytes(name: str, path: str = "$") -> bytes:
    try:
        return sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        _fail(f"cannot read {name}: {exc.strerror or exc}", path)


def _sql_request(text: str, catalog: Path | None, dialect: str | None, mode: str | None) -> bytes:
    """The POST /optimize body for a query, so it is validated exactly as the HTTP API validates it."""
    if catalog is None:
        _fail("SQL input needs --catalog: without table schemas columns cannot be resolved", "$.catalog")
    try:
        tables = json.loads(_read_bytes(str(catalog), "$.catalog"))
    except json.JSONDecodeError as exc:
        _fail(f"{catalog} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}", "$.catalog")
    body: dict[str, Any] = {"sql": text, "dialect": dialect or "spark", "catalog": tables}
    if mode is not None:
        body["options"] = {"mode": mode}
    return json.dumps(body).encode()


def _fail(message: str, path: str) -> NoReturn:
    typer.echo(f"error: {message}\n  at {path}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def _fail_at_sql(message: str, text: str, where: str, line: int, column: int | None) -> NoReturn:
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


# ---------------------------------------------------------------- text rendering

_COST_HEADERS = ("operator", "id", "rows received", "rows emitted", "k", "cost")
_DECISION_HEADERS = ("predicate", "operator", "action", "reason", "p", "r", "r1", "lhs", "rhs")


def _number(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}" if abs(value) >= 100 else f"{value:.3g}"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Aligned plain text: numbers right-aligned, text left-aligned; stable when piped, unlike a terminal UI."""
    cells = [[_number(v) for v in row] for row in rows]
    numeric = [
        all(isinstance(row[i], int | float) or row[i] in (None, "") for row in rows) for i in range(len(headers))
    ]
    widths = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True))

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(row) for row in cells]
    return "\n".join(text.rstrip() for text in out)


def _cost_table(table: dict[str, Any]) -> str:
    rows: list[list[Any]] = [
        [n.get("operator"), n.get("id"), n.get("rows_in"), n.get("rows_out"), n.get("k"), n.get("cost")]
        for n in table.get("nodes", [])
    ]
    rows.append(["total", "", "", "", "", table.get("total")])
    return format_table(_COST_HEADERS, rows)


def render(response: dict[str, Any]) -> str:
    """The response as a person reads it: explain trees, cost tables with savings, then the decision log."""
    explain, cost = response.get("explain", {}), response.get("cost", {})
    decisions = [[d.get(h) for h in _DECISION_HEADERS] for d in response.get("decisions", [])]
    savings = cost.get("savings")
    parts = [
        "== explain before ==",
        explain.get("before", ""),
        "== explain after ==",
        explain.get("after", ""),
        "== cost before ==",
        _cost_table(cost.get("before", {})),
        "== cost after ==",
        _cost_table(cost.get("after", {})),
        f"savings: {savings * 100:.1f}%" if isinstance(savings, int | float) else "savings: -",
        "== decisions ==",
        format_table(_DECISION_HEADERS, decisions),
    ]
    if response.get("warnings"):
        parts += ["== warnings ==", *(str(w) for w in response["warnings"])]
    if response.get("sql"):
        parts += ["== sql after ==", response["sql"]]
    return "\n".join(parts)


@app.command()
def analyze(
    path: Annotated[str, typer.Argument(help="A file or directory Spark reads (with --format table: a table name).")],
    name: Annotated[str, typer.Option("--name", help="Name the statistics are stored and referenced under.")],
    fmt: Annotated[str, typer.Option("--format", help="parquet, csv, orc, json, or table")] = "parquet",
    sample_rows: Annotated[
        int | None, typer.Option(min=0, help="Rows to sample [default: PUSHDOWN_ANALYZE_SAMPLE_ROWS or 100000]")
    ] = None,
    master: Annotated[str | None, typer.Option(help="Spark master [default: PUSHDOWN_SPARK_MASTER]")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored summary as JSON.")] = False,
) -> None:
    """Analyze a table with Spark (statistics, containers, a sample) and store it as a new version."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from service.analyze import AnalyzeRequest, analyze_and_store, spark_session
    from service.jobs import error_message
    from service.statistics import StatisticsStore, check_name

    settings = Settings()
    try:
        check_name(name, "--name")
        request = AnalyzeRequest(
            name=name,
            path=None if fmt == "table" else path,
            table=path if fmt == "table" else None,
            format="parquet" if fmt == "table" else fmt,
            sample_rows=settings.analyze_sample_rows if sample_rows is None else sample_rows,
            histogram_buckets=settings.analyze_histogram_buckets,
            mcv_count=settings.analyze_mcv_count,
            seed=settings.analyze_seed,
        )
        store = StatisticsStore.from_settings(settings)
        if fmt != "table" and "://" not in path and not Path(path).exists():
            raise InputError("path_not_found", f"no file or directory at {path}", "PATH")
    except InputError as exc:
        _fail(exc.message, exc.path)
    except ValueError as exc:
        _fail(str(exc), "--format" if "format" in str(exc) else "$")
    err = Console(stderr=True)
    columns = (
        TextColumn("{task.description:<11}"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TextColumn("{task.fields[rows]:>12,} rows"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=not as_json) as bar:
        task = bar.add_task("starting", total=100, rows=0)

        def report(stage: str, rows: int, percent: float) -> None:
            bar.update(task, description=stage, completed=percent, rows=rows)

        try:
            summary = analyze_and_store(spark_session(master or settings.spark_master), request, store, report)
        except Exception as exc:  # Spark's errors (missing path, bad format) as one line, no JVM trace
            typer.echo(f"error: analyze failed: {error_message(exc)}", err=True)
            raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    stored = store.get(name, summary["version"])
    stats = stored.stats if stored is not None else {}
    table = Table(
        title=f"{name} v{summary['version']}: {summary['row_count']:,} rows, "
        f"{summary['sample_rows']:,} sampled, {len(stats.get('containers', []))} containers, "
        f"{summary['duration_s']:.1f} s"
    )
    for header in ("column", "type", "nulls", "ndv", "min", "max"):
        table.add_column(header)
    for col in stats.get("columns", []):
        cs = stats.get("column_stats", {}).get(col["name"], {})
        table.add_row(col["name"], col["type"], *(str(cs.get(k, "-")) for k in ("null_count", "ndv", "min", "max")))
    Console().print(table)


if __name__ == "__main__":
    app()
