"""The ``pushdown`` command: serve the API, or run the same use case on a request file.

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
) -> None:
    """Serve the HTTP API (POST /optimize, GET /healthz, /docs) with uvicorn."""
    import uvicorn

    from api.app import create_app

    settings = Settings()
    uvicorn.run(
        create_app(settings),
        host=host or settings.host,
        port=settings.port if port is None else port,
        log_level=log_level,
    )


@app.command()
def optimize(
    request_file: Annotated[str, typer.Argument(help="A POST /optimize request body as JSON, or - for stdin.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw JSON response.")] = False,
) -> None:
    """Optimize one request and print the explain, cost tables and decision log."""
    from api.models import parse_optimize_request
    from service.optimize import OptimizeService, allow_deep_plans

    settings = Settings()
    allow_deep_plans()
    try:
        raw = sys.stdin.buffer.read() if request_file == "-" else Path(request_file).read_bytes()
    except OSError as exc:
        _fail(f"cannot read {request_file}: {exc.strerror or exc}", "$")
    try:
        response = OptimizeService().optimize(parse_optimize_request(raw, settings.max_json_depth))
    except (InputError, PlanError) as exc:
        _fail(exc.message, exc.path)
    typer.echo(json.dumps(response, indent=2) if as_json else render(response))


def _fail(message: str, path: str) -> NoReturn:
    typer.echo(f"error: {message}\n  at {path}", err=True)
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
    if response.get("sql"):
        parts += ["== sql after ==", response["sql"]]
    return "\n".join(parts)


if __name__ == "__main__":
    app()
