"""What the overview totals per group of records: savings against rule-based pushdown (the headline) and
against the query as written.

Rule-based pushdown (the plan ``always`` mode gives: Catalyst's and every peer's) is what a user would run
without the service, so it is the baseline that says what the service gained. The query as written can be a
cross product (comma joins), against which anything saves ~100 %: that figure stays, labelled as such. Records
from before baselines were stored (``cost_baseline`` NULL) count in the written totals and in ``requests``
only; ``with_baseline`` says how many the baseline figures cover.

Example::

    >>> group((2, 300.0, 100.0, 3, 1, 0, 1, 150.0, 60.0))["savings_vs_baseline"]
    0.6
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: The aggregate columns ``group`` reads, in its order.
AGGREGATE = (
    "COUNT(*), COALESCE(SUM(cost_before), 0), COALESCE(SUM(cost_after), 0), "
    "COALESCE(SUM(pushed), 0), COALESCE(SUM(kept), 0), COALESCE(SUM(blocked), 0), "
    "COUNT(cost_baseline), COALESCE(SUM(cost_baseline), 0), "
    "COALESCE(SUM(CASE WHEN cost_baseline IS NOT NULL THEN cost_after END), 0)"
)
#: Groups (pipelines, tasks) in the order of what they saved against the baseline, then against the query.
ORDER = "COALESCE(SUM(cost_baseline - cost_after), 0) DESC, SUM(cost_before) - SUM(cost_after) DESC"


def ratio(before: float, after: float) -> float:
    """The share of ``before`` saved (0 when there is nothing to save from)."""
    return round(1 - after / before, 6) if before > 0 else 0.0


def group(row: Sequence[Any]) -> dict[str, Any]:
    """One group's totals from the ``AGGREGATE`` columns; the baseline figures are None when no record has one."""
    requests, before, after, pushed, kept, blocked, with_baseline, baseline, after_with_baseline = row
    before, after, baseline, after_with_baseline = (
        float(before),
        float(after),
        float(baseline),
        float(after_with_baseline),
    )
    known = int(with_baseline) > 0
    return {
        "requests": int(requests),
        "with_baseline": int(with_baseline),
        "cost_baseline": round(baseline, 4) if known else None,
        "saved_vs_baseline": round(baseline - after_with_baseline, 4) if known else None,
        "savings_vs_baseline": ratio(baseline, after_with_baseline) if known else None,
        "cost_before": round(before, 4),
        "cost_after": round(after, 4),
        "saved": round(before - after, 4),
        "savings": ratio(before, after),
        "savings_vs_written": ratio(before, after),
        "pushed": int(pushed),
        "kept": int(kept),
        "blocked": int(blocked),
    }


def record_savings(summary: dict[str, Any]) -> dict[str, Any]:
    """A listed record with its savings against the baseline (None: recorded before baselines).

    >>> record_savings({"cost_baseline": 200.0, "cost_after": 50.0, "savings": 0.9})["savings_vs_baseline"]
    0.75
    """
    baseline = summary.get("cost_baseline")
    after = float(summary.get("cost_after") or 0.0)
    summary["savings_vs_baseline"] = None if baseline is None else ratio(float(baseline), after)
    summary["savings_vs_written"] = summary.get("savings")
    return summary
