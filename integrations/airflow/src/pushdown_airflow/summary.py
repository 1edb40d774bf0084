"""The few numbers of an ``/optimize`` answer worth keeping in XCom."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any


def summarize(answer: Mapping[str, Any]) -> dict[str, Any]:
    """What goes to XCom: ids, cost before and after, savings, the rewritten SQL and a count of decisions.

    >>> s = summarize({"request_id": "r1", "cost": {"before": {"total": 10.0}, "after": {"total": 4.0},
    ...                "savings": 0.6}, "decisions": [{"action": "pushed"}, {"action": "kept"}], "sql": "SELECT 1"})
    >>> s["cost_before"], s["cost_after"], s["savings"], s["decisions"]
    (10.0, 4.0, 0.6, {'pushed': 1, 'kept': 1})
    """
    cost = answer.get("cost", {})
    return {
        "request_id": answer.get("request_id"),
        "cost_before": cost.get("before", {}).get("total"),
        "cost_after": cost.get("after", {}).get("total"),
        "savings": cost.get("savings"),
        "sql": answer.get("sql"),
        "decisions": dict(Counter(str(d.get("action")) for d in _decision_rows(answer))),
        "warnings": len(answer.get("warnings", [])),
        "model_version": answer.get("model_version"),
        # executor seconds saved against rule-based pushdown, {"estimate", "interval", ...} (docs/cost-model.md)
        "time_saved_vs_baseline_s": cost.get("time_saved_vs_baseline_s"),
        "function_costs": answer.get("function_costs"),
    }


def _decision_rows(answer: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The decision matrix's rows: ``decisions`` in a full answer, else the per-predicate summary's steps (one per
    row; the service's default answer sends the summary only).

    >>> _decision_rows({"summary": [{"steps": [{"action": "pushed"}, {"action": "kept"}]}]})
    [{'action': 'pushed'}, {'action': 'kept'}]
    """
    if "decisions" in answer:
        return list(answer.get("decisions") or [])
    return [step for item in answer.get("summary") or [] for step in item.get("steps") or []]
