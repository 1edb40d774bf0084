"""Close the loop after a run: copy Spark's counts out, then map and send them off the caller's thread.

What the caller waits for is only what needs Spark: Spark's listener bus catching up, and the run's plan graphs
copied out of the JVM as JSON (a few py4j calls, ``pushdown_client.feedback.spark``). Mapping the counts onto
the answer's plan and ``POST /feedback/{request_id}`` happen on one background thread (``FeedbackThread``), in
the order the runs ended, so the action returns at once. Nothing queued is lost at exit: the thread is a
``concurrent.futures`` worker, which Python lets finish its queue before the interpreter (and PySpark's own
exit hooks) shut down; nothing it does needs Spark, so a ``spark.stop()`` meanwhile does not matter either.

``run_and_report`` is the smallest runner: it runs the answer's Spark SQL (``answer["spark"]["sql"]`` under
``answer["spark"]["conf"]``, else ``answer["sql"]``) on the caller's session and sends the counts::

    answer = httpx.post(f"{url}/optimize", json=request).json()
    rows, report = run_and_report(spark, answer, http_sender(url), catalog=request["catalog"])
    report.blocking_s   # what feedback cost the caller
    report.result()     # waits for the send: what was counted and sent, and what that took

A runner of its own wraps its action in ``observed(spark, answer)`` and then calls ``start_feedback``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pushdown_client.client import PushdownClient
from pushdown_client.dataframe_expr import UDF_PREFIX as DATAFRAME_UDF_PREFIX
from pushdown_client.feedback.graph import SparkGraph, TableSource
from pushdown_client.feedback.mapping import ActualRows, map_actuals, never_null_columns, walk
from pushdown_client.feedback.spark import ObservedRun, needs_preparing, observe, prepare, table_identities
from pushdown_client.spark_runner import session_settings

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import DataFrame, SparkSession

Sender = Callable[[str, dict[str, Any]], Any]
T = TypeVar("T")
#: how long ``FeedbackThread.flush`` and ``RunReport.result`` wait by default (seconds)
WAIT_S = 60.0


@dataclass(frozen=True)
class SentFeedback:
    """What the background thread mapped and sent for one run, and how long that took it."""

    actual: ActualRows
    work_s: float


class FeedbackThread:
    """One worker thread that runs what it is given in the order it was queued."""

    def __init__(self, name: str = "pushdown-feedback") -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._pending: set[Future[Any]] = set()
        self._lock = threading.Lock()

    def submit(self, work: Callable[[], T]) -> Future[T]:
        future = self._executor.submit(work)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._forget)
        return future

    def flush(self, timeout: float = WAIT_S) -> bool:
        """Wait until everything queued so far is sent (or failed); False when ``timeout`` ran out first."""
        deadline = time.monotonic() + timeout
        with self._lock:
            pending = list(self._pending)
        for future in pending:
            try:
                future.result(timeout=max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                return False
            except Exception:  # noqa: BLE001, S112 - a failed send was logged where it failed
                continue
        return True

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._pending.discard(future)


_THREADS: dict[str, FeedbackThread] = {}
_THREAD_LOCK = threading.Lock()


def feedback_thread(name: str = "pushdown-feedback") -> FeedbackThread:
    """The process's feedback thread (made on first use); ``-prepare``: the one that prepares while actions run."""
    with _THREAD_LOCK:
        if name not in _THREADS:
            _THREADS[name] = FeedbackThread(name)
        return _THREADS[name]


@contextmanager
def observed(spark: SparkSession, answer: Mapping[str, Any]) -> Iterator[ObservedRun]:
    """``observe`` the block, preparing the first feedback of the process (``spark.prepare``) while it runs.

    Preparing has its own thread, so it never waits behind earlier sends; the block's end waits for it (it is
    usually done long before), because the feedback would otherwise do the same work again.
    """
    tables = tables_of(answer)
    preparing = (
        feedback_thread("pushdown-feedback-prepare").submit(lambda: prepare(spark, tables))
        if needs_preparing(spark, tables)
        else None
    )
    with observe(spark) as run:
        yield run
    if preparing is not None:
        with contextlib.suppress(Exception):  # whatever failed is done again, or fails, in start_feedback
            preparing.result(timeout=WAIT_S)


def tables_of(answer: Mapping[str, Any]) -> set[str]:
    """The tables the answer's plan scans."""
    return {str(n["table"]) for n in walk(answer["plan"]) if n.get("op") == "scan" and n.get("table")}


def flush_feedback(timeout: float = WAIT_S) -> bool:
    """Wait until every run's feedback queued so far is sent; False when ``timeout`` ran out first."""
    return feedback_thread().flush(timeout)


def http_sender(base_url: str, token: str | None = None, timeout: float = 30.0) -> Sender:
    """Posts to ``{base_url}/feedback/{request_id}`` with the client (standard library); raises ``PushdownError``."""
    client = PushdownClient(base_url, token=token, timeout=timeout)
    return lambda request_id, body: client.feedback(request_id, body["nodes"], body.get("functions"))


def start_feedback(
    spark: SparkSession,
    answer: Mapping[str, Any],
    run: ObservedRun,
    send: Sender | None,
    catalog: Mapping[str, Any] | None = None,
) -> Future[SentFeedback]:
    """Copy what an ``observe`` block ran out of Spark now; map it and send it on the feedback thread.

    The future fails when the send does (the caller decides whether to log or raise).
    """
    captured = run.capture()
    graph = captured.graph()
    plan = answer["plan"]
    identities = table_identities(spark, tables_of(answer), graph)
    never_null = never_null_columns(catalog)
    request_id = str(answer["request_id"]) if "request_id" in answer else None
    functions = udf_costs(spark, answer, captured.executions)
    return feedback_thread().submit(
        lambda: _map_and_send(plan, graph, identities, never_null, request_id, send, functions)
    )


def udf_costs(spark: SparkSession, answer: Mapping[str, Any], executions: Any) -> list[dict[str, Any]]:
    """What the answer's Python UDFs cost per call in the run (``python_udfs``); none without a calibration of the
    session (``pushdown_client.calibration``) to convert seconds to comparisons."""
    from pushdown_client.calibration import known_calibration
    from pushdown_client.feedback.python_udfs import function_observations, python_evaluations

    calibration = known_calibration(spark)
    names = [str(c.get("name")) for c in answer.get("function_costs") or []]
    if calibration is None or not names:
        return []
    found = python_evaluations(executions)
    aliases = {n.lower().removeprefix(DATAFRAME_UDF_PREFIX): n for n in names if n.startswith(DATAFRAME_UDF_PREFIX)}
    measured = {
        str(c["name"]): float(c["cost"]) * calibration.unit_s
        for c in answer.get("function_costs") or []
        if str(c.get("source", "")).startswith(("measured", "learned")) and isinstance(c.get("cost"), (int, float))
    }
    return function_observations(
        found, calibration.unit_s, calibration.python_row_s, names, calibration.python_fixed_s, aliases, measured
    )


def _map_and_send(
    plan: Mapping[str, Any],
    graph: SparkGraph,
    identities: Mapping[str, TableSource],
    never_null: Mapping[str, frozenset[str]],
    request_id: str | None,
    send: Sender | None,
    functions: list[dict[str, Any]] | None = None,
) -> SentFeedback:
    started = time.perf_counter()
    actual = map_actuals(plan, graph, identities, never_null)
    if send is not None and request_id is not None and (actual.nodes or functions):
        body: dict[str, Any] = {"nodes": [node.to_wire() for node in actual.nodes]}
        if functions:
            body["functions"] = functions
        send(request_id, body)
    return SentFeedback(actual, time.perf_counter() - started)


def send_feedback(
    spark: SparkSession,
    answer: Mapping[str, Any],
    run: ObservedRun,
    send: Sender | None,
    catalog: Mapping[str, Any] | None = None,
) -> ActualRows:
    """``start_feedback`` and wait for it: what was counted (raises when the send failed)."""
    return start_feedback(spark, answer, run, send, catalog).result(timeout=WAIT_S).actual


@dataclass(frozen=True)
class RunReport:
    """What one run cost: the query, and what feedback held the caller up (listener, copying the graphs)."""

    query_s: float
    blocking_s: float
    sent: Future[SentFeedback]

    def result(self, timeout: float = WAIT_S) -> SentFeedback:
        """Wait for the background part (mapping and sending); raises what the send raised."""
        return self.sent.result(timeout=timeout)


def run_and_report(
    spark: SparkSession,
    answer: Mapping[str, Any],
    send: Sender | None,
    catalog: Mapping[str, Any] | None = None,
    action: Callable[[DataFrame], Any] = lambda frame: frame.collect(),
) -> tuple[Any, RunReport]:
    """Run the answer (``action`` on its DataFrame: a collect by default, or a write), then send its counts.

    ``RunReport.blocking_s`` counts from the action's end until this returns (waiting for Spark's listener
    included); the mapping and the send go on in the background (``report.result()`` waits for them).
    """
    found = answer.get("spark")
    spark_part: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    sql = str(spark_part.get("sql") or answer["sql"])
    with session_settings(spark, dict(spark_part.get("conf") or {})):
        started = time.perf_counter()
        with observed(spark, answer) as run:
            query_started = time.perf_counter()
            result = action(spark.sql(sql))
            ran = time.perf_counter()
    sent = start_feedback(spark, answer, run, send, catalog)
    done = time.perf_counter()
    # feedback's cost to the caller: tagging before the action, the listener wait and the copy after it
    return result, RunReport(ran - query_started, (query_started - started) + (done - ran), sent)
