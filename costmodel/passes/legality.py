"""Pass 2, legality verdicts: every position each predicate may legally take, and why it stops where it does.

Pure: nothing is rewritten. For each predicate a tree of positions
(``costmodel.positions.Position``) from where the query put it down through
each operator whose kind's rule lets it pass (``costmodel.legality``), forking
at set operations; where a rule refuses, the position records the ``Blocked``
verdict with its reason.
"""

from __future__ import annotations

from costmodel.passes.work import Work
from costmodel.plan import Node, walk_plan
from costmodel.positions import Position, Pred, build_region


def legality(work: Work) -> None:
    _rebind(work.preds, work.require_skeleton(), work.options.scan_pushdown)


def _rebind(preds: list[Pred], skeleton: Node, scan_pushdown: bool) -> None:
    """Point every predicate's root at the skeleton's current nodes and rebuild its region."""
    by_id = {node.id: node for node in walk_plan(skeleton)}
    for pred in preds:
        node = by_id[pred.root.node.id]
        pred.root = build_region(Position(node, pred.root.kind, pred.root.form), scan_pushdown, pred.stop_at)
