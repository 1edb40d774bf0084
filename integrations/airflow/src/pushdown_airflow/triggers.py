"""``PushdownOptimizeTrigger``: the ``/optimize`` call made from the triggerer, for the deferrable operator."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from pushdown_airflow.hooks import PushdownHook, PushdownServiceError
from pushdown_airflow.summary import summarize


class PushdownOptimizeTrigger(BaseTrigger):
    """Posts one request and fires one event: ``{"status": "success", "summary", "warnings"}`` or ``{"status": "error",
    "error"}``.

    The error event carries what ``PushdownServiceError`` needs (status, code, message, path; an unreachable
    service is the client's 503 ``unreachable``), so the operator fails the same way whether or not it deferred.
    """

    def __init__(self, conn_id: str, request: dict[str, Any], timeout: float) -> None:
        super().__init__()
        self.conn_id = conn_id
        self.request = request
        self.timeout = timeout

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {"conn_id": self.conn_id, "request": self.request, "timeout": self.timeout},
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        try:
            answer = await PushdownHook.optimize_async(self.conn_id, self.request, self.timeout)
        except PushdownServiceError as exc:
            error = {"status": exc.status, "code": exc.code, "message": exc.message, "path": exc.path}
            yield TriggerEvent({"status": "error", "error": error})
            return
        # The summary, not the whole answer: trigger events are stored in Airflow's database.
        yield TriggerEvent({"status": "success", "summary": summarize(answer), "warnings": answer.get("warnings", [])})
