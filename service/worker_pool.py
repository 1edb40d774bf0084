"""Heavy requests run in worker processes, so the server's event loop (and ``/healthz``) never waits for them.

A request thread shares the server's GIL and garbage collector with the event loop: measured, a 20,000-term
OR query made cyclic garbage that one collection freed in a single 1.1 s pause, and a 900 KB query paused the
process for up to 1.2 s; no switch interval helps against a collection or a long C call. In a process of its
own the same work cannot stall the server at all, and the time limit stops it for certain: the process is
killed (then replaced), whatever it was doing. Moving a request costs a pipe round trip and a spawn after each
kill, so only requests that look heavy go there, decided from the raw bytes before anything is parsed
(``service.request_weight``); the others keep running on threads (``service.bounded``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from costmodel.deadline import DeadlineExceeded, deadline_scope
from costmodel.errors import ServiceError

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from service.answered import Answered
    from service.optimize import OptimizeService
    from service.settings import Settings

logger = logging.getLogger(__name__)

#: After the deadline, how long a worker gets to notice it itself (and stay alive) before it is killed.
KILL_GRACE_S = 0.25


@dataclass(frozen=True)
class HeavyTask:
    """What a worker needs for one request: the body as received, the limits, the ids, the deadline."""

    raw: bytes
    max_json_depth: int
    max_sql_chars: int
    limit_s: float
    ids: tuple[str | None, str | None]
    deadline: float  # time.monotonic(), which is the same clock in every process of the machine


@dataclass(frozen=True)
class HeavyAnswer:
    """A worker's answer: the JSON as it is sent, and the parts of request and answer the history keeps."""

    payload: bytes
    answer: dict[str, Any]
    request: dict[str, Any]
    record: bytes | None = None  # the full answer's JSON, which the history keeps (None: ``payload`` is it)
    cache: str = "off"  # what the worker's request cache did

    def answered(self) -> Answered:
        """As the route's own work answers: the record's view of the answer, the JSON sent and kept."""
        from service.answered import Answered

        return Answered(self.answer, self.payload, self.record or self.payload, self.cache)


def record_view(answer: dict[str, Any]) -> dict[str, Any]:
    """The parts of an answer the history's record and the metrics read (not the cost tables or plans).

    >>> record_view({"request_id": "r", "plan": {}, "decisions": [{"action": "pushed", "reason": "x", "id": 1}]})
    {'request_id': 'r', 'decisions': [{'action': 'pushed', 'reason': 'x'}]}
    """
    view = {key: answer[key] for key in _RECORD_KEYS if key in answer}
    if isinstance(answer.get("decisions"), list):
        view["decisions"] = [
            {k: d.get(k) for k in ("action", "reason")} for d in answer["decisions"] if isinstance(d, dict)
        ]
    if isinstance(answer.get("estimates"), list):
        view["estimates"] = [{"source": e.get("source")} for e in answer["estimates"] if isinstance(e, dict)]
    return view


_RECORD_KEYS = ("request_id", "context", "cost", "model_version", "statistics_version", "statistics")


def request_view(request: Any) -> dict[str, Any]:
    """The parts of a request the history's record reads: its form, options and context."""
    view = {form: True for form in ("sql", "substrait", "plan") if getattr(request, form, None) is not None}
    return {**view, "options": request.options, "context": request.context}


# ---------------------------------------------------------------- the worker process


def _die_with_parent(parent: int) -> None:
    """Linux: the kernel kills this process when the server process dies, even by SIGKILL; and if the server
    died while this one was still starting, it goes at once."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(0)


def _build_optimizer(settings: Settings) -> OptimizeService:
    """The use case as the app assembles it (``service.assembly``): statistics store and feedback from the same
    settings; no request cache in a worker process."""
    from service.assembly import assemble

    return assemble(settings, cache=False, warn=False).optimizer


#: A worker's function: the engine it built and one task to its outcome.
Serve = Callable[["OptimizeService", HeavyTask], tuple[str, Any]]


def _serve_one(optimizer: OptimizeService, task: HeavyTask) -> tuple[str, Any]:
    """One request, as the route does it, within its deadline: ("ok", HeavyAnswer) or the error to raise."""
    from service.optimize import answer_body
    from service.request import parse_within_limits

    try:
        with deadline_scope(None, at=task.deadline):
            body = parse_within_limits(task.raw, task.max_json_depth, task.max_sql_chars)
            answered = answer_body(optimizer, body, task.ids)
    except DeadlineExceeded:  # before ServiceError, its base: the caller names the limit in the answer
        return "deadline", None
    except ServiceError as exc:
        return "error", exc.to_wire()
    except Exception:  # a bug: logged here, with its traceback; the caller gets the service's 500
        logger.exception("heavy request failed in its worker process")
        return "internal", None
    view = record_view(answered.answer)
    return "ok", HeavyAnswer(answered.payload, view, request_view(body), answered.record, answered.cache)


def _tune_garbage_collection() -> None:
    """As in the server process (``service.collector``): the imported engine frozen, full collections rare."""
    from service.collector import tune_collector

    tune_collector()


def _worker_main(conn: Connection, settings: Settings, serve: Serve, parent: int) -> None:
    """A worker process: answer tasks from ``conn`` with ``serve`` until the server closes it (or dies)."""
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C reaches the whole group; the server decides
    with contextlib.suppress(OSError):  # lower priority: the server process gets the CPU first
        os.nice(settings.heavy_worker_niceness)
    optimizer = _build_optimizer(settings)
    _tune_garbage_collection()
    conn.send(("ready", None))
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(serve(optimizer, task))


# ---------------------------------------------------------------- the server side


class _Worker:
    """One worker process and the server's end of its pipe."""

    def __init__(self, settings: Settings, serve: Serve) -> None:
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no threads or locks of the server's
        self.conn, child = context.Pipe()
        self.process: BaseProcess = context.Process(
            target=_worker_main, args=(child, settings, serve, os.getpid()), name="pushdown-heavy", daemon=True
        )
        self.process.start()
        child.close()
        self.ready = False

    def is_ready(self) -> bool:
        """True once the process has built its engine and said so (reads that message without waiting)."""
        with contextlib.suppress(EOFError, OSError):  # a dead process is never ready
            if not self.ready and self.conn.poll():
                self.ready = self.conn.recv() == ("ready", None)
        return self.ready

    def wait_ready(self, until: float) -> bool:
        """Until the process is ready (a new one imports the engine first) or ``until`` (monotonic) passes.

        A task is sent only to a ready process: one given up on while starting is not killed (its start would
        be wasted), and it has no stale task queued when the next request takes it.
        """
        while not self.is_ready():
            left = until - time.monotonic()
            if left <= 0 or not self.process.is_alive():
                return False
            self.conn.poll(min(left, 0.1))
        return True

    def call(self, task: HeavyTask) -> tuple[str, Any]:
        """Send ``task`` and wait for its outcome (on an I/O thread: pipes block)."""
        self.conn.send(task)
        outcome: tuple[str, Any] = self.conn.recv()
        return outcome

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.conn.close()


class WorkerPool:
    """Up to ``size`` worker processes, started by ``warm`` (with the service) and replaced when killed; one request
    per worker at a time."""

    def __init__(self, settings: Settings, size: int, serve: Serve | None = None) -> None:
        """``serve``: what a worker does with a task (a module-level function, as processes import it);
        by default what the route does."""
        self.settings = settings
        self.size = size
        self.serve: Serve = serve or _serve_one
        self.killed = 0
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._started = False
        self._slots: asyncio.Semaphore | None = None
        self._io = ThreadPoolExecutor(max_workers=size + 1, thread_name_prefix="pushdown-heavy-io")

    def started(self) -> bool:
        """Whether a worker has ever been ready. Until then heavy requests run on threads: the workers are
        started with the service (``warm``) and take a moment to import the engine; an app built without
        ``prestart_heavy_workers`` (tests, embedding) never starts them and keeps every request on threads."""
        if not self._started:
            with self._lock:
                self._started = any(worker.is_ready() for worker in self._idle)
        return self._started

    def warm(self) -> None:
        """Start every worker now (in the background: each imports the engine), so no request waits for that."""
        with self._lock:
            while len(self._idle) + len(self._busy) < self.size:
                self._idle.append(_Worker(self.settings, self.serve))

    async def run(self, task: HeavyTask) -> HeavyAnswer:
        """The task's answer from a worker; ``DeadlineExceeded`` at its deadline, the worker then killed."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.size)
        slots = self._slots
        loop = asyncio.get_running_loop()
        try:
            await asyncio.wait_for(slots.acquire(), max(0.0, task.deadline - time.monotonic()))
        except TimeoutError:
            raise DeadlineExceeded(task.limit_s) from None
        worker: _Worker | None = None
        try:
            worker = await loop.run_in_executor(self._io, self._take)
            if not await loop.run_in_executor(self._io, worker.wait_ready, task.deadline):
                if not worker.process.is_alive():
                    raise EOFError("the worker process ended while starting")
                raise DeadlineExceeded(task.limit_s)  # the worker is given back, still starting
            call = loop.run_in_executor(self._io, worker.call, task)
            wait = max(0.0, task.deadline - time.monotonic()) + KILL_GRACE_S
            kind, value = await asyncio.wait_for(call, wait)
        except (TimeoutError, asyncio.CancelledError) as exc:
            if worker is not None:
                self._discard(worker)
                worker = None
            if isinstance(exc, asyncio.CancelledError):
                raise
            logger.warning("heavy request's worker process killed at the time limit of %.1f s", task.limit_s)
            raise DeadlineExceeded(task.limit_s) from None
        except (EOFError, OSError) as exc:  # the worker died (killed from outside, out of memory)
            if worker is not None:
                self._discard(worker)
                worker = None
            raise RuntimeError("a worker process ended without answering") from exc
        finally:
            if worker is not None:
                self._give_back(worker)
            slots.release()
        return _outcome(kind, value, task.limit_s)

    def close(self) -> None:
        """Stop every worker (at shutdown: whatever they still compute has no one left to answer)."""
        with self._lock:
            self._closed = True
            workers = [*self._idle, *self._busy]
            self._idle.clear()
            self._busy.clear()
        for worker in workers:
            worker.kill()
        for worker in workers:
            worker.process.join(timeout=5)
        self._io.shutdown(wait=False, cancel_futures=True)

    def _take(self) -> _Worker:
        with self._lock:  # a ready one first, else the one started first
            ready = [w for w in self._idle if w.is_ready()]
            worker = ready[0] if ready else (self._idle[0] if self._idle else None)
            if worker is not None:
                self._idle.remove(worker)
        if worker is None or not worker.process.is_alive():
            if worker is not None:
                worker.kill()
                worker.process.join(timeout=5)
            worker = _Worker(self.settings, self.serve)
        with self._lock:
            self._busy.add(worker)
        return worker

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
            self._idle.append(worker)

    def _discard(self, worker: _Worker) -> None:
        """Kill ``worker`` and start its replacement in the background, so the next request finds it ready."""
        self.killed += 1
        with self._lock:
            self._busy.discard(worker)
        worker.kill()
        with contextlib.suppress(RuntimeError):  # the pool is closed: no replacement
            self._io.submit(self._replace, worker)

    def _replace(self, killed: _Worker) -> None:
        killed.process.join(timeout=5)  # reap it, so no zombie is left behind
        with self._lock:
            if self._closed or len(self._idle) + len(self._busy) >= self.size:
                return
        worker = _Worker(self.settings, self.serve)
        with self._lock:
            if self._closed:
                worker.kill()
            else:
                self._idle.append(worker)


def _outcome(kind: str, value: Any, limit_s: float) -> HeavyAnswer:
    if kind == "ok":
        answer: HeavyAnswer = value
        return answer
    if kind == "error":
        raise ServiceError(value["error"], value["message"], value.get("path", "$"), value.get("detail"))
    if kind == "deadline":
        raise DeadlineExceeded(limit_s)
    raise RuntimeError("the heavy request failed in its worker process (see its log)")
