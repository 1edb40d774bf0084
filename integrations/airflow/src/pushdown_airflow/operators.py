"""``PushdownOptimizeOperator``: ask the service where a query's filters go, and hand the rewrite downstream.

Example::

    optimize = PushdownOptimizeOperator(
        task_id="optimize",
        sql="SELECT ... FROM orders o JOIN customers c ON ... WHERE o.amount > 100",
        catalog={"tables": {"orders": {"ref": "orders"}, "customers": {"ref": "customers"}}},
    )
    run = SparkSqlOperator(task_id="run", sql="{{ ti.xcom_pull('optimize')['sql'] }}")

The task's return value (XCom ``return_value``) is a small summary, not the whole answer: see
``pushdown_airflow.summary.summarize``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from pushdown_airflow.hooks import DEFAULT_TIMEOUT_SECONDS, PushdownHook, PushdownServiceError
from pushdown_airflow.summary import summarize
from pushdown_airflow.triggers import PushdownOptimizeTrigger


def failure(exc: PushdownServiceError) -> Exception:
    """A 4xx fails the task at once (the request is wrong: retrying cannot help); anything else may retry."""
    return AirflowFailException(str(exc)) if exc.is_client_error else exc


def default_context(task: BaseOperator, run_context: Mapping[str, Any]) -> dict[str, str]:
    """How the dashboard groups a call made by ``task``: its DAG, task and run ids."""
    return {"pipeline": task.dag_id, "task": task.task_id, "run": str(run_context.get("run_id", ""))}


def json_field(name: str, value: Any) -> dict[str, Any] | None:
    """A templated dict field may arrive as JSON text (``"{{ ... | tojson }}"``); parse it, or say which field."""
    if value is None or isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError as exc:
            raise AirflowFailException(f"{name} is not valid JSON: {exc}") from None
        if isinstance(parsed, dict):
            return parsed
    raise AirflowFailException(f"{name} must be an object (a dict or its JSON text), not {type(value).__name__}")


class PushdownOptimizeOperator(BaseOperator):
    """Optimizes ``sql`` (or a wire-format ``plan``) with the pushdown service; returns ``summarize(answer)``.

    :param sql: the query (templated; a path ending in ``.sql`` is read as a template file).
    :param plan: a plan in the service's wire format instead of SQL (templated).
    :param catalog: tables, columns and statistics, or ``{"ref": name}`` per analyzed table (templated).
    :param context: how the dashboard groups this run; defaults to the DAG, task and run ids (templated).
    :param dialect: the SQL dialect of ``sql`` and of the rewritten SQL.
    :param options: ``{"mode": "cost" | "always" | "never", ...}``.
    :param deferrable: wait for the answer in the triggerer instead of holding a worker slot.
    A 4xx answer fails the task without retries (the request is wrong); a 5xx or a network error may retry.
    """

    template_fields: Sequence[str] = ("sql", "plan", "catalog", "context")
    template_ext: Sequence[str] = (".sql",)
    template_fields_renderers = {"sql": "sql", "plan": "json", "catalog": "json", "context": "json"}
    ui_color = "#e8f0fe"

    def __init__(
        self,
        *,
        sql: str | None = None,
        plan: dict[str, Any] | str | None = None,
        catalog: dict[str, Any] | str | None = None,
        context: dict[str, str] | None = None,
        dialect: str = "spark",
        options: dict[str, Any] | None = None,
        pushdown_conn_id: str = PushdownHook.default_conn_name,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        deferrable: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if (sql is None) == (plan is None):
            raise ValueError(f"{self.task_id}: give exactly one of sql and plan")
        self.sql = sql
        self.plan = plan
        self.catalog = catalog
        self.context = context
        self.dialect = dialect
        self.options = options
        self.pushdown_conn_id = pushdown_conn_id
        self.timeout = timeout
        self.deferrable = deferrable

    def build_request(self, run_context: Mapping[str, Any]) -> dict[str, Any]:
        """The ``/optimize`` body, after templating; ``context`` defaults to this run's ids."""
        request: dict[str, Any] = {"dialect": self.dialect}
        if self.sql is not None:
            request["sql"] = self.sql
        else:
            request["plan"] = json_field("plan", self.plan)
        catalog = json_field("catalog", self.catalog)
        if catalog is not None:
            request["catalog"] = catalog
        if self.options:
            request["options"] = self.options
        request["context"] = json_field("context", self.context) or default_context(self, run_context)
        return request

    def execute(self, context: Any) -> dict[str, Any] | None:
        request = self.build_request(context)
        if self.deferrable:
            self.defer(
                trigger=PushdownOptimizeTrigger(self.pushdown_conn_id, request, self.timeout),
                method_name="execute_complete",
            )
        try:
            answer = PushdownHook(self.pushdown_conn_id, timeout=self.timeout).optimize(request)
        except PushdownServiceError as exc:
            raise self._failure(exc) from None
        return self._finish(summarize(answer), answer.get("warnings", []))

    def execute_complete(self, context: Any, event: dict[str, Any]) -> dict[str, Any]:
        """Resumes after the trigger: its event carries the summary and warnings, or the service's error."""
        if event.get("status") != "success":
            raise self._failure(PushdownServiceError(**event["error"]))
        return self._finish(event["summary"], event["warnings"])

    def _failure(self, exc: PushdownServiceError) -> Exception:
        return failure(exc)

    def _finish(self, summary: dict[str, Any], warnings: list[Any]) -> dict[str, Any]:
        self.log.info(
            "pushdown request %s: cost %s -> %s (savings %.1f%% against rule-based pushdown), decisions %s",
            summary["request_id"],
            summary["cost_before"],
            summary["cost_after"],
            100 * (summary["savings"] or 0.0),
            summary["decisions"],
        )
        for warning in warnings:
            self.log.warning("pushdown: %s", warning)
        return summary
