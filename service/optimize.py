"""The optimize use case: plan or SQL in, decisions and the rewritten plan out.

The HTTP route and the command line both call ``OptimizeService.optimize``; the
input arrives already validated by the edge (see ``api.models``).
"""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from costmodel import optimize_wire
from service.errors import InputError
from service.statistics import StatisticsStore, optimize_with_samples, resolve_catalog

logger = logging.getLogger(__name__)

#: The engine reads and writes plans recursively, a few frames per level; plans as deep as the engine accepts
#: (costmodel.wire.MAX_DEPTH) need more than Python's default of 1000 frames.
RECURSION_LIMIT = 20_000


def allow_deep_plans() -> None:
    """Raise the interpreter's recursion limit for the engine; process-wide, so entry points call it once."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))


@dataclass(frozen=True, slots=True)
class OptimizeInput:
    """A validated request; exactly one of ``plan``, ``sql`` and ``substrait`` is set."""

    plan: dict[str, Any] | None = None
    sql: str | None = None
    substrait: dict[str, Any] | None = None
    dialect: str = "spark"
    catalog: dict[str, Any] | None = None
    options: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    functions: dict[str, dict[str, Any]] | None = None


class OptimizeService:
    """Runs the engine for one request and adds what the service owns: the request id and the context echo."""

    def __init__(self, store: StatisticsStore | None = None) -> None:
        """``store``: where catalog tables given as ``{"ref": name}`` are looked up (None: refs are refused)."""
        self.store = store

    def optimize(self, request: OptimizeInput) -> dict[str, Any]:
        """Raises ``costmodel.PlanError`` or ``service.errors.InputError`` for input it cannot accept."""
        catalog, samples = resolve_catalog(request.catalog, self.store)  # stored statistics for {"ref": ...}
        request, engine = replace(request, catalog=catalog), partial(optimize_with_samples, samples=samples)
        if request.sql is not None:
            original, response = self._optimize_sql(request, engine)
        elif request.substrait is not None:
            original, response = self._optimize_substrait(request, engine)
        else:
            original, response = request.plan, engine(request.plan, request.catalog, request.options)
        mode = (request.options or {}).get("mode", "cost")
        always = {**(request.options or {}), "mode": "always"}
        add_baseline(response, mode, lambda: engine(original, request.catalog, always))
        warn_cross_products(response, original)
        attach_spark(response, request.catalog)
        return {"request_id": str(uuid.uuid4()), "context": request.context, **response}

    def _optimize_sql(
        self, request: OptimizeInput, engine: Callable[..., dict[str, Any]] = optimize_wire
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        try:  # imported here: SQL support is optional and may not be installed
            from service.sql import plan_to_sql, sql_to_plan
            from service.sql.errors import SqlError
        except ImportError as exc:  # absent, or present but unfinished
            if not (exc.name or "").startswith("service.sql"):
                raise
            logger.warning("SQL input unavailable: %s", exc)
            raise InputError(
                "sql_unavailable", "SQL input is not available in this build; send a plan", "$.sql"
            ) from None
        try:
            plan = declare_functions(
                sql_to_plan(request.sql, request.catalog, dialect=request.dialect), request.functions
            )
            response = engine(plan, request.catalog, request.options)
            response["sql"] = plan_to_sql(response["plan"], request.dialect, source=request.sql)  # keeps hints
        except SqlError as exc:
            # line and column say where in the SQL; an unknown column's own name moves to "name"
            detail = {("name" if key == "column" else key): value for key, value in exc.detail.items()}
            detail.update(line=exc.line, column=exc.column)
            raise InputError(exc.code, exc.message, "$.sql", detail) from exc
        return plan, response

    def _optimize_substrait(
        self, request: OptimizeInput, engine: Callable[..., dict[str, Any]] = optimize_wire
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Substrait in, Substrait out; the plan must be the producer's plan before its own optimizer ran."""
        from service.substrait import SubstraitError, plan_to_substrait, substrait_to_plan

        try:
            plan = substrait_to_plan(request.substrait, request.catalog, root="$.substrait")
            response = engine(plan, request.catalog, request.options)
            response["substrait"] = plan_to_substrait(response["plan"], request.substrait)
        except SubstraitError as exc:
            raise InputError(exc.code, exc.message, exc.path, exc.detail) from exc
        return plan, response


def attach_spark(response: dict[str, Any], catalog: dict[str, Any] | None) -> None:
    """Adds the answer's ``spark`` object (``service.spark_plan``); a plan Spark SQL cannot express gets a warning."""
    try:
        from service.spark_plan import spark_target
        from service.sql.errors import SqlError
    except ImportError as exc:  # SQL support is optional
        if not (exc.name or "").startswith("service."):
            raise
        return
    try:
        target = spark_target(response["plan"], response.get("decisions", []), catalog)
    except SqlError as exc:
        response.setdefault("warnings", []).append(f"no Spark SQL for this plan: {exc.message}")
        return
    response["spark"] = target.as_json()
    if target.unheld:
        response.setdefault("warnings", []).append(
            f"Spark may move {', '.join(target.unheld)}: a kept condition of an outer, semi or anti join cannot "
            "carry a barrier, and settings would cost the query Catalyst's other pushdowns"
        )


def declare_functions(plan: Any, functions: dict[str, dict[str, Any]] | None) -> Any:
    """Calls of the functions a SQL request declares become the engine's ``udf`` calls with their cost.

    >>> declare_functions({"fn": "score", "args": [{"col": "a"}]}, {"score": {"cost": 500}})
    {'fn': 'udf', 'name': 'score', 'args': [{'col': 'a'}], 'cost': 500, 'deterministic': True}
    """
    if not functions:
        return plan
    declared = {name.lower(): spec for name, spec in functions.items()}
    if isinstance(plan, list):
        return [declare_functions(v, functions) for v in plan]
    if not isinstance(plan, dict):
        return plan
    out = {k: declare_functions(v, functions) for k, v in plan.items()}
    spec = declared.get(str(out.get("fn", "")).lower()) if "fn" in out else None
    if spec is not None:
        out = {"fn": "udf", "name": out["fn"], "args": out.get("args", []), "cost": spec.get("cost", 1)}
        out["deterministic"] = bool(spec.get("deterministic", True))
    return out


def add_baseline(response: dict[str, Any], mode: str, rule_based: Callable[[], dict[str, Any]]) -> None:
    """The answer's ``cost`` gains the rule-based baseline (the plan ``always`` mode, i.e. Catalyst and every
    peer, would run) and the savings against it, the headline; ``savings_vs_written`` labels the old figure."""
    cost = response["cost"]
    after = float(cost["after"]["total"])
    # Without a single kept decision every predicate went as deep as legal: the plan is the rule-based one.
    same_plan = mode == "always" or not any(d.get("action") == "kept" for d in response.get("decisions", []))
    baseline = after if same_plan else float(rule_based()["cost"]["after"]["total"])
    cost["baseline"] = {"total": baseline, "mode": "always"}
    cost["savings_vs_baseline"] = _savings(baseline, after)
    cost["savings_vs_written"] = cost.get("savings", _savings(float(cost["before"]["total"]), after))


def _savings(before: float, after: float) -> float:
    return 0.0 if before <= 0 or abs(before - after) <= 1e-9 * before else round(1 - after / before, 6)


def warn_cross_products(response: dict[str, Any], original: Any) -> None:
    """A join without a condition in the query as written makes savings against it meaningless: say so."""
    joins = [n for n in _plan_nodes(original) if n.get("op") == "join" and not n.get("on")]
    joins = [n for n in joins if n.get("type", "inner") in ("inner", "cross")]
    if joins:
        ids = ", ".join(str(n.get("id")) for n in joins)
        response.setdefault("warnings", []).append(
            f"the query as written has a cross product (join {ids} has no condition): savings against it "
            "overstate the gain; savings_vs_baseline compares with rule-based pushdown"
        )


def _plan_nodes(value: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "op" in item:
                out.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out
