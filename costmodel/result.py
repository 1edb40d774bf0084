"""What ``optimize`` returns, and its wire form (the body of ``POST /optimize``'s answer)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from costmodel.cost import NodeCost, savings
from costmodel.explain import explain
from costmodel.expr import Expr
from costmodel.plan import Node
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

    @property
    def total_before(self) -> float:
        return self.before[0].subtree_cost if self.before else 0.0

    @property
    def total_after(self) -> float:
        return self.after[0].subtree_cost if self.after else 0.0

    def to_wire(self) -> dict[str, Any]:
        before = {c.id: c for c in self.before}
        after = {c.id: c for c in self.after}
        return {
            "plan": plan_to_wire(self.plan),
            "decisions": self.decisions,
            "estimates": self.estimates,
            "cost": {
                "before": {"total": rounded(self.total_before, 4), "nodes": [c.to_wire() for c in self.before]},
                "after": {"total": rounded(self.total_after, 4), "nodes": [c.to_wire() for c in self.after]},
                "savings": savings(self.total_before, self.total_after),
                **self._baseline(),
            },
            "explain": {
                "before": explain(self.original, before, estimate=self.estimate),
                "after": explain(self.plan, after, estimate=self.estimate),
            },
            "rewrites": self.rewrites,
            "scans": self.scans,
            "warnings": self.warnings,
            "model_version": MODEL_VERSION,
        }

    def _baseline(self) -> dict[str, Any]:
        """``{"baseline": ...}`` when it was asked for: what rule-based pushdown's plan (mode ``always``) costs."""
        if self.baseline_total is None:
            return {}
        return {"baseline": {"total": rounded(self.baseline_total, 4), "mode": "always"}}
