"""The command line's text output: aligned tables, the answer as a person reads it.

Plain text rather than a terminal UI, so it stays stable when piped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_COST_HEADERS = ("operator", "id", "rows received", "rows emitted", "k", "cost")
DECISION_HEADERS = ("predicate", "operator", "action", "reason", "p", "r", "r1", "lhs", "rhs")


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
    decisions = [[d.get(h) for h in DECISION_HEADERS] for d in response.get("decisions", [])]
    parts = [
        "== predicates ==",
        predicates_text(response),
        "== explain before ==",
        explain.get("before", ""),
        "== explain after ==",
        explain.get("after", ""),
        "== cost before ==",
        _cost_table(cost.get("before", {})),
        "== cost after ==",
        _cost_table(cost.get("after", {})),
        *_savings_lines(cost),
        "== decisions ==",
        format_table(DECISION_HEADERS, decisions),
    ]
    parts += statistics_lines(response)
    if response.get("function_costs"):
        parts += ["== function costs ==", *map(_function_line, response["function_costs"])]
    if response.get("warnings"):
        parts += ["== warnings ==", *(str(w) for w in response["warnings"])]
    if response.get("sql"):  # the one to run; the engine-neutral rewrite only when it differs
        parts += ["== sql to run ==", response["sql"]]
        portable = response.get("sql_portable")
        if portable and portable != response["sql"]:
            parts += ["== sql portable (no barriers; Spark may move kept predicates) ==", portable]
    spark = response.get("spark")
    if spark:
        barriers = ", ".join(spark.get("barriers") or []) or "none"
        parts += ["== spark ==", f"conf: {spark.get('conf') or '{}'}", f"barriers: {barriers}", spark.get("sql", "")]
    return "\n".join(parts)


def predicates_text(response: dict[str, Any]) -> str:
    """Per predicate where it ended and what decided each step, both tests shown (``service.verdicts``); the
    engine's own rendering when the answer has no decision log."""
    summary, decisions = response.get("summary") or [], response.get("decisions")
    if decisions is None:
        from costmodel.summary import render_summary

        return render_summary(summary) or "(no predicates)"
    from service.verdicts import render_predicates

    return render_predicates(summary, decisions) or "(no predicates)"


def _percent(value: Any) -> str:
    return f"{value * 100:.1f}%" if isinstance(value, int | float) else "-"


def _function_line(row: dict[str, Any]) -> str:
    """``score: 35,800 (12,500-41,100), measured: ...``"""
    interval = row.get("interval")
    spread = f" ({interval[0]:,.4g}-{interval[1]:,.4g})" if interval else ""
    return f"{row['name']}: {row['cost']:,.4g}{spread}, {row['source']}"


def _savings_lines(cost: dict[str, Any]) -> list[str]:
    """The headline is the gain over rule-based pushdown (what Spark would run without us); the gain over the
    query as written follows, labelled (a cross product as written inflates it)."""
    written = cost.get("savings_vs_written", cost.get("savings"))
    if "savings_vs_baseline" not in cost:
        return [f"savings against the query as written: {_percent(written)}"]
    baseline, after = cost.get("baseline", {}).get("total"), cost.get("after", {}).get("total")
    interval = cost.get("savings_vs_baseline_interval")
    unsure = ""
    if isinstance(interval, list) and len(interval) == 2 and interval[0] != interval[1]:
        unsure = f", {_percent(interval[0])} to {_percent(interval[1])} over the estimates' intervals"
    if cost.get("savings_rest_on_defaults") and interval != [0.0, 0.0]:
        unsure += "; rests on default estimates: analyze the tables or run once with feedback to firm it up"
    lines = [
        f"savings: {_percent(cost['savings_vs_baseline'])} against rule-based pushdown (cost {baseline:,.0f} -> "
        f"{after:,.0f}{unsure})",
        f"savings against the query as written: {_percent(written)}",
    ]
    saved = cost.get("time_saved_vs_baseline_s")
    if isinstance(saved, dict):
        low, high = saved["interval"]
        lines.append(
            f"executor time saved against rule-based pushdown: ~{saved['estimate']:.3g} s ({low:.3g}-{high:.3g} s;"
            f" {saved['unit_s']:.3g} s a unit, {saved['unit_source']})"
        )
    return lines


def statistics_lines(response: dict[str, Any]) -> list[str]:
    """The analyzed tables the answer used, one line each."""
    used = response.get("statistics") or []
    if not used:
        return []
    lines = ["== statistics used =="]
    for u in used:
        changed = {True: ", SOURCE CHANGED since", False: "", None: ""}[u.get("source_changed")]
        lines.append(
            f"{u['table']}: {u['analyzed_table']} v{u['version']} analyzed {u['analyzed_at']}, "
            f"{u.get('row_count')} rows, {u.get('sample_rows')} sampled{changed}"
        )
    return lines
