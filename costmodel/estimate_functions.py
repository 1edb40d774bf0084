"""Selectivity of a call to a function whose runner sampled it: the share of its sample the call kept.

A runner that times a Python UDF on a sample of its arguments (``pushdown_client.udf_timing``) sees what the
function returned, so it can say what share of those rows a conjunct that is just that call keeps
(``functions.<name>.selectivity``, of ``sample_rows``). That beats the constant a call gets otherwise
(``DEFAULTS["other"]``, 0.5) when the sample is like the data, and is wrong when it is not (the first rows of a
file sorted by a key the function depends on). It goes last in the chain, behind statistics and behind what a
run observed (``service.feedback.learning.FeedbackSource`` is put in front of every other source), so a run's
feedback corrects a misleading sample.

    >>> from costmodel.expr import Column
    >>> source = FunctionSampleSource({"f": FunctionDecl(cost=900.0, selectivity=0.25, sample_rows=200)})
    >>> found = source.estimate(Call("f", (Column("a", 1),)), {})
    >>> found.selectivity, found.source, found.sample_size, round(found.low, 3), round(found.high, 3)
    (0.25, 'function sample', 200, 0.195, 0.314)
    >>> source.estimate(Call("g", (Column("a", 1),)), {}) is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping

from costmodel.estimate_types import ColumnInfo, SelectivityEstimate, SelectivitySource
from costmodel.expr import Call, Expr
from costmodel.functions import FunctionDecl
from costmodel.sample import wilson_interval


class FunctionSampleSource:
    """Answers a conjunct that is one call of a function declared with a sampled ``selectivity``."""

    name = "function sample"

    def __init__(self, functions: Mapping[str, FunctionDecl]) -> None:
        self.sampled = {n.lower(): d for n, d in functions.items() if d.selectivity is not None}

    def estimate(self, predicate: Expr, columns: Mapping[int, ColumnInfo]) -> SelectivityEstimate | None:
        if not isinstance(predicate, Call):
            return None
        name = predicate.name if predicate.fn == "udf" else predicate.fn
        decl = self.sampled.get((name or "").lower())
        if decl is None or decl.selectivity is None:
            return None
        share, rows = decl.selectivity, decl.sample_rows
        low, high = wilson_interval(round(share * rows), rows) if rows else (share, share)
        return SelectivityEstimate(share, min(low, share), max(high, share), self.name, rows)


def with_function_samples(
    sources: tuple[SelectivitySource, ...], functions: Mapping[str, FunctionDecl]
) -> tuple[SelectivitySource, ...]:
    """``sources`` with the sampled functions' source last (before the defaults), when any function has one."""
    if not any(d.selectivity is not None for d in functions.values()):
        return sources
    return (*sources, FunctionSampleSource(functions))
