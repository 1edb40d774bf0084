"""Legality rules, one per module; ``costmodel.legality`` dispatches to them.

Each ``push_through_<operator>`` is a pure function: given a predicate that
sits on an operator's output, it answers where the predicate may go instead
(``Crossing``: which child, and the predicate rewritten for that child) or
why it may not (``Blocked`` with a machine-readable reason code).
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.expr import Expr
from costmodel.reasons import Reason


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Crossing:
    """The predicate may move below the operator into child ``index`` as ``form``."""

    index: int
    form: Expr

    def __init__(self, index: int, form: Expr) -> None:
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "form", form)


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Blocked:
    """The predicate must stay above the operator; ``reason`` is machine readable."""

    reason: Reason
    detail: str

    def __init__(self, reason: Reason, detail: str) -> None:
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "detail", detail)


Outcome = list[Crossing] | Blocked
