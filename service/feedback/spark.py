"""Read Spark's own row counts for a run: the SQL status store of the session, through py4j.

The status store (``sharedState().statusStore()``) keeps every SQL execution's final physical plan graph (after
adaptive execution) and its metric values, for any action including writes, with the UI off. ``observe`` tags the
executions a block of code starts (the ``spark.job.description`` local property of the calling thread, so other
threads' queries never mix in) and returns their merged graph; ``actual_rows`` maps it onto an answer's plan.

Example (a local session)::

    with observe(spark) as run:
        spark.sql(answer["sql"]).collect()
    report = actual_rows(spark, answer, run.graph())
    report.to_wire()  # {"nodes": [{"id": "n5", "rows_out": 180, "rows_in": 20000}, ...], "unmapped": {...}}
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from service.feedback.graph import ROWS_METRIC, SparkGraph, SparkNode, merge
from service.feedback.mapping import ActualRows, map_actuals, never_null_columns, walk

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_DESCRIPTION = "spark.job.description"
#: How long to wait for Spark's listener bus to deliver an execution's end (milliseconds).
LISTENER_WAIT_MS = 30_000


def _iterate(scala_seq: Any) -> Iterator[Any]:
    it = scala_seq.iterator()
    while it.hasNext():
        yield it.next()


def _rows(value: str | None) -> int | None:
    """A metric value as the store prints it ("1,234"; a size or timing metric has more text: not a count)."""
    if value is None:
        return None
    digits = value.replace(",", "").strip()
    return int(digits) if re.fullmatch(r"\d+", digits) else None


def graph_from_java(java_graph: Any, values: Mapping[int, str] | None = None) -> SparkGraph:
    """A ``SparkPlanGraph`` (py4j) as a ``SparkGraph``; ``values`` are the execution's metric values by id."""
    nodes = []
    for node in _iterate(java_graph.allNodes()):
        name = str(node.name())
        if name.startswith("WholeStageCodegen"):
            continue
        rows = None
        for metric in _iterate(node.metrics()):
            if str(metric.name()) == ROWS_METRIC and values is not None:
                rows = _rows(values.get(int(metric.accumulatorId())))
        nodes.append(SparkNode(int(node.id()), name, str(node.desc()), rows))
    edges = [(int(e.fromId()), int(e.toId())) for e in _iterate(java_graph.edges())]
    return SparkGraph.build(nodes, edges)


def plan_graph(spark: SparkSession, java_plan: Any) -> SparkGraph:
    """The graph of a physical plan that has not run (no counts): used to learn what a table's scan looks like."""
    jvm: Any = spark.sparkContext._jvm
    info = jvm.org.apache.spark.sql.execution.SparkPlanInfo.fromSparkPlan(java_plan)
    return graph_from_java(jvm.org.apache.spark.sql.execution.ui.SparkPlanGraph.apply(info))


def table_identities(spark: SparkSession, tables: set[str]) -> dict[str, str]:
    """For each table name the session resolves, what its scan reads (tables it cannot resolve are left out)."""
    found: dict[str, str] = {}
    for table in sorted(tables):
        try:
            plan = spark.table(table)._jdf.queryExecution().executedPlan()
        except Exception:  # noqa: BLE001 - a name the session does not know: that scan stays unmapped
            continue
        scans = plan_graph(spark, plan).scans()
        if len(scans) == 1:
            found[table] = scans[0].scan_identity
    return found


@dataclass
class ObservedRun:
    """The executions started inside one ``observe`` block."""

    spark: SparkSession
    tag: str
    execution_ids: list[int] = field(default_factory=list)

    def graph(self) -> SparkGraph:
        """The merged final plan graphs of the run's executions, with their row counts."""
        store = self.spark._jsparkSession.sharedState().statusStore()
        graphs = []
        for execution_id in self.execution_ids:
            values = {int(k): str(v) for k, v in _scala_map(store.executionMetrics(execution_id)).items()}
            graphs.append(graph_from_java(store.planGraph(execution_id), values))
        return merge(graphs)


def _scala_map(scala_map: Any) -> dict[Any, Any]:
    out = {}
    it = scala_map.iterator()
    while it.hasNext():
        pair = it.next()
        out[pair._1()] = pair._2()
    return out


@contextmanager
def observe(spark: SparkSession) -> Iterator[ObservedRun]:
    """Tag the executions the block starts on this thread; afterwards ``run.execution_ids`` lists them, finished.

    The thread's previous job description comes back when the block ends, whatever happens inside.
    """
    context = spark.sparkContext
    run = ObservedRun(spark, f"pushdown-feedback-{uuid.uuid4()}")
    previous = context.getLocalProperty(_DESCRIPTION)
    context.setLocalProperty(_DESCRIPTION, run.tag)
    try:
        yield run
    finally:
        context.setLocalProperty(_DESCRIPTION, previous)  # type: ignore[arg-type]
    context._jsc.sc().listenerBus().waitUntilEmpty(LISTENER_WAIT_MS)
    store = spark._jsparkSession.sharedState().statusStore()
    for execution in _iterate(store.executionsList()):
        if str(execution.description()) == run.tag:
            run.execution_ids.append(int(execution.executionId()))
    run.execution_ids.sort()


def actual_rows(
    spark: SparkSession, answer: Mapping[str, Any], graph: SparkGraph, catalog: Mapping[str, Any] | None = None
) -> ActualRows:
    """Spark's counts for the answer's rewritten plan (``answer["plan"]``) from a run's ``graph``.

    ``catalog``: the request's, when its column statistics may vouch that a join key holds no NULL.
    """
    plan = answer["plan"]
    tables = {str(n["table"]) for n in walk(plan) if n.get("op") == "scan" and n.get("table")}
    return map_actuals(plan, graph, table_identities(spark, tables), never_null_columns(catalog))
