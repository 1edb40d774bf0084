"""The optimizer as a pipeline of named passes, in order; ``costmodel.optimizer.optimize`` runs them.

Each pass reads and updates one ``Work``. tests/costmodel/passes/ holds a text
fixture file per pass (plan before, state after, decisions) and their runner.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from costmodel.passes import infer, legality, normalize, outer_joins, place, rewrite
from costmodel.passes.work import Work

Pass = Callable[[Work], None]

#: The passes, in the order they run.
PIPELINE: Final[tuple[tuple[str, Pass], ...]] = (
    ("normalize", normalize.normalize),
    ("legality", legality.legality),
    ("outer_joins", outer_joins.outer_joins),
    ("infer", infer.infer),
    ("placement", place.placement),
    ("rewrite", rewrite.rewrite),
)

__all__ = ["PIPELINE", "Pass", "Work"]
