"""What decided each placement, said so, with both tests beside it: the presentation of a decision.

A decision row may log two tests: the seed's local inequality at the operator (``1 - r <= p·r1``, ``lhs`` and
``rhs``) and the whole plan's cost with the predicate pushed against kept (``cost_if_pushed``, ``cost_if_kept``).
When both are logged the total cost decides; the two can disagree (the local rule would push, the totals keep),
and then a reader must not see the rule "hold" beside a "kept" without being told it was overruled. A cheap
predicate (``cheap_predicate``) is pushed by rule, as Catalyst pushes it, although the totals alone would keep
it. The engine's summary (``costmodel.summary``) is left as it is; the service adds ``verdict`` to each of its
steps, the command line prints it (``render_predicates``) and so does the dashboard (``app.js``, ``verdict``).

    >>> row = {"action": "kept", "reason": "not_beneficial", "lhs": 0.2, "rhs": 0.5, "p": 0.5, "r1": 1.0,
    ...        "cost_if_pushed": 120.0, "cost_if_kept": 90.0}
    >>> v = verdict(row)
    >>> v["decided_by"], v["agree"]
    ('total cost', False)
    >>> v["text"][:73]
    'kept: decided by the total cost: cost if pushed = 120 > cost if kept = 90'
    >>> v["text"][73:]
    '; the local rule 1 - r <= p·r1 alone would have pushed it (1 - r = 0.2 <= p·r1 = 0.5 × 1 = 0.5), overruled'
"""

from __future__ import annotations

from typing import Any

from costmodel.summary import comparisons, group

#: reasons a placement has without a cost test: structural, the mode's, or the scan's own
_NO_TEST = frozenset({"mode_always", "mode_never", "not_costed", "into_scan"})


def verdict(row: dict[str, Any], decided: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Which test decided ``row`` (a decision), with both tests' texts and whether they agree; None when no test
    did (blocked, structural, a mode). ``decided``: the comparison the summary's step already built for ``row``
    (``costmodel.summary.deciding``), used as it is rather than written again."""
    action, reason = str(row.get("action")), str(row.get("reason"))
    if action == "blocked" or reason in _NO_TEST:
        return None
    known = decided if decided is not None and decided["kind"] in ("cost", "benefit") else None
    found = {c["kind"]: c for c in comparisons(_logged(row), leaving_out=None if known is None else known["kind"])}
    if known is not None:
        found[known["kind"]] = known
    cost, rule = found.get("cost"), found.get("benefit")
    if reason == "cheap_predicate":
        totals = f"; the totals alone would have kept it ({cost['text']})" if cost and not cost["holds"] else ""
        return {
            "decided_by": "cheap predicate rule",
            "agree": not totals,
            "text": f"{action}: decided by rule, a cheap predicate goes as deep as legal, as Spark puts it{totals}",
            "tests": [c for c in (cost, rule) if c is not None],
        }
    deciding, other, name = (cost, rule, "total cost") if cost is not None else (rule, None, "local rule")
    if deciding is None:
        return None
    agree = other is None or other["holds"] == deciding["holds"]
    text = f"{action}: decided by the {name}: {deciding['text']}"
    if other is not None:
        would = "pushed" if other["holds"] else "kept"
        text += (
            f"; the local rule 1 - r <= p·r1 agrees ({other['text']})"
            if agree
            else f"; the local rule 1 - r <= p·r1 alone would have {would} it ({other['text']}), overruled"
        )
    return {"decided_by": name, "agree": agree, "text": text, "tests": [deciding, *([other] if other else [])]}


def _logged(row: dict[str, Any]) -> dict[str, Any]:
    """The row without tests logged as null (a cost the engine did not compute)."""
    if None not in row.values():  # the engine's rows: every test it logs it computed
        return row
    return {key: value for key, value in row.items() if value is not None}


def add_verdicts(summary: list[dict[str, Any]], decisions: list[dict[str, Any]]) -> None:
    """Each summary step gains ``verdict`` (None where no test decided): the summary's entries follow the
    decisions grouped per predicate (``costmodel.summary.group``) and their steps the group's rows, one step per
    row, so the steps of all entries in turn are the decisions in order (not grouped again here)."""
    steps = (step for entry in summary for step in entry.get("steps") or [])
    for step, row in zip(steps, decisions, strict=False):
        step["verdict"] = verdict(row, step.get("decided_by"))


def render_predicates(summary: list[dict[str, Any]], decisions: list[dict[str, Any]]) -> str:
    """Per predicate: where it ends, where it stopped and what decided each costed step, both tests shown."""
    lines: list[str] = []
    for item, rows in zip(summary, group(decisions), strict=False):
        inferred = f"  (inferred: {item['inferred']})" if item.get("inferred") else ""
        lines.append(f"{item['predicate']}{inferred}")
        lines.append(f"  ends: {item['final_position']}")
        if item.get("scans_reached"):
            lines.append(f"  scans reached: {', '.join(item['scans_reached'])}")
        for step, row in zip(item["steps"], rows, strict=False):
            decided = verdict(row)
            why = f"\n      {decided['text']}" if decided else ""
            flag = "  [tests disagree]" if decided and not decided["agree"] else ""
            lines.append(f"    {step['action']} at {step['operator']} ({step['reason']}){flag}{why}")
        lines.append(f"  stopped: {item.get('stopped')}")
    return "\n".join(lines)
