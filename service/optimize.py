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
from typing import TYPE_CHECKING, Any

from costmodel import optimize_wire
from service.errors import InputError
from service.statistics import StatisticsStore, optimize_with_samples, resolve_catalog, sample_sources

if TYPE_CHECKING:
    from service.feedback.use_case import FeedbackService

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


class OptimizeService:
    """Runs the engine for one request and adds what the service owns: the request id and the context echo."""

    def __init__(self, store: StatisticsStore | None = None, feedback: FeedbackService | None = None) -> None:
        """``store``: where catalog tables given as ``{"ref": name}`` are looked up (None: refs are refused);
        ``feedback``: observed selectivities of earlier runs (None: estimates never come from feedback)."""
        self.store = store
        self.feedback = feedback

    def optimize(self, request: OptimizeInput) -> dict[str, Any]:
        """Raises ``costmodel.PlanError`` or ``service.errors.InputError`` for input it cannot accept."""
        from service.feedback.annotate import annotate, feedback_option

        options, use_feedback = feedback_option(request.options)
        catalog, samples = resolve_catalog(request.catalog, self.store)  # stored statistics for {"ref": ...}
        resolved = replace(request, catalog=catalog, options=options)
        learned = None
        if use_feedback and self.feedback is not None:
            from costmodel.estimate import DEFAULT_SOURCES

            chain = sample_sources(samples) or DEFAULT_SOURCES
            learned = self.feedback.source_for(request.catalog, request.context, chain)
        front = (learned,) if learned is not None else ()
        response = self._run(resolved, partial(optimize_with_samples, samples=samples, front=front))
        if learned is not None and learned.details:  # feedback answered: say what it changed
            annotate(response, self._run(resolved, partial(optimize_with_samples, samples=samples)), learned.details)
        elif not use_feedback:
            response["feedback"] = {"enabled": False}
        return {"request_id": str(uuid.uuid4()), "context": request.context, **response}

    def _run(self, request: OptimizeInput, engine: Callable[..., dict[str, Any]]) -> dict[str, Any]:
        if request.sql is not None:
            return self._optimize_sql(request, engine)
        if request.substrait is not None:
            return self._optimize_substrait(request, engine)
        return engine(request.plan, request.catalog, request.options)

    def _optimize_sql(
        self, request: OptimizeInput, engine: Callable[..., dict[str, Any]] = optimize_wire
    ) -> dict[str, Any]:
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
            plan = sql_to_plan(request.sql, request.catalog, dialect=request.dialect)
            response = engine(plan, request.catalog, request.options)
            response["sql"] = plan_to_sql(response["plan"], request.dialect, source=request.sql)  # keeps hints
        except SqlError as exc:
            # line and column say where in the SQL; an unknown column's own name moves to "name"
            detail = {("name" if key == "column" else key): value for key, value in exc.detail.items()}
            detail.update(line=exc.line, column=exc.column)
            raise InputError(exc.code, exc.message, "$.sql", detail) from exc
        return response

    def _optimize_substrait(
        self, request: OptimizeInput, engine: Callable[..., dict[str, Any]] = optimize_wire
    ) -> dict[str, Any]:
        """Substrait in, Substrait out; the plan must be the producer's plan before its own optimizer ran."""
        from service.substrait import SubstraitError, plan_to_substrait, substrait_to_plan

        try:
            plan = substrait_to_plan(request.substrait, request.catalog, root="$.substrait")
            response = engine(plan, request.catalog, request.options)
            response["substrait"] = plan_to_substrait(response["plan"], request.substrait)
        except SubstraitError as exc:
            raise InputError(exc.code, exc.message, exc.path, exc.detail) from exc
        return response
