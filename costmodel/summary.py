"""One line per predicate: where it ended up and why, built from an answer's decision log.

The engine logs a matrix: one row per (predicate, operator) it considered. People read
per predicate, the way other engines show ``PushedFilters``: the final position, the
scans it reached, whether it was inferred, the one reason it stopped, and every
comparison that decided a step, with its labelled terms. This module builds that view
from the answer alone (``decisions`` and ``explain.before``), so the HTTP answer and
``pushdown explain`` say the same.

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

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

#: Relative slack of the engine's cost comparisons (costmodel.placement._EPS).
COST_EPS = 1e-9
#: Reasons that end a predicate's way down: it goes no lower.
TERMINAL_REASONS = frozenset({"into_scan", "into_join_condition", "index_lookup", "index_not_cheaper"})
#: Reasons of an inferred predicate's first row (the operator it was inferred at).
INFERRED_REASONS = frozenset({"derived_from_or", "inferred_from_join_keys", "derived_not_beneficial"})
#: An EXPLAIN line: indentation (depth), the operator's label, then ``  [id rows=...]``.
_EXPLAIN_LINE = re.compile(r"^(?P<indent> *)(?P<label>.*?)\s+\[(?P<id>[^\s\]]+)(?: |\])")
#: The ``[id`` part alone: a literal first character, which the regex engine finds without trying every position
#: (the whole pattern's lazy label tries each one, and a line carries its predicates' text).
_BRACKETED_ID = re.compile(r"\[([^\s\]]+)[ \]]")


def explain_line(line: str) -> tuple[int, str, str] | None:
    """``(depth, label, id)`` of an EXPLAIN line, or None: what ``_EXPLAIN_LINE`` matches, found from the first
    ``[id`` after whitespace (the regex's leftmost match); a line whose label would be empty goes to the regex.

    >>> explain_line("    Filter: a[1] > 2  [n3 rows=10 cost=5 sel=0.5 [0.1, 0.9] statistics]")
    (4, 'Filter: a[1] > 2', 'n3')
    >>> explain_line("TableScan: t") is None
    True
    """
    indent = len(line) - len(line.lstrip(" "))
    pos = indent
    while True:
        hit = _BRACKETED_ID.search(line, pos)
        if hit is None:
            return None
        start = hit.start()
        if start > 0 and line[start - 1].isspace():
            end = len(line[:start].rstrip())  # the whitespace before the bracket is not the label's
            if end <= indent:  # an empty label: the regex decides how much of the indent is indent
                return _by_regex(line)
            return indent, line[indent:end], hit.group(1)
        pos = start + 1


def _by_regex(line: str) -> tuple[int, str, str] | None:
    hit = _EXPLAIN_LINE.match(line)
    return None if hit is None else (len(hit["indent"]), hit["label"], hit["id"])


@dataclass(frozen=True, slots=True)
class Operator:
    """An operator as a person names it: its kind, a table for scans, its id, and its path from the root."""

    id: str
    kind: str
    path: str

    @property
    def name(self) -> str:
        return f"{self.kind} ({self.id})"


#: A path names at most this many operators: the first ``PATH_HEAD`` from the root, then how many were left
#: out, then the ``PATH_TAIL`` nearest the operator. Spelled out whole, paths made a deep plan's summary
#: quadratic in its depth (every operator repeating every one above it).
PATH_HEAD, PATH_TAIL = 3, 12


def path_text(head: tuple[str, ...], tail: list[str], depth: int) -> str:
    """The path of an operator ``depth`` levels deep: ``head`` (the first kinds from the root) and ``tail`` (the
    last ones, the operator's own kind last); the middle of a long path is counted, not listed.

    >>> path_text(("A", "B"), ["A", "B"], 2)
    'A > B'
    >>> path_text(("A", "B", "C"), [str(i) for i in range(8, 20)], 20)
    'A > B > C > … 5 more … > 8 > 9 > 10 > 11 > 12 > 13 > 14 > 15 > 16 > 17 > 18 > 19'
    """
    if depth <= PATH_HEAD + PATH_TAIL:
        return " > ".join((*head, *tail[len(head) - depth :]) if depth > len(head) else head[:depth])
    left_out = depth - PATH_HEAD - PATH_TAIL
    return " > ".join((*head, f"… {left_out} more …", *tail[-PATH_TAIL:]))


def operators(explain_before: str, wanted: AbstractSet[str] | None = None) -> dict[str, Operator]:
    """Operators by id, read from the explain tree (indentation is depth); only those in ``wanted`` if given
    (a path is built per operator returned, and a summary names only the operators its decisions name).

    >>> ops = operators("Projection: a  [n1 rows=1 cost=1]\\n  TableScan: t  [n2 rows=1 cost=1]")
    >>> ops["n2"].kind, ops["n2"].path
    ('TableScan t', 'Projection > TableScan t')
    """
    out: dict[str, Operator] = {}
    stack: list[tuple[int, str]] = []
    for line in explain_before.splitlines():
        parsed = explain_line(line)
        if parsed is None:
            continue
        depth, label, op_id = parsed
        kind = label.split(":", 1)[0].strip()
        if kind == "TableScan":
            table = label.split(":", 1)[1].strip().split(" ", 1)[0] if ":" in label else ""
            kind = f"TableScan {table}".strip()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, kind))
        if wanted is not None and op_id not in wanted:
            continue
        head = tuple(k for _, k in stack[:PATH_HEAD])
        tail = [k for _, k in stack[-PATH_TAIL:]]
        out[op_id] = Operator(op_id, kind, path_text(head, tail, len(stack)))
    return out


#: Wire op names as the explain tree spells the operator kinds.
_KINDS = {"scan": "TableScan", "project": "Projection", "union": "Union", "intersect": "Intersect", "except": "Except"}


@dataclass(frozen=True, slots=True)
class _Above:
    """The operators above a node, shared by everything below it: its kind, what is above that, the depth,
    and the first kinds from the root (a tuple of each level's kinds would make a deep plan quadratic)."""

    kind: str
    parent: _Above | None
    depth: int
    head: tuple[str, ...]

    def below(self, kind: str) -> _Above:
        head = self.head + (kind,) if len(self.head) < PATH_HEAD else self.head
        return _Above(kind, self, self.depth + 1, head)

    def path(self) -> str:
        tail: list[str] = []
        link: _Above | None = self
        while link is not None and link.depth > 0 and len(tail) < PATH_TAIL:
            tail.append(link.kind)
            link = link.parent
        return path_text(self.head, tail[::-1], self.depth)


_ROOT = _Above("", None, 0, ())


def plan_operators(plan: Any, wanted: AbstractSet[str] | None = None) -> dict[str, Operator]:
    """Operators by id from a wire plan, subqueries included (the explain tree shows a subquery as ``#id``); only
    those in ``wanted`` if given, and the walk stops once it has them all.

    >>> ops = plan_operators({"op": "filter", "id": "n1", "input": {"op": "scan", "id": "n2", "table": "t"}})
    >>> ops["n2"].kind, ops["n2"].path
    ('TableScan t', 'Filter > TableScan t')
    """
    out: dict[str, Operator] = {}
    stack: list[tuple[Any, _Above]] = [(plan, _ROOT)] if type(plan) is dict or type(plan) is list else []
    while stack:  # iterative: plans may be thousands of levels deep
        node, above = stack.pop()
        if type(node) is list:
            for item in node:
                if type(item) is dict or type(item) is list:  # only containers hold operators
                    stack.append((item, above))
            continue
        here = above
        if isinstance(node.get("op"), str) and isinstance(node.get("id"), str):
            op = node["op"]
            kind = _KINDS.get(op, op.replace("_", " ").title())
            if op == "scan":
                kind = f"TableScan {node.get('table', '')}".strip()
            elif op == "join":
                kind = f"{str(node.get('type', 'inner')).title()} Join"
            here = above.below(kind)
            if node["id"] not in out and (wanted is None or node["id"] in wanted):
                out[node["id"]] = Operator(node["id"], kind, here.path())
                if wanted is not None and len(out) == len(wanted):
                    break
        for value in node.values():
            if type(value) is dict or type(value) is list:
                stack.append((value, here))
    return out


def _num(value: Any) -> str:
    """Numbers as the summary prints them: up to 6 significant digits, no exponent for everyday sizes.

    >>> _num(0.513929), _num(40331008.695), _num(4.0)
    ('0.513929', '40331008.7', '4')
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool):  # a tuple: ``int | float`` is built per call
        return str(value)
    size = abs(value)
    if size < 1e15 and float(value).is_integer():
        return str(int(value))
    if 1e6 <= size < 1e15:
        return f"{value:.1f}"
    return f"{value:.6g}"


def _cost_holds(pushed: float, kept: float) -> bool:
    return pushed <= kept + COST_EPS * max(1.0, abs(kept))


def comparisons(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparisons a row logs, the deciding one first, each with its labelled terms and whether it held."""
    return [c for c in (_cost_comparison(row), _benefit_comparison(row)) if c is not None]


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
        starts = not groups or _terminal(groups[-1][-1]) or row.get("reason") in INFERRED_REASONS
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
    if last.get("action") in ("kept", "blocked") or reason == "derived_not_beneficial":
        return f"above {name}" if reason != "derived_not_beneficial" else "not added"
    return f"below {name}"


def _stopped(last: dict[str, Any], decided: dict[str, Any] | None) -> str:
    reason = str(last.get("reason"))
    if last.get("action") == "blocked":
        return f"blocked: {reason}" + (f" ({last['detail']})" if last.get("detail") else "")
    if decided is not None:
        # the comparisons of ``comparisons(last)`` but the deciding one, which is already written
        kind = decided["kind"]
        rest = (
            _cost_comparison(last) if kind != "cost" else None,
            _benefit_comparison(last) if kind != "benefit" else None,
        )
        others = [c["text"] for c in rest if c is not None]
        aside = f" (not deciding: {'; '.join(others)})" if others else ""
        return f"{reason}: {decided['text']}{aside}"
    return {"into_scan": "reached the scan", "into_join_condition": "became part of the join condition"}.get(
        reason, reason
    )


def summarize(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """Per predicate: final position, scans reached, inference, the stop reason and each deciding comparison."""
    decisions = list(answer.get("decisions") or [])
    wanted = {str(row.get("operator")) for row in decisions}
    # the tree before names every operator of the query; operators only inside subqueries come from the plan
    ops = operators((answer.get("explain") or {}).get("before", ""), wanted)
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
                    "reason": row.get("reason"),
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
                "inferred": first.get("reason") if first.get("reason") in INFERRED_REASONS else None,
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
