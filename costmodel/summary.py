"""One line per predicate: where it ended up and why, built from an answer's decision log.

The engine logs a matrix: one row per (predicate, operator) it considered. People read
per predicate, the way other engines show ``PushedFilters``: the final position, the
scans it reached, whether it was inferred, the one reason it stopped, and every
comparison that decided a step, with its labelled terms. This module builds that view
from the answer alone (``decisions`` and ``explain.before``), so the HTTP answer and
``pushdown explain`` say the same; the service, which does not render the trees for a
summary, names the operators from the plan itself, the same names (``FullParts.operators``).

Which comparison decided a step (see costmodel/placement.py):

- ``cost``: the step was costed, both plan totals are logged: pushed when
  ``cost if pushed <= cost if kept``, kept otherwise.
- ``benefit``: not costed (a free pass: the operator does not shrink its input, so
  ``1 - r <= 0 <= p·r1``): pushed because ``1 - r <= p·r1``.
- ``derived``: an inferred predicate is added only when the plan with it costs less than
  ``cost without``.
- otherwise the step's reason is structural (legality, a scan's filters, a join condition, the mode).

Example::

    >>> row = {"predicate": "a > 1", "operator": "n2", "action": "kept", "reason": "not_beneficial",
    ...        "p": 0.5, "r": 0.1, "r1": 4.0, "lhs": 0.9, "rhs": 2.0, "cost_if_kept": 10.0, "cost_if_pushed": 12.0}
    >>> [c["text"] for c in comparisons(row)]
    ['cost if pushed = 12 > cost if kept = 10', '1 - r = 0.9 <= p·r1 = 0.5 × 4 = 2']
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Any

from costmodel.operator_paths import Operator, operators, plan_operators

#: Relative slack of the engine's cost comparisons (costmodel.placement._EPS).
COST_EPS = 1e-9
#: Reasons that end a predicate's way down: it goes no lower.
TERMINAL_REASONS = frozenset({"into_scan", "into_join_condition", "index_lookup", "index_not_cheaper"})
#: Reasons of an inferred predicate's first row (the operator it was inferred at).
INFERRED_REASONS = frozenset({"derived_from_or", "inferred_from_join_keys", "derived_not_beneficial"})


def _num(value: Any) -> str:
    """Numbers as the summary prints them: up to 6 significant digits, no exponent for everyday sizes.

    >>> _num(0.513929), _num(40331008.695), _num(4.0), _num(-0.0), _num(2.0**60), _num(float("nan")), _num(7)
    ('0.513929', '40331008.7', '4', '0', '1.15292e+18', 'nan', '7')
    """
    if type(value) is float:
        return _float_text(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool):  # a tuple: ``int | float`` is built per call
        return str(value)
    if isinstance(value, float):  # a float subclass (numpy's)
        return _float_text(float(value))
    return str(value) if abs(value) < 1e15 else f"{value:.6g}"


def _float_text(value: float) -> str:
    """``_num`` of a float: whole ones without a fraction, large ones to a tenth, the rest to 6 significant
    digits."""
    size = abs(value)
    if size < 1e15 and float(int(value)) == value:  # NaN and infinities fail the first test
        return str(int(value))
    if 1e6 <= size < 1e15:
        return f"{value:.1f}"
    return f"{value:.6g}"


def _plain(reason: Any) -> Any:
    """A reason as a plain string: the engine's are ``Reason`` members, which orjson writes by reading their
    ``value`` through Python's enum machinery, where a string is written in C.

    >>> from costmodel.reasons import Reason
    >>> type(_plain(Reason.INTO_SCAN)), _plain(None)
    (<class 'str'>, None)
    """
    return str(reason) if isinstance(reason, str) else reason


def _cost_holds(pushed: float, kept: float) -> bool:
    return pushed <= kept + COST_EPS * max(1.0, abs(kept))


def comparisons(row: dict[str, Any], leaving_out: str | None = None) -> list[dict[str, Any]]:
    """The comparisons a row logs, the deciding one first, each with its labelled terms and whether it held;
    ``leaving_out``: a kind not to build (one already written)."""
    found = (
        _cost_comparison(row) if leaving_out != "cost" else None,
        _benefit_comparison(row) if leaving_out != "benefit" else None,
    )
    return [c for c in found if c is not None]


def _cost_comparison(row: dict[str, Any]) -> dict[str, Any] | None:
    """The whole plan's cost with the predicate pushed against kept, when the row logs both."""
    if "cost_if_kept" not in row or "cost_if_pushed" not in row:
        return None
    pushed, kept = row["cost_if_pushed"], row["cost_if_kept"]
    holds = _cost_holds(pushed, kept)
    return {
        "kind": "cost",
        "holds": holds,
        "terms": {"cost if pushed": pushed, "cost if kept": kept},
        "text": f"cost if pushed = {_num(pushed)} {'<=' if holds else '>'} cost if kept = {_num(kept)}",
    }


def _benefit_comparison(row: dict[str, Any]) -> dict[str, Any] | None:
    """The benefit model's ``1 - r <= p * r1`` at this operator, when the row logs it."""
    if "lhs" not in row or "rhs" not in row:
        return None
    holds = row["lhs"] <= row["rhs"] + 1e-12
    return {
        "kind": "benefit",
        "holds": holds,
        "terms": {"1 - r": row["lhs"], "p·r1": row["rhs"], "p": row.get("p"), "r": row.get("r"), "r1": row.get("r1")},
        "text": f"1 - r = {_num(row['lhs'])} {'<=' if holds else '>'} p·r1 = "
        f"{_num(row.get('p'))} × {_num(row.get('r1'))} = {_num(row['rhs'])}",
    }


def deciding(row: dict[str, Any], next_row: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The comparison that made this row's decision, or None when its reason is structural.

    ``next_row``: the row after an inferred predicate's first row, where the cost with it placed is logged by an
    engine that does not log ``cost_with`` on the row itself (older answers in the history).
    """
    reason = row.get("reason")
    if reason in INFERRED_REASONS and "cost_without" in row:
        without = row["cost_without"]
        with_it = row["cost_with"] if "cost_with" in row else _best_cost(next_row) if next_row is not None else None
        if with_it is None:
            return None
        holds = with_it < without - COST_EPS * max(1.0, abs(without))
        relation = "<" if holds else ">="
        return {
            "kind": "derived",
            "holds": holds,
            "terms": {"cost with it": with_it, "cost without": without},
            "text": f"cost with it = {_num(with_it)} {relation} cost without = {_num(without)}",
        }
    if row.get("action") == "blocked" or reason in ("mode_always", "mode_never", "not_costed", "into_scan"):
        return None
    # the first of ``comparisons(row)``, built alone: the whole plan's cost decides when logged
    cost = _cost_comparison(row)
    if cost is not None:
        return cost
    return _benefit_comparison(row) if reason in ("beneficial", "not_beneficial", "lower_total_cost") else None


def _best_cost(row: dict[str, Any]) -> float | None:
    costs = [row[key] for key in ("cost_if_kept", "cost_if_pushed") if key in row]
    return min(costs) if costs else None


def _terminal(row: dict[str, Any]) -> bool:
    return row.get("action") in ("kept", "blocked") or row.get("reason") in TERMINAL_REASONS


def group(decisions: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The log's rows per predicate: each predicate's rows are consecutive and end where it stopped."""
    groups: list[list[dict[str, Any]]] = []
    for row in decisions:
        last = groups[-1][-1] if groups else None
        starts = (
            last is None
            or _terminal(last)
            or row.get("reason") in INFERRED_REASONS
            # a predicate pulled up ends above the last operator it rose past: its rows name it alike
            or (
                last.get("action") == "pulled_up"
                and (row.get("action"), row.get("predicate")) != ("pulled_up", last.get("predicate"))
            )
        )
        if starts:
            groups.append([row])
        else:
            groups[-1].append(row)
    return groups


def _position(last: dict[str, Any], ops: dict[str, Operator]) -> str:
    op = ops.get(last["operator"])
    name = op.name if op else str(last["operator"])
    reason = last.get("reason")
    if reason == "into_scan":
        return f"in the filters of {name}"
    if reason == "into_join_condition":
        return f"in the join condition of {name}"
    if reason == "index_lookup":
        return f"an index lookup on {name}"
    if last.get("action") in ("kept", "blocked", "pulled_up") or reason == "derived_not_beneficial":
        return f"above {name}" if reason != "derived_not_beneficial" else "not added"
    return f"below {name}"


def _stopped(last: dict[str, Any], decided: dict[str, Any] | None) -> str:
    reason = str(last.get("reason"))
    if last.get("action") == "blocked":
        return f"blocked: {reason}" + (f" ({last['detail']})" if last.get("detail") else "")
    if decided is not None:
        others = [c["text"] for c in comparisons(last, leaving_out=decided["kind"])]
        aside = f" (not deciding: {'; '.join(others)})" if others else ""
        return f"{reason}: {decided['text']}{aside}"
    return {"into_scan": "reached the scan", "into_join_condition": "became part of the join condition"}.get(
        reason, reason
    )


def summarize(
    answer: dict[str, Any], named: Callable[[AbstractSet[str]], dict[str, Operator]] | None = None
) -> list[dict[str, Any]]:
    """Per predicate: final position, scans reached, inference, the stop reason and each deciding comparison.

    ``named``: the operators of the plan as written, by id, for the ids asked (``FullParts.operators``, from the
    plan itself); without it they are read from the answer's EXPLAIN tree before, which names them the same."""
    decisions = list(answer.get("decisions") or [])
    wanted = {str(row.get("operator")) for row in decisions}
    # the tree before names every operator of the query; operators only inside subqueries come from the plan
    ops = named(wanted) if named is not None else operators((answer.get("explain") or {}).get("before", ""), wanted)
    if len(ops) < len(wanted):
        ops = {**plan_operators(answer.get("plan"), wanted - ops.keys()), **ops}
    out: list[dict[str, Any]] = []
    for rows in group(decisions):
        first, last = rows[0], rows[-1]
        steps: list[dict[str, Any]] = []
        for i, row in enumerate(rows):
            decided = deciding(row, rows[i + 1] if i + 1 < len(rows) else None)
            op = ops.get(str(row.get("operator")))
            steps.append(
                {
                    "operator": op.name if op else row.get("operator"),
                    "path": op.path if op else None,
                    "action": row.get("action"),
                    "reason": _plain(row.get("reason")),
                    "decided_by": decided,
                }
            )
        scans = sorted(
            {
                (ops[str(r["operator"])].name if str(r["operator"]) in ops else str(r["operator"]))
                for r in rows
                if r.get("reason") == "into_scan"
            }
        )
        out.append(
            {
                "predicate": first.get("predicate"),
                "final_position": _position(last, ops),
                "scans_reached": scans,
                "inferred": _plain(first.get("reason")) if first.get("reason") in INFERRED_REASONS else None,
                "stopped": _stopped(last, steps[-1]["decided_by"]),
                "steps": steps,
            }
        )
    return out


def render_summary(summary: list[dict[str, Any]]) -> str:
    """The summary as text: one block per predicate, the deciding comparison of each step indented below it."""
    lines: list[str] = []
    for item in summary:
        inferred = f"  (inferred: {item['inferred']})" if item["inferred"] else ""
        lines.append(f"{item['predicate']}{inferred}")
        lines.append(f"  ends: {item['final_position']}")
        if item["scans_reached"]:
            lines.append(f"  scans reached: {', '.join(item['scans_reached'])}")
        lines.append(f"  stopped: {item['stopped']}")
        for step in item["steps"][:-1]:
            decided = step["decided_by"]
            why = f": {decided['text']}" if decided else ""
            verb = "inferred at" if step["reason"] in INFERRED_REASONS else f"{step['action']} past"
            lines.append(f"    {verb} {step['operator']} ({step['reason']}){why}")
    return "\n".join(lines)
