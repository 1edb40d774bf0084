"""Knobs of the optimizer, with the defaults documented in docs/cost-model.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from costmodel.errors import PlanError
from costmodel.functions import FunctionDecl, functions_from_wire
from costmodel.kinds.registry import all_kinds
from costmodel.strict import check_keys, unknown_key_error

Mode = Literal["cost", "always", "never"]

#: Per-row cost of carrying one more column through a join or a sort, for a predicate raised above the
#: projection that dropped it (``costmodel.carry``): a wider row to hash, shuffle or broadcast, about what a
#: plain comparison costs (a join's own k is 4).
CARRIED_COLUMN_K: Final = 1.0

#: Per-row cost of reading a row through an index: a random access costs more than a row of a
#: sequential scan. Not an operator kind of its own: a scan reads through an index (costmodel.scan_access).
INDEX_LOOKUP_K: Final = 2.0


def default_operator_costs() -> dict[str, float]:
    """Per-row cost constant k of each operator kind, relative to one plain comparison (= 1).

    Each kind declares its own (``costmodel/kinds/<kind>.py``); docs/cost-model.md explains them.
    """
    costs = {kind.name: kind.default_k for kind in all_kinds()}
    costs["index_lookup"] = INDEX_LOOKUP_K
    costs["carried_column"] = CARRIED_COLUMN_K
    return costs


#: Per-row cost of evaluating one call inside a predicate. A plain comparison is 1.
DEFAULT_PREDICATE_COSTS: Final[dict[str, float]] = {
    "comparison": 1.0,
    "boolean": 0.0,
    "arithmetic": 1.0,
    "like": 3.0,
    "regex": 10.0,
    "function": 2.0,
    "udf": 100.0,
    "subquery": 50.0,
    "in_item": 0.1,
}


#: ``Options.min_savings`` unless the request says otherwise
DEFAULT_MIN_SAVINGS = 0.01
#: ``Options.expensive_threshold`` unless the request says otherwise
DEFAULT_EXPENSIVE_THRESHOLD = 10.0


@dataclass(frozen=True, slots=True)
class Options:
    """How to decide.

    ``mode``: ``cost`` pushes where the model says it pays, ``always`` pushes
    wherever legal (rule-based behaviour), ``never`` only reports.
    ``scan_pushdown``: a predicate that reaches a scan is merged into the scan's
    ``filters`` rather than left as a filter node right above it.
    """

    mode: Mode = "cost"
    operator_costs: dict[str, float] = field(default_factory=default_operator_costs)
    predicate_costs: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_PREDICATE_COSTS))
    scan_pushdown: bool = True
    default_row_count: float = 1000.0
    #: per-row cost (a plain comparison = 1) from which mode ``cost`` places a predicate by the model; a cheaper
    #: one goes where rule-based pushdown puts it. Holding a cheap predicate above an operator saves little on
    #: Spark (its filters are compiled code) and costs what the model does not price: the scan's pushed filters,
    #: partition and branch pruning, the constraints Catalyst infers (docs/cost-model.md, "Do no harm")
    expensive_threshold: float = DEFAULT_EXPENSIVE_THRESHOLD
    #: the smallest saving against rule-based pushdown (a share of its cost, at the low end of the savings'
    #: interval) for which a Spark answer departs from the query as written: below it the query runs as written,
    #: since a barrier that buys nothing measurable costs Spark what the model does not price (docs/cost-model.md)
    min_savings: float = DEFAULT_MIN_SAVINGS
    #: functions the request declares, by lower-case name (``costmodel.functions``)
    functions: dict[str, FunctionDecl] = field(default_factory=dict)

    def k(self, kind: str) -> float:
        """The cost constant of operator kind ``kind``; a kind without one is a bug (KeyError), never 1.0."""
        return self.operator_costs[kind]


def _number_map(raw: Any, defaults: dict[str, float], path: str) -> dict[str, float]:
    merged = dict(defaults)
    if raw is None:
        return merged
    if not isinstance(raw, dict):
        raise PlanError("invalid_options", "expected an object of name -> number", path)
    for key, value in raw.items():
        if key not in defaults:
            raise unknown_key_error(key, defaults, path, "invalid_options")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise PlanError("invalid_options", "must be a non-negative number", f"{path}.{key}")
        merged[key] = float(value)
    return merged


def options_from_wire(raw: Any, path: str = "$.options") -> Options:
    """Read wire options; unknown keys are an error so typos do not pass silently."""
    if raw is None:
        return Options()
    if not isinstance(raw, dict):
        raise PlanError("invalid_options", "options must be an object", path)
    known = {
        "mode",
        "operator_costs",
        "predicate_costs",
        "scan_pushdown",
        "default_row_count",
        "expensive_threshold",
        "min_savings",
        "functions",
    }
    check_keys(raw, known, path, "invalid_options")
    mode = raw.get("mode", "cost")
    if mode not in ("cost", "always", "never"):
        raise PlanError("invalid_options", "mode must be one of cost, always, never", f"{path}.mode")
    default_rows = raw.get("default_row_count", 1000.0)
    if isinstance(default_rows, bool) or not isinstance(default_rows, (int, float)) or default_rows < 0:
        raise PlanError("invalid_options", "must be a non-negative number", f"{path}.default_row_count")
    threshold = raw.get("expensive_threshold", DEFAULT_EXPENSIVE_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or threshold < 0:
        raise PlanError("invalid_options", "must be a non-negative number", f"{path}.expensive_threshold")
    min_savings = raw.get("min_savings", DEFAULT_MIN_SAVINGS)
    if isinstance(min_savings, bool) or not isinstance(min_savings, (int, float)) or not 0 <= min_savings <= 1:
        raise PlanError("invalid_options", "must be a number from 0 to 1", f"{path}.min_savings")
    scan_pushdown = raw.get("scan_pushdown", True)
    if not isinstance(scan_pushdown, bool):
        raise PlanError("invalid_options", "scan_pushdown must be true or false", f"{path}.scan_pushdown")
    return Options(
        mode=mode,
        operator_costs=_number_map(raw.get("operator_costs"), default_operator_costs(), f"{path}.operator_costs"),
        predicate_costs=_number_map(raw.get("predicate_costs"), DEFAULT_PREDICATE_COSTS, f"{path}.predicate_costs"),
        scan_pushdown=scan_pushdown,
        default_row_count=float(default_rows),
        expensive_threshold=float(threshold),
        min_savings=float(min_savings),
        functions=functions_from_wire(raw.get("functions"), f"{path}.functions"),
    )
