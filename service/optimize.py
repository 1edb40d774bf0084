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
from service.analyzed_tables import (
    add_analyzed_tables,
    change_warning,
    tables_in_plan,
    tables_in_sql,
    used_statistics,
)
from service.decision_summary import summarize
from service.errors import InputError
from service.statistics import StatisticsStore, StoredTable, optimize_with_samples, resolve_catalog

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

    def __init__(self, store: StatisticsStore | None = None) -> None:
        """``store``: where catalog tables given as ``{"ref": name}`` are looked up (None: refs are refused)."""
        self.store = store

    def optimize(
        self, request: OptimizeInput, request_id: str | None = None, client_request_id: str | None = None
    ) -> dict[str, Any]:
        """Raises ``costmodel.PlanError`` or ``service.errors.InputError`` for input it cannot accept.

        ``request_id``: the answer's id (a new UUID when None); ``client_request_id``: the caller's own
        ``X-Request-ID``, echoed in the answer when given.
        """
        given = request.catalog
        by_name = add_analyzed_tables(given, _tables_read(request), self.store, bare_keys=request.sql is not None)
        used: list[tuple[str, StoredTable]] = []
        catalog, samples = resolve_catalog(by_name, self.store, used)  # stored statistics for {"ref": ...}
        request, engine = replace(request, catalog=catalog), partial(optimize_with_samples, samples=samples)
        if request.sql is not None:
            response = self._optimize_sql(request, engine)
        elif request.substrait is not None:
            response = self._optimize_substrait(request, engine)
        else:
            response = engine(request.plan, request.catalog, request.options)
        statistics = [used_statistics(name, stored, _resolved_by(name, given)) for name, stored in used]
        response["warnings"] = [*response.get("warnings", []), *filter(None, map(change_warning, statistics))]
        response["statistics"] = statistics
        ids = {"request_id": request_id or str(uuid.uuid4())}
        if client_request_id is not None:
            ids["client_request_id"] = client_request_id
        # the per-predicate view first: what a person reads; the full matrix stays in "decisions"
        return {**ids, "context": request.context, "summary": summarize(response), **response}

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
        return response

    def _optimize_substrait(
        self, request: OptimizeInput, engine: Callable[..., dict[str, Any]] = optimize_wire
    ) -> dict[str, Any]:
        """Substrait in, Substrait out; the plan must be the producer's plan before its own optimizer ran."""
        from service.substrait import SubstraitError, plan_to_substrait, substrait_to_plan

        assert request.substrait is not None  # the caller checked
        try:
            plan = substrait_to_plan(request.substrait, request.catalog, root="$.substrait")
            response = engine(plan, request.catalog, request.options)
            response["substrait"] = plan_to_substrait(response["plan"], request.substrait)
        except SubstraitError as exc:
            raise InputError(exc.code, exc.message, exc.path, exc.detail) from exc
        return response
