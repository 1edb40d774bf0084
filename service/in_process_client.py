"""What ``PushdownClient()`` without a URL runs: the service's use cases in this process.

It lives with the service, not in the client's distribution (``pushdown_client``), which installs without it;
errors become ``PushdownError`` as the HTTP API would answer them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pushdown_client.client import PushdownError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from service.settings import Settings


class InProcessService:
    """The service's use cases called directly; errors translated to ``PushdownError`` as the API would."""

    def __init__(self, settings: Settings | None, spark: SparkSession | None) -> None:
        from service.optimize import OptimizeService
        from service.settings import Settings
        from service.statistics import StatisticsStore

        self.settings = settings or Settings()
        try:
            self.store: Any = StatisticsStore.from_settings(self.settings)
        except ValueError:
            self.store = None
        self.optimizer = OptimizeService(self.store)
        self._spark = spark

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

        from api.models import OptimizeRequest, validation_error

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
        from api.tables import AnalyzeBody
        from service.analyze import Analyzer
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
