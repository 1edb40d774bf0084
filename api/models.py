"""Wire models of ``POST /optimize`` (design.md's contract), validated at the edge.

The request model validates the envelope only; the plan, catalog and options
inside it are the engine's to validate, with JSON paths into the same document.
The response models document the answer in OpenAPI; the route does not
re-validate the engine's output through them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from costmodel.strict import nearest
from service.errors import InputError
from service.jsonguard import NOT_ORDINARY, ORJSON_MAX_DEPTH, parse_json, parse_ordinary
from service.optimize import OptimizeInput

_EXAMPLE: dict[str, Any] = {
    "plan": {
        "op": "project",
        "exprs": [{"expr": {"col": "name"}, "as": "name"}],
        "input": {
            "op": "filter",
            "predicate": {"fn": ">", "args": [{"col": "state_id"}, {"lit": 40, "type": "int"}]},
            "input": {"op": "scan", "table": "cities"},
        },
    },
    "catalog": {
        "tables": {
            "cities": {
                "columns": [
                    {"name": "id", "type": "int"},
                    {"name": "name", "type": "string"},
                    {"name": "state_id", "type": "int"},
                ],
                "row_count": 20000,
                "column_stats": {"state_id": {"ndv": 50, "min": 1, "max": 50, "null_count": 0}},
            }
        }
    },
    "options": {"mode": "cost"},
    "context": {"pipeline": "daily_cities", "task": "load", "run": "2026-11-22"},
}


class Context(BaseModel):
    """What the dashboard groups runs by; echoed back unchanged."""

    model_config = ConfigDict(extra="forbid", strict=True)

    pipeline: str | None = None
    task: str | None = None
    run: str | None = None


class OptimizeRequest(BaseModel):
    """Exactly one of ``plan``, ``sql`` and ``substrait``; unknown top-level keys are refused, so typos fail."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [_EXAMPLE]})

    plan: dict[str, Any] | None = Field(default=None, description="A plan node in the wire format.")
    sql: str | None = Field(default=None, description="A query, instead of a plan.")
    substrait: dict[str, Any] | None = Field(
        default=None,
        description="A Substrait plan as protobuf JSON, instead of a plan; send it before the producer optimizes it.",
    )
    dialect: str = Field(default="spark", description="SQL dialect of `sql` and of the `sql` in the answer.")
    catalog: dict[str, Any] | None = Field(
        default=None, description="Tables: columns, statistics, containers, indexes."
    )
    options: dict[str, Any] | None = Field(
        default=None, description="mode (cost|always|never), operator and filter costs."
    )
    functions: dict[str, Any] | None = Field(
        default=None,
        description=(
            "Functions the query calls, by name as in the SQL or plan: "
            '{"name": {"cost": N, "deterministic": true, "may_fail": false}}. '
            "A function the engine does not know and nobody declared is never moved."
        ),
    )
    context: Context | None = None
    detail: Literal["summary", "full"] = Field(
        default="summary",
        description="summary: the per-predicate summary, plan or query, totals; full: also the decision matrix "
        "(`decisions`), per-node cost tables, EXPLAIN trees and, for plan and Substrait input, `spark`.",
    )

    @model_validator(mode="after")
    def _plan_or_sql(self) -> OptimizeRequest:
        given = sum(x is not None for x in (self.plan, self.sql, self.substrait))
        if given != 1:
            message = "exactly one of plan, sql or substrait is required"
            raise PydanticCustomError("plan_or_sql", message)
        return self

    def _options_with_functions(self) -> dict[str, Any] | None:
        """The engine reads declarations from ``options.functions``; the request's ``functions`` go there."""
        if self.functions is None:
            return self.options
        options = dict(self.options or {})
        declared = options.get("functions")
        options["functions"] = {**declared, **self.functions} if isinstance(declared, dict) else self.functions
        return options

    def to_input(self) -> OptimizeInput:
        return OptimizeInput(
            plan=self.plan,
            sql=self.sql,
            substrait=self.substrait,
            dialect=self.dialect,
            catalog=self.catalog,
            options=self._options_with_functions(),
            context=self.context.model_dump() if self.context is not None else None,
            detail=self.detail,
            top_level_functions=frozenset(self.functions or ()),
        )


def _json_path(loc: tuple[int | str, ...]) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def _known_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The keys the model at ``loc`` (a path of field names from ``model``) accepts."""
    for part in loc:
        field = model.model_fields.get(str(part))
        inner = field.annotation if field is not None else None
        candidates = getattr(inner, "__args__", (inner,))
        nested = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if nested is None:
            return []
        model = nested
    return [field.alias or name for name, field in model.model_fields.items()]


def _describe(err: Any, model: type[BaseModel] | None) -> dict[str, Any]:
    """One pydantic error as ``{path, type, message}``; an unknown key also names the nearest known one."""
    out = {"path": _json_path(err["loc"]), "type": err["type"], "message": err["msg"]}
    if err["type"] == "extra_forbidden" and err["loc"]:
        key = str(err["loc"][-1])
        known = _known_keys(model, err["loc"][:-1]) if model is not None else []
        suggestion = nearest(key, known)
        out["message"] = f"unknown key {key!r}" + (f"; did you mean {suggestion!r}?" if suggestion else "")
        out["known"] = sorted(known)
        if suggestion:
            out["did_you_mean"] = suggestion
    return out


def validation_error(exc: ValidationError, model: type[BaseModel] | None = None) -> InputError:
    """Pydantic's errors in the service's shape: the first one up front, all of them in ``detail``.

    ``model``: the model validated; with it an unknown key's error names the nearest known key.
    """
    raw = exc.errors(include_url=False, include_input=False, include_context=False)
    errors = [_describe(err, model) for err in raw]
    first = errors[0]
    return InputError("invalid_request", first["message"], first["path"], {"errors": errors})


#: Bodies up to this size that are ordinary JSON are parsed where they arrive (on the event loop): under 1 ms.
INLINE_PARSE_BYTES = 256 * 1024


def parse_ordinary_request(raw: bytes, max_json_depth: int) -> OptimizeInput | None:
    """``parse_optimize_request`` for ordinary JSON (orjson's fast path), or None for anything else (deep,
    malformed, long integers, ...), which the careful parser must read and explain; raises ``InputError``."""
    # may nest too deep: the careful path measures it (not counted when orjson itself refuses what nests deeper)
    counted = ORJSON_MAX_DEPTH is None or max_json_depth < ORJSON_MAX_DEPTH
    if counted and raw.count(b"[") + raw.count(b"{") > max_json_depth:
        return None
    data = parse_ordinary(raw)
    if data is NOT_ORDINARY:
        return None
    try:
        return OptimizeRequest.model_validate(data).to_input()
    except ValidationError as exc:
        raise validation_error(exc, OptimizeRequest) from None


def parse_optimize_request(raw: bytes, max_json_depth: int) -> OptimizeInput:
    """Bytes of a ``POST /optimize`` body to the use case's input; raises ``InputError``."""
    data = parse_json(raw, max_json_depth)
    try:
        return OptimizeRequest.model_validate(data).to_input()
    except ValidationError as exc:
        raise validation_error(exc, OptimizeRequest) from None


# ---------------------------------------------------------------- responses (documentation)

_OPEN = ConfigDict(extra="allow")


class CostNode(BaseModel):
    model_config = _OPEN

    id: str
    operator: str
    rows_in: float = Field(description="Rows the operator receives.")
    rows_out: float = Field(description="Rows the operator emits.")
    k: float = Field(description="Per-row cost constant of the operator.")
    cost: float = Field(description="k * rows_in.")


class CostTable(BaseModel):
    model_config = _OPEN

    total: float
    nodes: list[CostNode] | None = Field(default=None, description='Per operator; only with `detail: "full"`.')


class Cost(BaseModel):
    model_config = _OPEN

    before: CostTable
    after: CostTable
    savings: float = Field(description="1 - after.total / before.total: against the query as written.")
    baseline: dict[str, Any] | None = Field(
        default=None, description="The rule-based plan's cost (`always` mode: what Catalyst and its peers run)."
    )
    savings_vs_baseline: float | None = Field(
        default=None, description="1 - after.total / baseline.total: the gain over rule-based pushdown (headline)."
    )
    savings_vs_written: float | None = Field(default=None, description="Same as `savings`, labelled.")


class Decision(BaseModel):
    """One (predicate, operator) pair; the numbers are set where the benefit model was applied."""

    model_config = _OPEN

    predicate: str
    operator: str = Field(description="Node id.")
    action: Literal["pushed", "kept", "blocked"]
    reason: str
    p: float | None = None
    r: float | None = None
    r1: float | None = None
    lhs: float | None = Field(default=None, description="1 - r")
    rhs: float | None = Field(default=None, description="p * r1")
    selectivity: float | None = Field(default=None, description="The estimate behind p (p = 1 - selectivity).")
    interval: list[float] | None = Field(default=None, description="The estimate's interval.")
    source: str | None = Field(default=None, description="sample, statistics, default or constant.")
    uncertain: bool | None = Field(
        default=None, description="True when the inequality holds at one end of the interval and not the other."
    )
    cost_if_kept: float | None = Field(default=None, description="Plan total with the predicate above the operator.")
    cost_if_pushed: float | None = Field(default=None, description="Best plan total with it below the operator.")
    cost_without: float | None = Field(
        default=None, description="A derived predicate's first entry: plan total without it."
    )
    cost_with: float | None = Field(
        default=None,
        description="A derived predicate's first entry: plan total with it at its best place; it is added only "
        "when this is strictly lower than cost_without.",
    )


class Estimate(BaseModel):
    model_config = _OPEN

    predicate: str
    selectivity: float
    interval: list[float] | None = None
    source: str = Field(description="sample, statistics, default or constant.")
    sample_size: int | None = Field(default=None, description="Rows of the sample, when the source is a sample.")


class Explain(BaseModel):
    before: str
    after: str


class TableStatistics(BaseModel):
    """An analyzed table's statistics that the answer used (see docs/statistics.md)."""

    table: str = Field(description="The table as the request names it.")
    analyzed_table: str = Field(description="The analyzed table's stored name.")
    resolved_by: Literal["name", "ref"] = Field(
        description="name: found by the query's table name; ref: the catalog's {\"ref\": ...}."
    )
    version: int
    analyzed_at: str
    row_count: int | None = None
    sample_rows: int | None = Field(default=None, description="Rows in the stored sample.")
    source: dict[str, Any] | None = Field(default=None, description="What was analyzed: path and format, or table.")
    fingerprint: dict[str, Any] | None = Field(
        default=None, description="Files, bytes and digest of the source's files when analyzed (local sources)."
    )
    source_changed: bool | None = Field(
        default=None, description="Whether the source's files differ now; null when it cannot be checked."
    )


class Comparison(BaseModel):
    """A comparison that decided a step, with its labelled terms (docs/api.md#decisions)."""

    kind: Literal["cost", "benefit", "derived"]
    holds: bool
    terms: dict[str, float | None]
    text: str = Field(description="e.g. `1 - r = 0.9 <= p·r1 = 0.5 × 4 = 2`.")


class SummaryStep(BaseModel):
    operator: str | None = Field(description="Kind and id, e.g. `TableScan orders (n9)`.")
    path: str | None = Field(default=None, description="Kinds from the root down to the operator.")
    action: str
    reason: str
    decided_by: Comparison | None = None


class PredicateSummary(BaseModel):
    """One predicate: where it ended up and why (the decision log grouped per predicate)."""

    predicate: str
    final_position: str
    scans_reached: list[str]
    inferred: str | None = Field(default=None, description="How it was inferred, when the query did not state it.")
    stopped: str = Field(description="The one reason it went no lower, with the numbers that decided.")
    steps: list[SummaryStep]


class CacheInfo(BaseModel):
    """Whether an answer came from the request cache (also the ``Pushdown-Cache`` header)."""

    hit: bool
    age_s: float | None = Field(default=None, description="Seconds since the cached answer was computed.")


class OptimizeResponse(BaseModel):
    model_config = _OPEN

    request_id: str = Field(
        description="This answer's id: the history's key, and X-Request-ID unless the caller set one."
    )
    client_request_id: str | None = Field(default=None, description="The caller's X-Request-ID, when it sent one.")
    context: Context | None = None
    summary: list[PredicateSummary] = Field(default_factory=list, description="Per predicate, read first.")
    plan: dict[str, Any] = Field(description="The rewritten plan.")
    sql: str | None = Field(default=None, description="The rewritten query, when SQL came in.")
    substrait: dict[str, Any] | None = Field(
        default=None, description="The rewritten plan as Substrait JSON, when Substrait came in."
    )
    decisions: list[Decision] | None = Field(
        default=None, description='The decision matrix, one row per predicate and operator; `detail: "full"`.'
    )
    estimates: list[Estimate]
    rewrites: list[Any] = Field(description="Outer joins made inner, always-true conjuncts dropped, never-true ones.")
    scans: list[Any] = Field(
        default_factory=list, description="Per scan: containers pruned and kept, and the index lookup considered."
    )
    warnings: list[Any]
    statistics: list[TableStatistics] = Field(
        default_factory=list, description="Analyzed tables whose statistics the answer used."
    )
    cost: Cost
    explain: Explain | None = Field(default=None, description='EXPLAIN trees before and after; `detail: "full"`.')
    cache: CacheInfo | None = Field(default=None, description="Whether the answer came from the request cache.")
    model_version: str | None = Field(default=None, description="The cost model's version.")
    spark: dict[str, Any] | None = Field(
        default=None,
        description="What Spark runs to keep every placement: `sql` (Spark dialect, per-predicate barriers), "
        "`conf` (session settings, normally empty), `barriers`, `left_to_spark`; `as_written: true` when no barrier "
        "or setting is needed and `sql` is the request's own Spark SQL.",
    )


class ErrorResponse(BaseModel):
    """Every 4xx and 5xx body."""

    error: str = Field(description="Machine-readable code, e.g. unknown_column.")
    message: str
    path: str = Field(description="JSON path of the value at fault, e.g. $.plan.input.predicate.")
    detail: dict[str, Any] | None = Field(default=None, description="Extra facts, e.g. the columns that exist.")


class Health(BaseModel):
    status: Literal["ok"]
    version: str
