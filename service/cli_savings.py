"""``pushdown savings``: the history's totals as the dashboard's overview shows them, on the command line.

The headline is the savings against rule-based pushdown (the plan Spark would run with its own pushdown); the
savings against the query as written follow, labelled, since a query written with comma joins (a cross product)
makes any plan look ~100 % cheaper. Records from before baselines were stored count in the written figures only,
and the output says how many there are.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

import typer

from service.cli_render import format_table
from service.deep_json import dumps_at_any_depth


def human(value: float | None) -> str:
    """Cost units for people: grouped below ten thousand, then three significant digits with k, M, G, T.

    >>> human(4.56e6), human(1.29e25), human(512.4), human(None)
    ('4.56M', '1.29e+25', '512', '-')
    """
    if value is None:
        return "-"
    size = abs(value)
    if size < 1e4:
        return f"{value:,.0f}"
    if size >= 1e15:
        return f"{value:.2e}"
    for scale, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if size >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:,.0f}"  # pragma: no cover - every size >= 1e4 has a unit above


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def render_totals(savings: dict[str, Any]) -> str:
    """The totals' lines, then a table per pipeline, as ``pushdown savings`` prints them."""
    totals = savings["totals"]
    missing = totals["requests"] - totals["with_baseline"]
    lines = [
        f"requests: {totals['requests']:,}"
        + (f" ({missing:,} recorded without a rule-based baseline: written figures only)" if missing else ""),
    ]
    if totals["with_baseline"]:
        lines.append(
            f"savings: {_percent(totals['savings_vs_baseline'])} against rule-based pushdown "
            f"(cost {human(totals['cost_baseline'])} -> {human(totals['cost_baseline'] - totals['saved_vs_baseline'])}"
            f", {human(totals['saved_vs_baseline'])} saved)"
        )
    else:
        lines.append("savings against rule-based pushdown: no baseline recorded")
    lines.append(
        f"savings against the query as written: {_percent(totals['savings'])} "
        f"(cost {human(totals['cost_before'])} -> {human(totals['cost_after'])})"
    )
    lines.append(f"decisions: {totals['pushed']:,} pushed, {totals['kept']:,} kept, {totals['blocked']:,} blocked")
    rows = [
        [
            p["pipeline"] or "(no pipeline)",
            p["requests"],
            _percent(p["savings_vs_baseline"]),
            human(p["saved_vs_baseline"]),
            _percent(p["savings"]),
        ]
        for p in savings["by_pipeline"]
    ]
    if rows:
        headers = ["pipeline", "requests", "vs rule-based", "saved vs rule-based", "vs as written"]
        lines += ["", format_table(headers, rows)]
    return "\n".join(lines)


def savings(
    pipeline: Annotated[str | None, typer.Option("--pipeline", help="Only this pipeline.")] = None,
    task: Annotated[str | None, typer.Option("--task", help="Only this task.")] = None,
    since: Annotated[str | None, typer.Option("--from", help="From this UTC day (YYYY-MM-DD), inclusive.")] = None,
    until: Annotated[str | None, typer.Option("--to", help="Up to this UTC day (YYYY-MM-DD), inclusive.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print /api/savings' JSON instead.")] = False,
) -> None:
    """What the recorded optimizations saved: against rule-based pushdown first, against the query as written after."""
    from service.history import Filters, HistoryStore
    from service.settings import Settings

    try:
        filters = Filters(pipeline, task, _day(since, "--from"), _day(until, "--to"))
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        result = HistoryStore.from_settings(Settings()).savings(filters)
    except Exception as exc:  # noqa: BLE001 - a database the command cannot reach: say which, no trace
        typer.echo(f"error: the history store cannot be read: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(dumps_at_any_depth(result, indent=2) if as_json else render_totals(result))


def _day(text: str | None, option: str) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{option} {text!r} is not a day (YYYY-MM-DD)") from None
