"""Plan trees for the dashboard's drill-down, derived from an answer's EXPLAIN text and cost table.

Derived when read, never stored: the answer already holds everything the tree shows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_EXPLAIN_NODE = re.compile(r"  \[(?P<id>[^\s\]]+)(?: |\])")


def explain_tree(text: str, cost_nodes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The EXPLAIN text as a tree: ``{"id", "label", "rows_in", "rows_out", "k", "cost", "children"}`` per node.

    Nesting comes from the text's two-space indentation, numbers from the cost table (joined by node id).
    """
    by_id = {str(n.get("id")): n for n in cost_nodes if isinstance(n, dict)}
    roots: list[dict[str, Any]] = []
    stack: list[tuple[int, dict[str, Any]]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        body = line.strip()
        matches = list(_EXPLAIN_NODE.finditer(body))
        node_id = matches[-1].group("id") if matches else None
        label = body[: matches[-1].start()] if matches else body
        annotation = body[matches[-1].start() + 3 : -1] if matches else ""
        costs = by_id.get(node_id or "", {})
        node: dict[str, Any] = {
            "id": node_id,
            "label": label,
            "annotation": annotation,
            "operator": costs.get("operator"),
            "rows_in": costs.get("rows_in"),
            "rows_out": costs.get("rows_out"),
            "k": costs.get("k"),
            "cost": costs.get("cost"),
            "children": [],
        }
        while stack and stack[-1][0] >= depth:
            stack.pop()
        (stack[-1][1]["children"] if stack else roots).append(node)
        stack.append((depth, node))
    return roots
