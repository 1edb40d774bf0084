"""The answers of the HTTP API as OpenAPI documents them: the route does not re-validate the engine's output
through these. The requests' schema is the service's (``service.request``), shared by every entry point.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from service.request import Context

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
    time_saved_vs_baseline_s: dict[str, Any] | None = Field(
        default=None,
        description="Executor seconds saved against rule-based pushdown: `estimate`, `interval`, `unit_s` (seconds "
        'of one cost unit) and `unit_source` (docs/cost-model.md, "Time saved").',
    )


class Decision(BaseModel):
    """One (predicate, operator) pair; the numbers are set where the benefit model was applied."""

    model_config = _OPEN

    predicate: str
    operator: str = Field(description="Node id.")
    action: Literal["pushed", "kept", "blocked", "pulled_up"]
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
    carried_columns: list[str] | None = Field(
        default=None,
        description="A pulled_up row at the operator that had projected the predicate's column away: the columns "
        'it now carries up to the predicate (docs/legality.md, "Pulling up").',
    )
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
    sql: str | None = Field(
        default=None,
        description="The one query to run, when SQL came in: for dialect `spark` it is `spark.sql` (the request's "
        "own text when `spark.as_written`); for another dialect the rewrite in that dialect.",
    )
    sql_portable: str | None = Field(
        default=None,
        description="The engine-neutral rewrite without Spark's barriers, when SQL came in; the request's own text "
        "where Spark runs it as written (the answer adds nothing to an engine's own pushdown).",
    )
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
    function_costs: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Every function's per-call cost (a comparison = 1): `name`, `cost`, `interval`, `source` "
        "(`declared`, `detected: ...`, `measured: ...`, `learned`, `default`).",
    )
    explain: Explain | None = Field(default=None, description='EXPLAIN trees before and after; `detail: "full"`.')
    cache: CacheInfo | None = Field(default=None, description="Whether the answer came from the request cache.")
    model_version: str | None = Field(default=None, description="The cost model's version.")
    spark: dict[str, Any] | None = Field(
        default=None,
        description="What Spark runs to keep every placement: `sql` (Spark dialect, per-predicate barriers), "
        "`conf` (session settings, normally empty), `barriers`, `left_to_spark`; `as_written: true` when no barrier "
        "or setting is needed and `sql` is the request's own Spark SQL; `immaterial: true` when barriers were "
        "dropped because the saving against rule-based pushdown is below `options.min_savings`; `conjunct_order` "
        "(operator ids) when the answer's SQL is sent to keep a cheap conjunct ahead of an expensive one.",
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
