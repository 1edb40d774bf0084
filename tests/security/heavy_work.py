"""What a test's worker process does with a task, chosen by the task's body (worker functions must be importable)."""

from __future__ import annotations

import os
from typing import Any

from service.optimize import OptimizeService
from service.worker_pool import HeavyAnswer, HeavyTask


def by_body(optimizer: OptimizeService, task: HeavyTask) -> tuple[str, Any]:
    """b"spin": loop forever, never checking the deadline; b"exit": the process dies; else answer its pid."""
    if task.raw == b"spin":
        while True:
            pass
    if task.raw == b"exit":
        os._exit(3)
    return "ok", HeavyAnswer(str(os.getpid()).encode(), {}, {})
