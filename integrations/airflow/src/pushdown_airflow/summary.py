"""The few numbers of an ``/optimize`` answer worth keeping in XCom."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any


def summarize(answer: Mapping[str, Any]) -> dict[str, Any]:
    """What goes to XCom: ids, cost before and after, savings, the rewritten SQL and a count of decisions.

    ``savings`` is the headline everywhere: against rule-based pushdown (what Spark runs without us) when the
    answer has it, with the range its estimates allow and whether it rests on default estimates; the figure
    against the query as written is ``savings_vs_written``.

    >>> s = summarize({"request_id": "r1", "cost": {"before": {"total": 10.0}, "after": {"total": 4.0},
    ...                "savings": 0.6, "savings_vs_baseline": 0.2, "savings_vs_baseline_interval": [0.1, 0.3],
    ...                "savings_rest_on_defaults": True},
    ...                "decisions": [{"action": "pushed"}, {"action": "kept"}], "sql": "SELECT 1"})
    >>> s["savings"], s["savings_interval"], s["savings_rest_on_defaults"], s["savings_vs_written"], s["decisions"]
    (0.2, [0.1, 0.3], True, 0.6, {'pushed': 1, 'kept': 1})
    """
    cost = answer.get("cost", {})
    written = cost.get("savings_vs_written", cost.get("savings"))
    return {
        "request_id": answer.get("request_id"),
        "cost_before": cost.get("before", {}).get("total"),
        "cost_after": cost.get("after", {}).get("total"),
        "savings": cost.get("savings_vs_baseline", written),
        "savings_interval": cost.get("savings_vs_baseline_interval"),
        "savings_rest_on_defaults": cost.get("savings_rest_on_defaults"),
        "savings_vs_written": written,
        "sql": sql_to_run(answer),
        "decisions": dict(Counter(str(d.get("action")) for d in _decision_rows(answer))),
        "warnings": len(answer.get("warnings", [])),
        "model_version": answer.get("model_version"),
        # executor seconds saved against rule-based pushdown, {"estimate", "interval", ...} (docs/cost-model.md)
        "time_saved_vs_baseline_s": cost.get("time_saved_vs_baseline_s"),
        "function_costs": answer.get("function_costs"),
    }


def sql_to_run(answer: Mapping[str, Any]) -> str | None:
    """The one query to run: the answer's ``sql``; from a service that predates ``sql_portable`` (whose ``sql`` was
    the engine-neutral text), the ``spark`` object's, which keeps every decision on Spark.

    >>> sql_to_run({"sql": "SELECT a", "sql_portable": "SELECT b", "spark": {"sql": "SELECT a"}})
    'SELECT a'
    >>> sql_to_run({"sql": "SELECT b", "spark": {"sql": "SELECT a"}})
    'SELECT a'
    """
    spark = answer.get("spark")
    if "sql_portable" not in answer and isinstance(spark, Mapping) and spark.get("sql"):
        return str(spark["sql"])
    sql = answer.get("sql")
    return None if sql is None else str(sql)


def _decision_rows(answer: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The decision matrix's rows: ``decisions`` in a full answer, else the per-predicate summary's steps (one per
    row; the service's default answer sends the summary only).

    >>> _decision_rows({"summary": [{"steps": [{"action": "pushed"}, {"action": "kept"}]}]})
    [{'action': 'pushed'}, {'action': 'kept'}]
    """
    if "decisions" in answer:
        return list(answer.get("decisions") or [])
    return [step for item in answer.get("summary") or [] for step in item.get("steps") or []]
