"""The smallest runner that closes the loop: run an answer on Spark, read what ran, send the counts back.

Until the Spark runner of the client module takes this over, ``run_and_report`` runs the answer's Spark SQL
(``answer["spark"]["sql"]`` under ``answer["spark"]["conf"]`` when the answer has them, else ``answer["sql"]``) on
the caller's session, with the caller's settings back as they were afterwards, then maps Spark's counts onto the
answer's plan (``service.feedback.spark``) and posts them to ``/feedback/{request_id}``.

Example::

    answer = httpx.post(f"{url}/optimize", json=request).json()
    rows, report = run_and_report(spark, answer, http_sender(url), catalog=request["catalog"])

A runner of its own wraps its action in ``observe(spark)`` and then calls ``send_feedback``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from service.feedback.mapping import ActualRows
from service.feedback.spark import ObservedRun, actual_rows, observe

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import DataFrame, SparkSession

Sender = Callable[[str, dict[str, Any]], Any]


@dataclass(frozen=True)
class RunReport:
    """What the run counted, and what it cost: the query and the feedback (reading, mapping, sending)."""

    actual: ActualRows
    query_s: float
    feedback_s: float


def http_sender(base_url: str, token: str | None = None, timeout: float = 30.0) -> Sender:
    """Posts to ``{base_url}/feedback/{request_id}``; raises on a non-2xx answer."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}

    def send(request_id: str, body: dict[str, Any]) -> Any:
        response = httpx.post(f"{base_url}/feedback/{request_id}", json=body, headers=headers, timeout=timeout)
        response.raise_for_status()
        return response.json()

    return send


@contextmanager
def session_conf(spark: SparkSession, conf: Mapping[str, str]) -> Iterator[None]:
    """``conf`` in force inside the block; every key back to its previous value (or unset) afterwards."""
    previous = {key: spark.conf.get(key, None) for key in conf}
    try:
        for key, value in conf.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, old in previous.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


def run_and_report(
    spark: SparkSession,
    answer: Mapping[str, Any],
    send: Sender | None,
    catalog: Mapping[str, Any] | None = None,
    action: Callable[[DataFrame], Any] = lambda frame: frame.collect(),
) -> tuple[Any, RunReport]:
    """Run the answer (``action`` on its DataFrame: a collect by default, or a write), then send its counts."""
    found = answer.get("spark")
    spark_part: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    sql = str(spark_part.get("sql") or answer["sql"])
    with session_conf(spark, dict(spark_part.get("conf") or {})), observe(spark) as run:
        started = time.perf_counter()
        result = action(spark.sql(sql))
        ran = time.perf_counter()
    # feedback's cost: waiting for Spark's listener, reading the plan graph, mapping, sending
    actual = send_feedback(spark, answer, run, send, catalog)
    return result, RunReport(actual, ran - started, time.perf_counter() - ran)


def send_feedback(
    spark: SparkSession,
    answer: Mapping[str, Any],
    run: ObservedRun,
    send: Sender | None,
    catalog: Mapping[str, Any] | None = None,
) -> ActualRows:
    """Map what an ``observe`` block ran onto the answer and send the counts (any runner can call this)."""
    actual = actual_rows(spark, answer, run.graph(), catalog)
    if send is not None and actual.nodes:
        send(str(answer["request_id"]), {"nodes": [node.to_wire() for node in actual.nodes]})
    return actual
