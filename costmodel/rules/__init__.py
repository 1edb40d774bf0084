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


@dataclass(frozen=True, slots=True)
class Crossing:
    """The predicate may move below the operator into child ``index`` as ``form``."""

    index: int
    form: Expr


@dataclass(frozen=True, slots=True)
class Blocked:
    """The predicate must stay above the operator; ``reason`` is machine readable."""

    reason: Reason
    detail: str


Outcome = list[Crossing] | Blocked
