"""Print the per-query decision table in docs/tpch.md (Markdown), from the service's answers.

Run from the repository root: ``python -m tests.tpch.decision_table [--mode cost]``, and
paste the output over the table in docs/tpch.md. Not a test: the numbers are facts about
the engine and the SF1 catalog at the time of writing, and the tests already prove the
rewrites correct; this only summarises them for people.
"""

from __future__ import annotations

import argparse
from typing import Any

from tests.tpch.common import NAMES, optimized, predicate_summary

_MAX_PREDICATE = 48


def _short(text: str) -> str:
    text = text.replace("|", "\\|")
    return text if len(text) <= _MAX_PREDICATE else text[: _MAX_PREDICATE - 1] + "…"


def _stopped(answer: dict[str, Any]) -> str:
    """Each predicate a rule or the cost model stopped, with why and at which operator kind."""
    kinds = {n["id"]: n["operator"] for n in answer["cost"]["before"]["nodes"]}
    seen: list[str] = []
    for d in answer["decisions"]:
        if d["action"] == "pushed":
            continue
        item = f"`{_short(d['predicate'])}` {d['action']} at {kinds.get(d['operator'], '?')} ({d['reason']})"
        if item not in seen:
            seen.append(item)
    return "<br>".join(seen) or "–"


def _total(value: float) -> str:
    return f"{value:.3g}" if value >= 1e6 else f"{value:,.0f}"


def table(mode: str) -> str:
    """One Markdown row per query: distinct predicates by outcome, cost totals and savings."""
    rows = [
        "| query | predicates | pushed | kept | blocked | cost before | cost after | savings | stopped, and why |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name in NAMES:
        answer = optimized(name, mode)
        summary = predicate_summary(answer)
        predicates = {d["predicate"] for d in answer["decisions"]}
        cost = answer["cost"]
        rows.append(
            f"| {name.upper()} | {len(predicates)} | {len(summary['pushed'])} | {len(summary['kept'])} | "
            f"{len(summary['blocked'])} | {_total(cost['before']['total'])} | {_total(cost['after']['total'])} | "
            f"{cost['savings'] * 100:.1f}% | {_stopped(answer)} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="cost", choices=("cost", "always", "never"))
    print(table(parser.parse_args().mode))


if __name__ == "__main__":
    main()
