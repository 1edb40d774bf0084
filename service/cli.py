"""The ``pushdown`` command: serve the API, or run the same use case on a request file or a SQL query.

This is the composition root of the command line, with the ``cli_`` modules beside it (one per command, and
``cli_input`` for what optimize and explain read). Its one import of ``api`` is ``api.serve``, the command that
serves HTTP: the only import from ``service`` into ``api`` that the layering contract allows (pyproject.toml).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from api.serve import serve  # the one import of api (see above)
from service.cli_analyze import analyze
from service.cli_input import EXIT_BAD_INPUT, fail, is_request_id, optimize_input
from service.cli_render import DECISION_HEADERS, format_table, predicates_text, render, statistics_lines
from service.cli_savings import savings
from service.deep_json import dumps_at_any_depth
from service.settings import Settings

__all__ = ["EXIT_BAD_INPUT", "app", "format_table", "render"]

app = typer.Typer(
    help="Cost-based filter-pushdown decisions: serve the HTTP API or optimize a request file.",
    no_args_is_help=True,
    add_completion=False,
)

# one module per command beside the two that share their input (optimize, explain; service/cli_input.py)
app.command()(serve)  # api/serve.py
app.command()(analyze)  # service/cli_analyze.py
app.command()(savings)  # the history's totals, against rule-based pushdown first (service/cli_savings.py)


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_print_version)
    ] = False,
) -> None:
    """Cost-based filter-pushdown decisions: serve the HTTP API or optimize a request file."""


def _print_version(value: bool) -> None:
    if value:
        from service import __version__
        from service.sql.common import sqlglot_build

        # the engine and the service are pure Python (docs/decisions/0005-pure-python-only.md); sqlglot may not be
        typer.echo(f"pushdown {__version__} ({sqlglot_build()})")
        raise typer.Exit()


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
_Functions = Annotated[
    str | None,
    typer.Option(
        help='Functions the query calls, as JSON or a JSON file: {"my_udf": {"cost": 5000, "deterministic": true}}.'
    ),
]


@app.command()
def optimize(
    request_file: _Source = None,
    sql: _Sql = None,
    catalog: _Catalog = None,
    dialect: _Dialect = None,
    mode: _Mode = None,
    functions: _Functions = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw JSON response.")] = False,
) -> None:
    """Optimize one request or query and print the explain, cost tables and decision log (and the SQL to run)."""
    response = optimize_input(request_file, sql, catalog, dialect, mode, functions)
    typer.echo(dumps_at_any_depth(response, indent=2) if as_json else render(response))


@app.command()
def explain(
    request_file: _Source = None,
    sql: _Sql = None,
    catalog: _Catalog = None,
    dialect: _Dialect = None,
    mode: _Mode = None,
    functions: _Functions = None,
    matrix: Annotated[bool, typer.Option("--matrix", help="Also print every (predicate, operator) row.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="A recorded answer: print the comparison as JSON.")] = False,
) -> None:
    """Say per predicate where it ended up and what decided each step, then the plan after.

    Given the request id of a recorded answer instead of a request, show that answer's plan with, per node, estimated rows against the rows a run reported (q-error).
    """  # noqa: E501 - one line: the help renders each docstring line as a line of its own
    if request_file is not None and sql is None and is_request_id(request_file):
        _explain_recorded(request_file, as_json)
        return
    response = optimize_input(request_file, sql, catalog, dialect, mode, functions)
    parts = ["== predicates ==", predicates_text(response)]
    parts += ["== plan after ==", response.get("explain", {}).get("after", "")]
    if matrix:
        decisions = [[d.get(h) for h in DECISION_HEADERS] for d in response.get("decisions", [])]
        parts += ["== decisions ==", format_table(DECISION_HEADERS, decisions)]
    parts += statistics_lines(response)
    typer.echo("\n".join(parts))


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
        fail(f"the history store cannot be read: {type(exc).__name__}: {exc}", "$")
    if record is None:
        fail(f"no optimization {request_id!r} in the history", "$.request_id")
    if as_json:
        rows = node_rows(record["response"], feedback["nodes"]) if feedback else None
        typer.echo(dumps_at_any_depth({"request_id": request_id, "feedback": feedback and {**feedback, "nodes": rows}}))
    else:
        typer.echo(render(record, feedback))


if __name__ == "__main__":
    app()
