"""What the passes share: the query, the skeleton they rewrite, the predicates they place, what they decided."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from costmodel.catalog import Catalog
from costmodel.cost import CostModel
from costmodel.materialize import Materializer
from costmodel.options import Options
from costmodel.plan import Node
from costmodel.positions import Pred
from costmodel.scan_access import ScanAccess


@dataclass
class Work:
    """One optimization's state, handed from pass to pass (``costmodel.passes.PIPELINE``)."""

    plan: Node
    catalog: Catalog
    options: Options
    model: CostModel
    #: the plan with every movable predicate taken out (normalize), then outer joins simplified
    skeleton: Node | None = None
    #: the predicates to place: WHERE conjuncts, join-condition conjuncts, derived ones
    preds: list[Pred] = field(default_factory=list)
    #: decisions for conjuncts that stay where the query put them
    fixed: list[dict[str, Any]] = field(default_factory=list)
    rewrites: list[dict[str, Any]] = field(default_factory=list)
    #: placement: the plan cost without each derived predicate, and the first predicate placed by rule
    absent: dict[int, float] = field(default_factory=dict)
    fallback_from: int | None = None
    #: the rewritten plan (rewrite)
    final: Node | None = None
    scan_access: ScanAccess | None = None
    #: the plans placement built and costed, kept for the rewrite (``materializer``)
    built: Materializer | None = None

    def require_skeleton(self) -> Node:
        assert self.skeleton is not None, "normalize runs first"
        return self.skeleton

    def materializer(self) -> Materializer:
        """The materializer over the skeleton, placement's own when it ran: the rewrite's plan is then made of the
        nodes placement built and the cost model estimated (the same key, the same object), so the cost table
        after re-estimates only the nodes that differ (a filter's own id, scan access)."""
        skeleton = self.require_skeleton()
        if self.built is None or self.built.skeleton is not skeleton:
            self.built = Materializer(skeleton)
        return self.built
