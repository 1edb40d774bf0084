"""The in-process ``Transport`` of the Python client: the service's use cases called in the caller's process.

``pushdown_client`` installs without the service and imports nothing of it; a client without a URL is given this
transport (``service.client.PushdownClient()`` or ``service.client.in_process_client()``). Errors become
``PushdownError`` as the HTTP API would answer them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pushdown_client.client import PushdownError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from service.assembly import Services
    from service.settings import Settings


class InProcessService:
    """The service's use cases called directly (``pushdown_client.Transport``); errors translated to
    ``PushdownError`` as the API would. The stores open on the first call."""

    def __init__(self, settings: Settings | None = None, spark: SparkSession | None = None) -> None:
        """``settings``: default ``Settings()`` from the environment; ``spark``: default a session built from
        ``settings.spark_master`` on the first ``analyze``."""
        from service.settings import Settings

        self.settings = settings or Settings()
        self._spark = spark

    @cached_property
    def services(self) -> Services:
        """Assembled as the app's (``service.assembly``), without history, feedback or request cache."""
        from service.assembly import assemble

        return assemble(self.settings, history=False, cache=False, warn=False)

    @property
    def store(self) -> Any:
        return self.services.store

    @property
    def optimizer(self) -> Any:
        return self.services.optimizer

    def _call(self, fn: Callable[[], Any]) -> Any:
        from costmodel import PlanError
        from service.errors import InputError

        try:
            return fn()
        except InputError as exc:
            raise PushdownError(422, exc.code, exc.message, exc.path) from None
        except PlanError as exc:
            raise PushdownError(422, exc.code, exc.message, exc.path) from None

    def optimize(self, body: dict[str, Any]) -> Any:
        from pydantic import ValidationError

        from service.request import OptimizeRequest, validation_error

        def run() -> Any:
            try:
                request = OptimizeRequest.model_validate(body).to_input()
            except ValidationError as exc:
                raise validation_error(exc) from None
            from service.answer import for_caller

            answered = self.optimizer.answer(request)  # a summary is sent from the brief answer, as over HTTP
            return for_caller(answered.answer if request.detail == "full" else answered.brief, request.detail)

        return self._call(run)

    def analyze(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        from service.analyze import Analyzer
        from service.request import AnalyzeBody
        from service.statistics import check_name

        if self.store is None:
            raise PushdownError(503, "store_unavailable", "no statistics store is configured", "$")

        def spark() -> SparkSession:
            if self._spark is None:
                from service.analyze import spark_session

                self._spark = spark_session(self.settings.spark_master)
            return self._spark

        def run() -> dict[str, Any]:
            check_name(name, "$.name")
            request = AnalyzeBody.model_validate(body).to_request(name, self.settings)
            return Analyzer(self.store, spark).run(request)

        return self._call(run)

    def health(self) -> dict[str, Any]:
        from service import __version__

        return {"status": "ok", "version": __version__}

    def tables(self) -> list[dict[str, Any]]:
        if self.store is None:
            raise PushdownError(503, "store_unavailable", "no statistics store is configured", "$")
        return [t.summary() for t in self.store.tables()]

    def history(self, pipeline: str | None, task: str | None, limit: int) -> list[dict[str, Any]]:
        from service.history import Filters, HistoryStore

        store = HistoryStore.from_settings(self.settings)
        try:
            items, _total = store.list(Filters(pipeline=pipeline, task=task), limit=limit)
        finally:
            close = getattr(store, "close", None)
            if close is not None:
                close()
        return items
