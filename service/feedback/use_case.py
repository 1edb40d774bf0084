"""The feedback use cases: accept a runner's counts for a request, compare them with the estimates, learn from them.

``FeedbackService.receive`` checks the counts against the request's recorded answer (unknown request: 404;
a node id not in the answer's plan, a repeated id: 422 with the path; nothing is stored from a rejected body),
then stores them with the observations they teach, replacing an earlier post. ``compare`` puts estimated and
actual rows side by side with the q-error, for the history API and ``pushdown explain``. ``source_for`` builds
the estimator's feedback source for a new request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pushdown_client.feedback.mapping import walk
from service.errors import InputError
from service.feedback.functions import FunctionCostStore, check_functions
from service.feedback.learning import FeedbackSource, observations_from
from service.feedback.store import FeedbackStore
from service.history import HistoryRecorder
from service.statistics import StatisticsStore, resolve_catalog

logger = logging.getLogger(__name__)

#: How long a post waits for the answer's record still queued for the history's writer thread.
FLUSH_WAIT_S = 5.0


def q_error(estimated: float | None, actual: float | None) -> float | None:
    """max(e/a, a/e) with both floored at one row (a predicate estimated at 0.2 rows that kept none is exact).

    >>> q_error(50, 200), q_error(0, 0), q_error(None, 3)
    (4.0, 1.0, None)
    """
    if estimated is None or actual is None:
        return None
    e, a = max(float(estimated), 1.0), max(float(actual), 1.0)
    return round(max(e / a, a / e), 4)


def compare(response: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per answer node: estimated rows (the rewritten plan's cost table), actual rows and the q-error."""
    estimated = {str(n.get("id")): n for n in ((response.get("cost") or {}).get("after") or {}).get("nodes") or []}
    operators = {str(n.get("id")): str(n.get("op")) for n in walk(response.get("plan") or {})}
    rows: list[dict[str, Any]] = []
    for node in nodes:
        node_id = str(node["id"])
        est = estimated.get(node_id, {})
        rows.append(
            {
                "id": node_id,
                "operator": operators.get(node_id),
                "estimated_rows": est.get("rows_out"),
                "actual_rows": node["rows_out"],
                "q_error": q_error(est.get("rows_out"), node["rows_out"]),
                "estimated_rows_in": est.get("rows_in"),
                "actual_rows_in": node.get("rows_in"),
            }
        )
    return rows


class FeedbackService:
    """Feedback on the history's store; ``statistics`` resolves catalogs given by reference."""

    def __init__(self, history: HistoryRecorder, statistics: StatisticsStore | None = None) -> None:
        self.history = history
        self.statistics = statistics
        self.store = FeedbackStore(history.store) if history.store is not None else None
        self.function_costs = FunctionCostStore(history.store) if history.store is not None else None
        #: called with the tables whose observations a post replaced
        self.listeners: list[Callable[[list[str]], None]] = []

    def receive(
        self, request_id: str, nodes: Sequence[Mapping[str, Any]], functions: Sequence[Any] | None = None
    ) -> dict[str, Any]:
        """Store a runner's counts for ``request_id``, and what its functions cost per call (``functions``,
        service/feedback/functions.py); raises ``InputError`` (404, 422, 503) and stores nothing."""
        checked = check_functions(functions)
        if self.store is None or self.history.store is None:
            raise InputError("history_unavailable", "feedback needs the optimization history (it is disabled)")
        record = self.history.store.get(request_id)
        if record is None and self.history.flush(FLUSH_WAIT_S):  # the answer may still be queued for writing
            record = self.history.store.get(request_id)
        if record is None:
            raise InputError("not_found", f"no optimization {request_id!r}", "$.request_id")
        response = record["response"]
        known = [str(n.get("id")) for n in walk(response.get("plan") or {})]
        seen: set[str] = set()
        for i, node in enumerate(nodes):
            node_id = str(node["id"])
            if node_id not in known:
                raise InputError(
                    "unknown_node",
                    f"node {node_id!r} is not in the answer's plan; its nodes: {', '.join(known)}",
                    f"$.nodes[{i}].id",
                    {"id": node_id, "nodes": known},
                )
            if node_id in seen:
                raise InputError("duplicate_node", f"node {node_id!r} appears twice", f"$.nodes[{i}].id")
            seen.add(node_id)
        observations = self._observations(record, {str(n["id"]): n for n in nodes})
        clean = [{k: v for k, v in dict(n).items() if v is not None} for n in nodes]
        self.store.replace(request_id, clean, observations)
        learned = 0
        if self.function_costs is not None and (checked or functions is not None):
            learned = self.function_costs.replace(request_id, checked, record.get("pipeline"), record.get("task"))
        for listener in self.listeners:  # e.g. the request cache: answers that read these tables are stale
            listener(sorted({o.table for o in observations}))
        answer = {"request_id": request_id, "nodes": compare(response, clean), "observations": len(observations)}
        if functions is not None:
            answer["function_observations"] = learned
        return answer

    def learned_functions(self, names: list[str]) -> dict[str, dict[str, Any]]:
        """Per function name, the cost learned from earlier runs (none when the store is off or unreachable)."""
        if self.function_costs is None:
            return {}
        try:
            return self.function_costs.learned(names)
        except Exception as exc:  # noqa: BLE001 - an unreachable store must not fail /optimize
            logger.warning("learned function costs unavailable: %r", exc)
            return {}

    def for_record(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """A history record's feedback as estimated against actual rows per node (None without feedback); the
        record's drill-down tree after gets the actual rows and q-errors too."""
        from service.feedback.report import annotate_tree, node_rows

        stored = self.store.get(str(record["id"])) if self.store is not None else None
        if stored is None:
            return None
        rows = node_rows(record["response"], stored["nodes"])
        trees = record.get("trees")
        if isinstance(trees, dict) and isinstance(trees.get("after"), list):
            annotate_tree(trees["after"], rows)
        return {"received_at": stored["received_at"], "nodes": rows}

    def task_series(self, pipeline: str, task: str) -> list[dict[str, Any]]:
        """A pipeline task's runs with feedback, oldest first, with their worst and median q-error."""
        from service.feedback.report import task_series

        if self.store is None:
            raise InputError("history_unavailable", "feedback needs the optimization history (it is disabled)")
        return task_series(self.store.task_runs(pipeline, task))

    def _observations(self, record: Mapping[str, Any], actual: Mapping[str, Mapping[str, Any]]) -> list[Any]:
        """What the counts teach; nothing (logged) when the recorded request cannot be read again."""
        from costmodel import catalog_from_wire, plan_from_wire
        from costmodel.cost import column_infos

        request = record["request"]
        try:
            catalog, _ = resolve_catalog(request.get("catalog"), self.statistics)
            cat = catalog_from_wire(catalog)
            plan = plan_from_wire(record["response"]["plan"], cat)
        except Exception as exc:  # noqa: BLE001 - the counts are stored either way
            logger.warning("feedback for %s teaches nothing: %r", record.get("id"), exc)
            return []
        versions = table_versions(request.get("catalog"), self.statistics)
        return observations_from(
            plan, column_infos(plan, cat), actual, versions, record.get("pipeline"), record.get("task")
        )

    def source_for(
        self, catalog: Mapping[str, Any] | None, context: Mapping[str, Any] | None, fallback: Sequence[Any]
    ) -> FeedbackSource | None:
        """The feedback source for a request on ``catalog``'s tables; None without a store or observations."""
        if self.store is None:
            return None
        tables = list(((catalog or {}).get("tables") or {}).keys())
        context = context or {}
        pipeline, task = context.get("pipeline"), context.get("task")
        try:
            observations = self.store.observations(tables, pipeline, task)
        except Exception as exc:  # noqa: BLE001 - an unreachable store must not fail /optimize
            logger.warning("feedback unavailable for this request: %r", exc)
            return None
        if not observations:
            return None
        versions = table_versions(catalog, self.statistics)
        return FeedbackSource(observations, fallback, versions, pipeline, task)


def table_versions(catalog: Mapping[str, Any] | None, statistics: StatisticsStore | None) -> dict[str, str | None]:
    """Per table of a request catalog, the statistics version it used (tables given by ``ref``), lower case."""
    versions: dict[str, str | None] = {}
    for name, entry in ((catalog or {}).get("tables") or {}).items():
        if not isinstance(entry, dict) or "ref" not in entry or statistics is None:
            continue
        try:
            stored = statistics.get(entry["ref"], entry.get("version"))
        except Exception:  # noqa: BLE001 - no version known: row counts alone tell a change
            stored = None
        version = getattr(stored, "version", None)
        versions[name.lower()] = None if version is None else str(version)
    return versions
