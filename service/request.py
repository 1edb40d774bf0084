"""The request schema every entry point shares (HTTP, the command line, the worker processes, the in-process
client): ``POST /optimize``'s and ``POST /tables/{name}/analyze``'s bodies, validated at the edge.

The optimize request model validates the envelope only; the plan, catalog and options inside it are the
engine's to validate, with JSON paths into the same document. Pydantic's errors become ``InputError`` here
(``validation_error``), so every entry point refuses a bad request in the same words.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from costmodel.strict import nearest
from service.analyze import AnalyzeRequest
from service.errors import InputError
from service.jsonguard import NOT_ORDINARY, ORJSON_MAX_DEPTH, parse_json, parse_ordinary
from service.optimize import OptimizeInput
from service.settings import Settings

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
        candidates = get_args(inner) or (inner,)
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


def check_sql_length(body: OptimizeInput, max_sql_chars: int) -> None:
    """422 ``sql_too_long`` for a query over the limit: parsing is the slowest part per byte."""
    if body.sql is not None and len(body.sql) > max_sql_chars:
        raise InputError(
            "sql_too_long",
            f"the query is {len(body.sql)} characters, the limit is {max_sql_chars} (PUSHDOWN_MAX_SQL_CHARS)",
            "$.sql",
            {"limit": max_sql_chars},
        )


def parse_within_limits(raw: bytes, max_json_depth: int, max_sql_chars: int) -> OptimizeInput:
    """The body parsed (its depth checked first, on the raw bytes), then the SQL's length."""
    body = parse_optimize_request(raw, max_json_depth)
    check_sql_length(body, max_sql_chars)
    return body


# ---------------------------------------------------------------- POST /tables/{name}/analyze


class AnalyzeOptions(BaseModel):
    """Overrides of the service's analyze defaults (``PUSHDOWN_ANALYZE_*``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    sample_rows: int | None = Field(default=None, ge=0, le=10_000_000, description="Rows to sample.")
    histogram_buckets: int | None = Field(default=None, ge=1, le=10_000)
    mcv_count: int | None = Field(default=None, ge=0, le=1000, description="Most common values kept per column.")
    seed: int | None = None


class AnalyzeBody(BaseModel):
    """Exactly one of ``path`` (with ``format``) and ``table`` (a name in the Spark catalog)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"examples": [{"path": "/data/lineitem.parquet", "format": "parquet"}]},
    )

    path: str | None = Field(default=None, description="A file or directory, local or any URL Spark reads.")
    format: Literal["parquet", "csv", "orc", "json"] = "parquet"
    table: str | None = Field(default=None, description="A table in the Spark catalog, instead of a path.")
    reader_options: dict[str, str] = Field(default_factory=dict, description="Spark reader options.")
    options: AnalyzeOptions = Field(default_factory=AnalyzeOptions)

    @model_validator(mode="after")
    def _path_or_table(self) -> AnalyzeBody:
        if (self.path is None) == (self.table is None):
            raise PydanticCustomError("path_or_table", "exactly one of path or table is required")
        return self

    def to_request(self, name: str, settings: Settings, path: str | None = None) -> AnalyzeRequest:
        """``path``: the source as checked and resolved (``service.dataroots``), read instead of ``self.path``."""
        opts = self.options
        return AnalyzeRequest(
            name=name,
            path=path or self.path,
            format=self.format,
            table=self.table,
            sample_rows=settings.analyze_sample_rows if opts.sample_rows is None else opts.sample_rows,
            histogram_buckets=opts.histogram_buckets or settings.analyze_histogram_buckets,
            mcv_count=settings.analyze_mcv_count if opts.mcv_count is None else opts.mcv_count,
            seed=settings.analyze_seed if opts.seed is None else opts.seed,
            reader_options=self.reader_options,
        )


def parse_analyze_body(raw: bytes, max_json_depth: int) -> AnalyzeBody:
    """Bytes of a ``POST /tables/{name}/analyze`` body, validated; raises ``InputError``."""
    data = parse_json(raw, max_json_depth)
    try:
        return AnalyzeBody.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, AnalyzeBody) from None
