"""Reading a run's counts out of Spark cheaply: the JSON copy equals a node-by-node read, only the block's own
executions are taken however old the session, a moved view is located again, and the send happens off the
caller's thread without anything queued being lost at exit."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pushdown_client.feedback.graph import ROWS_METRIC, SparkGraph, SparkNode
from pushdown_client.feedback.mapping import walk
from pushdown_client.feedback.spark import _iterate, _rows, actual_rows, observe
from service.client import PushdownClient
from service.optimize import OptimizeInput, OptimizeService
from service.settings import Settings
from service.spark_runner import run_sql
from tests.feedback.conftest import CATALOG, Tables, register

pytestmark = pytest.mark.slow
SQL = "SELECT s, count(*) AS n FROM fb_t WHERE b > 5 AND s LIKE 'x1%' GROUP BY s"
ROOT = Path(__file__).resolve().parents[2]


def read_node_by_node(spark: Any, execution_id: int) -> SparkGraph:
    """The reference: the status store's graph walked through py4j one node and one metric at a time."""
    store = spark._jsparkSession.sharedState().statusStore()
    values = {}
    it = store.executionMetrics(execution_id).iterator()
    while it.hasNext():
        pair = it.next()
        values[int(pair._1())] = str(pair._2())
    java_graph = store.planGraph(execution_id)
    nodes = []
    for node in _iterate(java_graph.allNodes()):
        if str(node.name()).startswith("WholeStageCodegen"):
            continue
        rows = None
        for metric in _iterate(node.metrics()):
            if str(metric.name()) == ROWS_METRIC:
                rows = _rows(values.get(int(metric.accumulatorId())))
        nodes.append(SparkNode(int(node.id()), str(node.name()), str(node.desc()), rows))
    edges = [(int(e.fromId()), int(e.toId())) for e in _iterate(java_graph.edges())]
    return SparkGraph.build(nodes, edges)


def test_the_json_copy_equals_a_node_by_node_read(spark: Any, tables: Tables) -> None:
    register(spark, tables.root)
    sql = "SELECT fb_t.b, count(*) FROM fb_t JOIN fb_u ON fb_t.a = fb_u.a WHERE fb_t.b > 5 GROUP BY fb_t.b"
    with observe(spark) as run:
        spark.sql(sql).collect()
    (execution_id,) = run.execution_ids
    copied = run.capture().graph()
    reference = read_node_by_node(spark, execution_id)
    assert copied.to_dict()["nodes"] and sorted(copied.to_dict()["nodes"], key=lambda n: n["id"]) == sorted(
        reference.to_dict()["nodes"], key=lambda n: n["id"]
    )
    assert sorted(copied.to_dict()["edges"]) == sorted(reference.to_dict()["edges"])
    assert any(n.rows for n in copied.nodes.values())


def test_only_the_blocks_own_executions_however_old_the_session(spark: Any, tables: Tables) -> None:
    register(spark, tables.root)
    for _ in range(40):  # an aged session: the block's executions are found from the newest backwards
        spark.sql("SELECT 1").collect()
    stop = threading.Event()

    def other_thread() -> None:
        while not stop.is_set():
            spark.sql("SELECT count(*) FROM fb_u").collect()

    worker = threading.Thread(target=other_thread)
    worker.start()
    try:
        with observe(spark) as run:
            spark.sql(SQL).collect()
            spark.sql("SELECT count(*) FROM fb_t WHERE b > 5").collect()
    finally:
        stop.set()
        worker.join()
    store = spark._jsparkSession.sharedState().statusStore()
    tagged = sorted(int(e.executionId()) for e in _iterate(store.executionsList()) if str(e.description()) == run.tag)
    assert len(run.execution_ids) == 2 and run.execution_ids == tagged


def test_a_view_moved_to_other_data_is_located_again(spark: Any, tables: Tables, tmp_path: Path) -> None:
    answer = OptimizeService().optimize(OptimizeInput(sql=SQL, catalog=CATALOG))
    (scan_id,) = [str(n["id"]) for n in walk(answer["plan"]) if n.get("op") == "scan"]
    counted = []
    for copy, rows in (("first", tables.t), ("second", tables.t[: len(tables.t) // 2])):
        spark.createDataFrame(rows, "a int, b int, s string").coalesce(1).write.parquet(str(tmp_path / copy))
        spark.read.parquet(str(tmp_path / copy)).createOrReplaceTempView("fb_t")
        with observe(spark) as run:
            spark.sql(answer["sql"]).collect()
        found = {n.id: n.rows_out for n in actual_rows(spark, answer, run.graph(), CATALOG).nodes}
        kept = sum(1 for r in rows if r[1] is not None and r[1] > 5 and r[2].startswith("x1"))
        counted.append((found.get(scan_id), kept))
    register(spark, tables.root)
    assert counted[0][0] == counted[0][1] and counted[1][0] == counted[1][1] and counted[0][1] != counted[1][1]


class HeldClient(PushdownClient):
    """A client whose feedback post waits until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.url = "http://held.invalid"
        self.release = threading.Event()
        self.posted: list[tuple[str, list[dict[str, Any]]]] = []

    def feedback(self, request_id: str, nodes: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.release.wait(60)
        self.posted.append((request_id, nodes))
        return {"request_id": request_id, "nodes": len(nodes)}


def test_the_action_returns_before_the_send(
    spark: Any, tables: Tables, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    register(spark, tables.root)
    client = HeldClient()
    run = run_sql(spark, SQL, client=PushdownClient(settings=make_settings(data_dir=tmp_path)), catalog=CATALOG)
    run.client = client  # the answer from in process, the feedback to the held "service"
    run.answer = {**run.answer, "request_id": "held-1"}
    rows = run.collect()  # returns although the post is held
    assert rows and run.sent is not None and not run.sent.done() and client.posted == []
    client.release.set()
    assert run.actual is not None and run.actual.nodes
    assert client.posted == [("held-1", [n.to_wire() for n in run.actual.nodes])]


def test_queued_sends_finish_before_the_interpreter_exits(tmp_path: Path) -> None:
    out = tmp_path / "sent.txt"
    script = textwrap.dedent(
        f"""
        import time
        from pushdown_client.feedback.runner import SentFeedback, feedback_thread
        from pushdown_client.feedback.mapping import ActualRows

        def send(i):
            def work():
                time.sleep(0.2)
                with open({str(out)!r}, "a") as f:
                    f.write(f"{{i}}\\n")
                return SentFeedback(ActualRows(), 0.2)
            return work

        for i in range(5):
            feedback_thread().submit(send(i))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert out.read_text().split() == ["0", "1", "2", "3", "4"]
