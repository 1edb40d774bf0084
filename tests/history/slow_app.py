"""The real app, with requests whose ``context.task`` is ``slow`` taking ``PUSHDOWN_TEST_SLOW_S`` seconds longer
(the engine's work, in the worker thread), so a test can send SIGTERM while one is in flight.

    uvicorn --factory tests.history.slow_app:create_app
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from api.app import create_app as create_real_app
from service.answered import Answered
from service.optimize import OptimizeInput, OptimizeService


class SlowOptimizer:
    def __init__(self, inner: OptimizeService, delay_s: float) -> None:
        self.inner = inner
        self.delay_s = delay_s

    def optimize(self, body: OptimizeInput, *args: Any, **kwargs: Any) -> dict[str, Any]:
        if (body.context or {}).get("task") == "slow":
            time.sleep(self.delay_s)
        return self.inner.optimize(body, *args, **kwargs)

    def read_body(self, raw: bytes, parse: Callable[[bytes], OptimizeInput | None]) -> OptimizeInput | None:
        return self.inner.read_body(raw, parse)

    def cached(self, body: OptimizeInput, *args: Any, **kwargs: Any) -> Answered | None:
        if (body.context or {}).get("task") == "slow":
            return None  # always computed, so always slow
        return self.inner.cached(body, *args, **kwargs)

    def answer(self, body: OptimizeInput, *args: Any, **kwargs: Any) -> Answered:
        if (body.context or {}).get("task") == "slow":
            time.sleep(self.delay_s)
        return self.inner.answer(body, *args, **kwargs)


def create_app() -> FastAPI:
    app = create_real_app()
    app.state.optimizer = SlowOptimizer(app.state.optimizer, float(os.environ.get("PUSHDOWN_TEST_SLOW_S", "0")))
    return app
