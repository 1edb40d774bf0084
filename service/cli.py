"""The ``pushdown`` command: serve the API, or run the same use case on a request file or a SQL query.

This is the composition root of the command line, so it is the one module under
``service/`` that imports ``api`` (for the app and the request model).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from costmodel.errors import ServiceError
from service.cli_render import DECISION_HEADERS, format_table, render, statistics_lines
from service.cli_savings import savings
from service.errors import InputError
from service.settings import Settings

__all__ = ["app", "format_table", "render"]

app = typer.Typer(
    help="Cost-based filter-pushdown decisions: serve the HTTP API or optimize a request file.",
    no_args_is_help=True,
    add_completion=False,
)

#: Exit status for a request the service refuses (bad JSON, plan, catalog, options, SQL).
EXIT_BAD_INPUT = 2


app.command()(savings)  # the history's totals, against rule-based pushdown first (service/cli_savings.py)


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_print_version)
    ] = False,
) -> None:
    """Cost-based filter-pushdown decisions: serve the HTTP API or optimize a request file."""


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Interface to bind (default: PUSHDOWN_HOST or 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(help="Port to bind (default: PUSHDOWN_PORT or 8000)")] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, max=64, help="Processes to serve with (default: PUSHDOWN_WORKERS or 1)")
    ] = None,
    log_level: Annotated[str, typer.Option(help="Log level: debug, info, warning, error")] = "info",
    log_format: Annotated[str | None, typer.Option(help="json or text (default: PUSHDOWN_LOG_FORMAT or json)")] = None,
    allow_no_token: Annotated[
        bool,
        typer.Option("--allow-no-token", help="Serve beyond loopback without a token anyway (PUSHDOWN_ALLOW_NO_TOKEN)"),
    ] = False,
) -> None:
    """Serve the HTTP API (POST /optimize, GET /healthz, /metrics, /docs) with uvicorn.

    With several workers each is a process of its own: they share the database (history, statistics),
    and /metrics adds up all of them.
    """
    import os

    import uvicorn

    from api.guard import is_loopback
    from service.logs import log_config

    # a served process gets its heavy-request workers ready at startup, unless the environment says otherwise
    os.environ.setdefault("PUSHDOWN_PRESTART_HEAVY_WORKERS", "true")
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
    fmt = log_format or settings.log_format
    if fmt not in ("json", "text"):
        _fail(f"--log-format must be json or text, not {fmt!r}", "--log-format")
    count = settings.workers if workers is None else workers
    common: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port if port is None else port,
        "log_level": log_level.lower(),
        "log_config": log_config(log_level, fmt),
        "access_log": False,  # pushdown.access logs each request, with its id
        # SIGTERM: stop accepting, give in-flight requests this long, then cut them (their work is bounded too).
        "timeout_graceful_shutdown": settings.shutdown_grace_s,
    }
    if count > 1:
        _share_metrics_between_processes()
        # each worker builds its own app from the environment: pass on what the command line changed
        os.environ["PUSHDOWN_HOST"] = settings.host
        if allow_no_token:
            os.environ["PUSHDOWN_ALLOW_NO_TOKEN"] = "true"
        uvicorn.run("service.cli:served_app", factory=True, workers=count, **common)
        return
    from api.app import create_app

    application = create_app(settings)
    _tune_for_serving()
    uvicorn.run(application, **common)


def _print_version(value: bool) -> None:
    if value:
        from service import __version__

        typer.echo(f"pushdown {__version__}")
        raise typer.Exit()


def _share_metrics_between_processes() -> None:
    """A fresh PROMETHEUS_MULTIPROC_DIR for the workers (the given one, emptied, or a new temporary one)."""
    import os
    import tempfile

    directory = Path(os.environ.get("PROMETHEUS_MULTIPROC_DIR") or tempfile.mkdtemp(prefix="pushdown-metrics-"))
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):  # values of an earlier run would be added to this one's
        stale.unlink()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)


_Source = Annotated[
    str | None,
    typer.Argument(help="A POST /optimize request body as JSON (- for stdin), or a query in a file ending .sql."),
]
_Sql = Annotated[str | None, typer.Option("--sql", help="The query as text, instead of a file.")]
_Catalog = Annotated[
    Path | None,
    typer.Option(
        help="Catalog JSON (tables, columns, statistics); tables it lacks are looked up by name "
        "among the analyzed tables."
    ),
]
_Dialect = Annotated[str | None, typer.Option(help="SQL dialect of query and output (default: spark)")]
_Mode = Annotated[str | None, typer.Option(help="cost, always or never (default: cost)")]


def served_app() -> Any:
    """The app of one of several ``pushdown serve`` workers: built from the environment, then tuned as a single
    process is (uvicorn calls this in each worker process)."""
    from api.app import create_app

    application = create_app()
    _tune_for_serving()
    return application


def _tune_for_serving() -> None:
    """Keep the event loop (and /healthz) responsive while request threads compute.

    A shorter switch interval gets the GIL back to the loop sooner (1 ms instead of 5 ms). And a request that
    builds millions of objects (a 900 KB query's tokens) triggers full garbage collections, each holding the
    GIL for as long as it takes to walk the whole heap: measured 0.15 to 3.9 s apiece, nine of them in one such
    request. Full collections a hundred times rarer (every ~7 million net allocations), with the startup objects
    frozen out of them, remove those pauses; young collections stay small and frequent (Python's defaults: a
    larger first generation made each of them a 60-250 ms pause instead). Measured on that query: the longest
    stall of the event loop went from 1.6 s to 0.12 s. Acyclic garbage is freed by reference counting as before.
    """
    import gc

    sys.setswitchinterval(0.001)
    gc.set_threshold(700, 10, 1000)
    gc.freeze()


@app.command()
def optimize(
    request_file: _Source = None,
    sql: _Sql = None,
    catalog: _Catalog = None,
    dialect: _Dialect = None,
    mode: _Mode = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw JSON response.")] = False,
) -> None:
    """Optimize one request or query and print the explain, cost tables and decision log (and the SQL after)."""
    response = _optimize(request_file, sql, catalog, dialect, mode)
    typer.echo(json.dumps(response, indent=2) if as_json else render(response))


@app.command()
def explain(
    request_file: _Source = None,
    sql: _Sql = None,
    catalog: _Catalog = None,
    dialect: _Dialect = None,
    mode: _Mode = None,
    matrix: Annotated[bool, typer.Option("--matrix", help="Also print every (predicate, operator) row.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="A recorded answer: print the comparison as JSON.")] = False,
) -> None:
    """Say per predicate where it ended up and why: the answer's ``summary``, then the plan after.

    Given the ``request_id`` of a recorded answer instead of a request, show that answer's plan with, per node,
    estimated rows against the rows a run reported (q-error).
    """
    from service.decision_summary import render_summary

    if request_file is not None and sql is None and _is_request_id(request_file):
        _explain_recorded(request_file, as_json)
        return
    response = _optimize(request_file, sql, catalog, dialect, mode)
    parts = ["== predicates ==", render_summary(response.get("summary", [])) or "(no predicates)"]
    parts += ["== plan after ==", response.get("explain", {}).get("after", "")]
    if matrix:
        decisions = [[d.get(h) for h in DECISION_HEADERS] for d in response.get("decisions", [])]
        parts += ["== decisions ==", format_table(DECISION_HEADERS, decisions)]
    parts += statistics_lines(response)
    typer.echo("\n".join(parts))


def _is_request_id(text: str) -> bool:
    """A recorded answer's id (a UUID or a caller's X-Request-ID) rather than a file to read."""
    return (
        text != "-"
        and not Path(text).exists()
        and re.fullmatch(r"[A-Za-z0-9._:-]{1,128}", text) is not None
        and not text.endswith((".json", ".sql"))
    )


def _optimize(
    request_file: str | None, sql: str | None, catalog: Path | None, dialect: str | None, mode: str | None
) -> dict[str, Any]:
    """The answer for the command line's input, or exit 2 saying what is wrong and where."""
    from api.models import parse_optimize_request
    from service.optimize import OptimizeService

    settings = Settings()
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
        from service.statistics import StatisticsStore  # the query's tables may be analyzed ones

        try:
            store: StatisticsStore | None = StatisticsStore.from_settings(settings)
        except ValueError:  # a store the command line cannot open: requests that name no table still work
            store = None
        request = parse_optimize_request(raw, settings.max_json_depth)
        return OptimizeService(store).optimize(replace(request, detail="full"))  # the command prints it all
    except ServiceError as exc:
        line, column = _sql_position(exc)
        if text is not None and line is not None:
            _fail_at_sql(exc.message, text, where, line, column)
        _fail(exc.message, exc.path)


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
    body: dict[str, Any] = {"sql": text, "dialect": dialect or "spark"}
    if catalog is not None:  # without one, the query's tables are the analyzed tables of those names
        try:
            body["catalog"] = json.loads(_read_bytes(str(catalog), "$.catalog"))
        except json.JSONDecodeError as exc:
            _fail(f"{catalog} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}", "$.catalog")
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


def _explain_recorded(request_id: str, as_json: bool) -> None:
    """Show a recorded answer's plan and, per node, estimated rows against the rows a run reported (q-error)."""
    from service.feedback.report import node_rows, render
    from service.feedback.store import FeedbackStore
    from service.history import HistoryStore

    settings = Settings()
    try:
        store = HistoryStore.from_settings(settings)
        record = store.get(request_id)
        feedback = FeedbackStore(store).get(request_id) if record is not None else None
    except Exception as exc:  # noqa: BLE001 - a database the command cannot reach: say which, no trace
        _fail(f"the history store cannot be read: {type(exc).__name__}: {exc}", "$")
    if record is None:
        _fail(f"no optimization {request_id!r} in the history", "$.request_id")
    if as_json:
        rows = node_rows(record["response"], feedback["nodes"]) if feedback else None
        typer.echo(json.dumps({"request_id": request_id, "feedback": feedback and {**feedback, "nodes": rows}}))
    else:
        typer.echo(render(record, feedback))


@app.command()
def analyze(
    path: Annotated[str, typer.Argument(help="A file or directory Spark reads (with --format table: a table name).")],
    name: Annotated[str, typer.Option("--name", help="Name the statistics are stored and referenced under.")],
    fmt: Annotated[str, typer.Option("--format", help="parquet, csv, orc, json, or table")] = "parquet",
    sample_rows: Annotated[
        int | None, typer.Option(min=0, help="Rows to sample (default: PUSHDOWN_ANALYZE_SAMPLE_ROWS or 100000)")
    ] = None,
    master: Annotated[str | None, typer.Option(help="Spark master (default: PUSHDOWN_SPARK_MASTER)")] = None,
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
