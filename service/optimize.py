"""The optimize use case: plan or SQL in, decisions and the rewritten plan out.

The HTTP route and the command line both call ``OptimizeService.optimize``; the
input arrives already validated by the edge (see ``api.models``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from costmodel import optimize_wire
from service.analyzed_tables import (
    add_analyzed_tables,
    change_warning,
    tables_in_plan,
    tables_in_sql,
    used_statistics,
)
from service.decision_summary import summarize
from service.errors import InputError
from service.statistics import StatisticsStore, StoredTable, optimize_with_samples, resolve_catalog, sample_sources

if TYPE_CHECKING:
    from service.feedback.use_case import FeedbackService

logger = logging.getLogger(__name__)


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


def _tables_read(request: OptimizeInput) -> list[str]:
    """The tables a request reads, as it names them."""
    if request.sql is not None:
        return tables_in_sql(request.sql, request.dialect)
    return tables_in_plan(request.substrait if request.substrait is not None else request.plan)


def _resolved_by(name: str, given: dict[str, Any] | None) -> str:
    """``ref`` when the request's catalog named the analyzed table, ``name`` when the service found it by name."""
    tables = given.get("tables") if isinstance(given, dict) else None
    return "ref" if isinstance(tables, dict) and name in tables else "name"


class OptimizeService:
    """Runs the engine for one request and adds what the service owns: the request id and the context echo."""

    def __init__(self, store: StatisticsStore | None = None, feedback: FeedbackService | None = None) -> None:
        """``store``: where catalog tables given as ``{"ref": name}`` are looked up (None: refs are refused);
        ``feedback``: observed selectivities of earlier runs (None: estimates never come from feedback)."""
        self.store = store
        self.feedback = feedback

    def optimize(
        self, request: OptimizeInput, request_id: str | None = None, client_request_id: str | None = None
    ) -> dict[str, Any]:
        """Raises ``costmodel.PlanError`` or ``service.errors.InputError`` for input it cannot accept.

        ``request_id``: the answer's id (a new UUID when None); ``client_request_id``: the caller's own
        ``X-Request-ID``, echoed in the answer when given.
        """
        from service.feedback.annotate import annotate, feedback_option

        options, use_feedback = feedback_option(request.options)
        given = request.catalog
        by_name = add_analyzed_tables(given, _tables_read(request), self.store, bare_keys=request.sql is not None)
        used: list[tuple[str, StoredTable]] = []
        catalog, samples = resolve_catalog(by_name, self.store, used)  # stored statistics for {"ref": ...}
        resolved = replace(request, catalog=catalog, options=options)
        learned = None
        if use_feedback and self.feedback is not None:
            from costmodel.estimate import DEFAULT_SOURCES

            chain = sample_sources(samples) or DEFAULT_SOURCES
            learned = self.feedback.source_for(request.catalog, request.context, chain)
        front = (learned,) if learned is not None else ()
        engine = partial(optimize_with_samples, samples=samples, front=front)
        original, response = self._run(resolved, engine)
        if learned is not None and learned.details:  # feedback answered: say what it changed
            _, unlearned = self._run(resolved, partial(optimize_with_samples, samples=samples))
            annotate(response, unlearned, learned.details)
        elif not use_feedback:
            response["feedback"] = {"enabled": False}
        mode = (options or {}).get("mode", "cost")
        always = {**(options or {}), "mode": "always"}
        add_baseline(response, mode, lambda: engine(original, catalog, always))
        warn_cross_products(response, original)
        attach_spark(response, catalog)
        statistics = [used_statistics(name, stored, _resolved_by(name, given)) for name, stored in used]
        response["warnings"] = [*response.get("warnings", []), *filter(None, map(change_warning, statistics))]
        response["statistics"] = statistics
        ids = {"request_id": request_id or str(uuid.uuid4())}
        if client_request_id is not None:
            ids["client_request_id"] = client_request_id
        # the per-predicate view first: what a person reads; the full matrix stays in "decisions"
        return {**ids, "context": request.context, "summary": summarize(response), **response}

    def _run(
        self, request: OptimizeInput, engine: Callable[..., dict[str, Any]]
    ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """The plan as the request states it (before any rewrite) and the engine's answer for it."""
        if request.sql is not None:
            return self._optimize_sql(request, engine)
        if request.substrait is not None:
            return self._optimize_substrait(request, engine)
        return request.plan, engine(request.plan, request.catalog, request.options)

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
        assert request.sql is not None  # the caller checked
        try:
            plan = sql_to_plan(request.sql, request.catalog, dialect=request.dialect)
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

        assert request.substrait is not None  # the caller checked
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
