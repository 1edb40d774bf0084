"""What ``optimize`` returns, and its wire form (the body of ``POST /optimize``'s answer)."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Final

from costmodel.conjunct_texts import conjunct_texts
from costmodel.cost import NodeCost, savings
from costmodel.explain import explain
from costmodel.expr import Call, Expr, Subquery
from costmodel.operator_paths import Operator, tree_operators
from costmodel.plan import Join, Node, children, node_expressions, plan_memo
from costmodel.rounding import rounded
from costmodel.wire import plan_to_wire

MODEL_VERSION: Final = "1"


@dataclass
class OptimizeResult:
    plan: Node
    original: Node
    decisions: list[dict[str, Any]]
    estimates: list[dict[str, Any]]
    before: list[NodeCost]
    after: list[NodeCost]
    rewrites: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    estimate: Callable[[Expr], Any] | None = None
    scans: list[dict[str, Any]] = field(default_factory=list)
    #: what the plan rule-based pushdown runs (mode ``always``) costs, when asked for (``optimize``)
    baseline_total: float | None = None
    #: the savings against the baseline with every selectivity at either end of its interval (``costmodel.robust``)
    savings_interval: tuple[float, float] | None = None
    #: whether the plan held a subquery: only then may the written plan repeat a node id (``unique_node_ids``)
    subqueries: bool = False
    #: the plan as read, its subqueries as written (``original`` has them decided); None: ``original``
    written: Node | None = None

    @property
    def total_before(self) -> float:
        return self.before[0].subtree_cost if self.before else 0.0

    @property
    def total_after(self) -> float:
        return self.after[0].subtree_cost if self.after else 0.0

    def to_wire(self) -> dict[str, Any]:
        """The whole answer: ``to_wire_brief`` completed with its ``FullParts``."""
        return self.full_parts().completed(self.to_wire_brief())

    def to_wire_brief(self) -> dict[str, Any]:
        """The answer without what only a full answer carries (``FullParts``): everything a summary needs."""
        return {
            "plan": plan_to_wire(self.plan),
            "decisions": self.decisions,
            "estimates": self.estimates,
            "cost": {
                "before": {"total": rounded(self.total_before, 4)},
                "after": {"total": rounded(self.total_after, 4)},
                "savings": savings(self.total_before, self.total_after),
                **self._baseline(),
            },
            "rewrites": self.rewrites,
            "scans": self.scans,
            "warnings": self.warnings,
            "model_version": MODEL_VERSION,
        }

    def full_parts(self, memos: tuple[Any, ...] | None = None) -> FullParts:
        """What ``to_wire_brief`` leaves out, rendered when first asked for; ``memos``: the optimization's
        (``open_memos``), reused then."""
        return FullParts(self, memos)

    def _baseline(self) -> dict[str, Any]:
        """``{"baseline": ...}`` when it was asked for: what rule-based pushdown's plan (mode ``always``) costs."""
        if self.baseline_total is None:
            return {}
        out: dict[str, Any] = {"total": rounded(self.baseline_total, 4), "mode": "always"}
        interval = self.savings_interval
        if interval is None and abs(self.baseline_total - self.total_after) <= 1e-9 * max(1.0, self.baseline_total):
            interval = (0.0, 0.0)  # the plan is the baseline's: nothing to be unsure of
        if interval is not None:
            out["savings_interval"] = list(interval)
            out["on_defaults"] = any(e.get("source") == "default" for e in self.estimates)
        return {"baseline": out}


class FullParts:
    """The parts only a full answer carries, which nothing in a summary reads: the EXPLAIN trees and the per-node
    cost tables. A caller that wants no full answer never pays for them; one that does renders them once
    (``render``), with the optimization's memos, and gets the full answer from ``completed``. The summary names
    operators as the tree before would (``operators``), from the plan itself.
    """

    def __init__(self, result: OptimizeResult, memos: tuple[Any, ...] | None = None) -> None:
        self._result = result
        self._memos = memos
        self._rendered: Rendered | None = None

    def operators(self, wanted: AbstractSet[str] | None = None) -> dict[str, Operator]:
        """The operators of the plan as written by id (``costmodel.operator_paths.tree_operators``), without
        rendering its tree."""
        return tree_operators(self._result.original, wanted)

    def conjunct_texts(self) -> dict[str, list[str]] | None:
        """The rewritten plan's conjuncts by filter and join id (``costmodel.conjunct_texts``), spelled with the
        optimization's memos: the texts its decisions have already spelled are not spelled again."""
        with plan_memo(self._memos):
            return conjunct_texts(self._result.plan)

    def cross_products(self) -> list[str]:
        """The joins without a condition in the plan as written (``cross_products``)."""
        result = self._result
        return cross_products(result.written if result.written is not None else result.original)

    def render(self) -> Rendered:
        """(the EXPLAIN trees before and after, the cost tables before and after), made on the first call."""
        if self._rendered is None:
            result = self._result
            with plan_memo(self._memos):
                before = {c.id: c for c in result.before}
                after = {c.id: c for c in result.after}
                self._rendered = (
                    {
                        "before": explain(result.original, before, estimate=result.estimate),
                        "after": explain(result.plan, after, estimate=result.estimate),
                    },
                    [c.to_wire() for c in result.before],
                    [c.to_wire() for c in result.after],
                )
            self._memos = None  # what they held is in the rendering now
        return self._rendered

    def completed(self, brief: dict[str, Any]) -> dict[str, Any]:
        """``brief`` (``to_wire_brief``, with whatever its caller added) as the full answer (``with_full_parts``)."""
        return with_full_parts(brief, *self.render())


#: ``FullParts.render``: the EXPLAIN trees, the cost table before, the cost table after
Rendered = tuple[dict[str, str], list[dict[str, Any]], list[dict[str, Any]]]


def with_full_parts(
    brief: dict[str, Any], trees: dict[str, str], nodes_before: list[dict[str, Any]], nodes_after: list[dict[str, Any]]
) -> dict[str, Any]:
    """``brief`` with the full answer's parts: the per-node tables at the end of ``cost.before`` and
    ``cost.after``, ``explain`` right after ``cost`` (where the engine's full answer has it, so the keys come in
    the same order whichever way the answer was made); new objects where they go, ``brief`` itself unchanged
    (the parts' own lists are ``render``'s, shared by every answer completed with them).

    >>> brief = {"plan": {}, "cost": {"before": {"total": 2.0}, "after": {"total": 1.0}}, "warnings": []}
    >>> full = with_full_parts(brief, {"before": "P", "after": "Q"}, [{"id": "n1"}], [])
    >>> list(full), full["cost"]["before"], "nodes" in brief["cost"]["before"]
    (['plan', 'cost', 'explain', 'warnings'], {'total': 2.0, 'nodes': [{'id': 'n1'}]}, False)
    """
    out: dict[str, Any] = {}
    for key, value in brief.items():
        if key == "cost":
            value = {
                **value,
                "before": {**value["before"], "nodes": nodes_before},
                "after": {**value["after"], "nodes": nodes_after},
            }
            out[key] = value
            out["explain"] = dict(trees)
        else:
            out[key] = value
    return out


def cross_products(plan: Node) -> list[str]:
    """The ids of the inner and cross joins in ``plan`` (its subqueries included) that have no condition: each a
    cross product in the query as written, which makes savings against it meaningless (the service warns:
    ``service.answer_parts.warn_cross_products``). Top down, a node's inputs left to right before the plans of
    its subqueries.

    >>> from costmodel.plan import Field, Scan
    >>> t = Scan("n2", "t", None, (), (Field("a", "int", 1),))
    >>> cross_products(Join("n1", "cross", None, t, Join("n3", "inner", None, t, t))), cross_products(t)
    (['n1', 'n3'], [])
    >>> from costmodel.expr import Literal
    >>> on_true = Literal(True, "boolean")
    >>> cross_products(Join("n1", "left", None, t, t)), cross_products(Join("n1", "inner", on_true, t, t))
    ([], [])
    """
    found: list[str] = []
    nodes: list[Node] = [plan]
    while nodes:
        node = nodes.pop()
        if isinstance(node, Join) and node.on is None and (node.type == "inner" or node.type == "cross"):
            found.append(node.id)
        inner: list[Node] = []
        calls: list[Expr] = [e for e in node_expressions(node) if isinstance(e, (Call, Subquery))]
        while calls:  # only a subquery holds nodes
            expr = calls.pop()
            if isinstance(expr, Subquery):
                inner.append(expr.plan)
                calls.extend(expr.args)
            elif isinstance(expr, Call):
                calls.extend(a for a in expr.args if isinstance(a, (Call, Subquery)))
        nodes.extend(reversed(inner))
        nodes.extend(reversed(children(node)))
    return found
