"""What feedback changed in an answer: estimates that came from it, and decisions it turned.

``annotate`` adds to each estimate answered by feedback its observation count, age and whether it was blended,
lists the conjunctions feedback answered as a whole (a scan's predicates observed together), and marks each
decision whose action differs from the answer the engine gives without feedback (``changed_by_feedback: true``
with ``without_feedback``: the action it would have had).

Example::

    >>> answer = {"estimates": [{"predicate": "t.b > 5", "source": "feedback"}],
    ...           "decisions": [{"predicate": "t.b > 5", "operator": "n4", "action": "kept"}]}
    >>> plain = {"decisions": [{"predicate": "t.b > 5", "operator": "n4", "action": "pushed"}]}
    >>> annotate(answer, plain, {"t.b > 5": {"observations": 1, "age_s": 3.0}})["feedback"]
    {'enabled': True, 'estimates': 1, 'decisions_changed': 1}
    >>> answer["decisions"][0]["without_feedback"]
    'pushed'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.errors import InputError


def feedback_option(options: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    """The engine's options without ``feedback`` (a service option), and whether feedback is on (default on)."""
    if not options or "feedback" not in options:
        return (dict(options) if options is not None else None), True
    enabled = options["feedback"]
    if not isinstance(enabled, bool):
        raise InputError("invalid_options", "feedback must be true or false", "$.options.feedback")
    return {k: v for k, v in options.items() if k != "feedback"}, enabled


def annotate(
    answer: dict[str, Any], without: Mapping[str, Any] | None, details: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """Mark in ``answer`` (in place, and returned) what feedback did; ``without``: the answer without feedback."""
    used = 0
    listed = set()
    for estimate in answer.get("estimates") or []:
        listed.add(str(estimate.get("predicate")))
        if estimate.get("source") == "feedback":
            used += 1
            estimate.update(details.get(str(estimate.get("predicate")), {}))
    # a scan's predicates observed together answer their conjunction as a whole (correlated columns)
    together = [{"predicate": text, **info} for text, info in details.items() if text not in listed]
    plain = {(d.get("predicate"), d.get("operator")): d.get("action") for d in (without or {}).get("decisions") or []}
    changed = 0
    if without is not None:
        for decision in answer.get("decisions") or []:
            before = plain.get((decision.get("predicate"), decision.get("operator")))
            if before != decision.get("action"):
                decision["changed_by_feedback"] = True
                decision["without_feedback"] = before
                changed += 1
    answer["feedback"] = {"enabled": True, "estimates": used, "decisions_changed": changed}
    if together:
        answer["feedback"]["conjunctions"] = together
    return answer
