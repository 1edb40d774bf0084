"""Estimated against actual rows, for people: per node of a recorded answer, and per run of a pipeline task.

``node_rows`` lists every node of the rewritten plan's cost table with its estimate and, where a runner reported
it, the actual rows and the q-error; ``task_series`` sums a pipeline task's runs up (worst and median q-error per
run) for the dashboard's chart; ``render`` is what ``pushdown explain <request id>`` prints.

Example::

    >>> response = {"cost": {"after": {"nodes": [{"id": "n2", "operator": "scan", "rows_out": 50.0}]}}}
    >>> node_rows(response, [{"id": "n2", "rows_out": 200}])[0]["q_error"]
    4.0
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from service.feedback.use_case import q_error


def node_rows(response: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every node of the answer's cost table (after), with actual rows and q-error where reported."""
    actual = {str(n["id"]): n for n in nodes}
    rows = []
    for est in ((response.get("cost") or {}).get("after") or {}).get("nodes") or []:
        node_id = str(est.get("id"))
        seen = actual.get(node_id)
        rows.append(
            {
                "id": node_id,
                "operator": est.get("operator"),
                "estimated_rows": est.get("rows_out"),
                "actual_rows": seen["rows_out"] if seen else None,
                "q_error": q_error(est.get("rows_out"), seen["rows_out"]) if seen else None,
                "estimated_rows_in": est.get("rows_in"),
                "actual_rows_in": seen.get("rows_in") if seen else None,
            }
        )
    return rows


def annotate_tree(tree: list[dict[str, Any]], rows: Sequence[Mapping[str, Any]]) -> None:
    """Add ``actual_rows`` and ``q_error`` to the drill-down tree's nodes (in place)."""
    by_id = {row["id"]: row for row in rows}
    stack = list(tree)
    while stack:
        node = stack.pop()
        row = by_id.get(str(node.get("id")))
        node["actual_rows"] = row["actual_rows"] if row else None
        node["q_error"] = row["q_error"] if row else None
        stack.extend(node.get("children") or [])


def task_series(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per run (oldest first): the worst and the median q-error over its reported nodes.

    >>> runs = [{"id": "a", "run": "d1", "created_at": "t1", "nodes": [{"id": "n2", "rows_out": 10}],
    ...          "response": {"cost": {"after": {"nodes": [{"id": "n2", "rows_out": 40.0}]}}}}]
    >>> task_series(runs)[0]["max_q_error"]
    4.0
    """
    series = []
    for run in runs:
        errors = [r["q_error"] for r in node_rows(run["response"], run["nodes"]) if r["q_error"] is not None]
        series.append(
            {
                "id": run["id"],
                "run": run.get("run"),
                "created_at": run.get("created_at"),
                "nodes": len(errors),
                "max_q_error": max(errors) if errors else None,
                "median_q_error": statistics.median(errors) if errors else None,
            }
        )
    return series


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:.3e}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def render(record: Mapping[str, Any], feedback: Mapping[str, Any] | None) -> str:
    """The recorded answer's plan after, then estimated against actual rows per node."""
    response = record["response"]
    context = " / ".join(str(record[k]) for k in ("pipeline", "task", "run") if record.get(k)) or "no context"
    parts = [
        f"request {record.get('id')}  ({context})",
        "== explain after ==",
        str((response.get("explain") or {}).get("after") or ""),
        "== estimated vs actual rows ==",
    ]
    if feedback is None:
        parts.append("no feedback for this request (POST /feedback/<request id> after running it)")
        return "\n".join(parts)
    headers = ["operator", "id", "estimated", "actual", "q-error", "est. in", "actual in"]
    table = [
        [
            r["operator"],
            r["id"],
            r["estimated_rows"],
            r["actual_rows"],
            r["q_error"],
            r["estimated_rows_in"],
            r["actual_rows_in"],
        ]
        for r in node_rows(response, feedback["nodes"])
    ]
    cells = [headers, *[[_fmt(v) for v in row] for row in table]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        parts.append(
            "  ".join(
                cell.ljust(width) if i < 2 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(row, widths, strict=True))
            )
        )
    parts.append(f"feedback received {feedback.get('received_at')}")
    return "\n".join(parts)
