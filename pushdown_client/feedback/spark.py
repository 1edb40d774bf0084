"""Read Spark's own row counts for a run: the SQL status store of the session, in a few py4j calls.

The status store (``sharedState().statusStore()``) keeps every SQL execution's final physical plan graph (after
adaptive execution) and its metric values, for any action including writes, with the UI off. ``observe`` tags the
executions a block of code starts (the ``spark.job.description`` local property of the calling thread, so other
threads' queries never mix in); ``run.capture()`` copies their graphs out of the JVM; ``actual_rows`` maps them onto
an answer's plan.

Why it is written this way: every py4j call is a round trip to the JVM (0.1-1 ms, more on a busy machine), and a
plan graph walked node by node and metric by metric costs thousands of them. So the JVM serializes each graph and
its metric values to JSON itself (Spark's own Jackson, with its Scala module: two calls per execution), the
executions of the block are found from the newest backwards (not by listing the whole store, which grows with the
session's age), and what a table's scan looks like is remembered per session.

Example (a local session)::

    with observe(spark) as run:
        spark.sql(answer["sql"]).collect()
    report = actual_rows(spark, answer, run.capture().graph())
    report.to_wire()  # {"nodes": [{"id": "n5", "rows_out": 180, "rows_in": 20000}, ...], "unmapped": {...}}
"""

from __future__ import annotations

import json
import re
import threading
import uuid
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pushdown_client.feedback.graph import ROWS_METRIC, SparkGraph, SparkNode, TableSource, merge
from pushdown_client.feedback.mapping import ActualRows, map_actuals, never_null_columns, walk

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_DESCRIPTION = "spark.job.description"
#: How long to wait for Spark's listener bus to deliver an execution's end (milliseconds).
LISTENER_WAIT_MS = 30_000
#: How many executions one py4j call lists when looking backwards for the block's own (first, then each time).
_FIRST_CHUNK, _CHUNK = 3, 16


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


# ---------------------------------------------------------------- JSON out of the JVM

_MAPPERS: dict[int, Any] = {}
_MAPPERS_LOCK = threading.Lock()


def _json_mapper(spark: SparkSession) -> Any:
    """Spark's Jackson ``ObjectMapper`` with the Scala module (it serializes Scala case classes and collections).

    One per JVM gateway: made once, reused by every thread.
    """
    gateway = spark.sparkContext._gateway
    with _MAPPERS_LOCK:
        mapper = _MAPPERS.get(id(gateway))
        if mapper is None:
            jvm: Any = spark.sparkContext._jvm
            scala_module = getattr(getattr(jvm.com.fasterxml.jackson.module.scala, "DefaultScalaModule$"), "MODULE$")
            mapper = jvm.com.fasterxml.jackson.databind.ObjectMapper().registerModule(scala_module)
            _MAPPERS[id(gateway)] = mapper
        return mapper


def graph_from_json(graph: Mapping[str, Any], values: Mapping[str, str] | None = None) -> SparkGraph:
    """A ``SparkPlanGraph`` as Jackson wrote it, with the execution's metric values by accumulator id.

    Whole-stage-codegen clusters (nodes holding ``nodes``) are opened: their operators are the graph's nodes.

    >>> g = graph_from_json({"nodes": [{"id": 1, "name": "WholeStageCodegen (1)", "desc": "", "metrics": [],
    ...     "nodes": [{"id": 2, "name": "Filter", "desc": "Filter (a#1 > 5)",
    ...     "metrics": [{"name": "number of output rows", "accumulatorId": 7}]}]},
    ...     {"id": 3, "name": "Scan parquet ", "desc": "FileScan parquet [a#1]", "metrics": []}],
    ...     "edges": [{"fromId": 3, "toId": 2}]}, {"7": "1,204"})
    >>> g.node(2).rows, g.inputs(2), sorted(g.nodes)
    (1204, (3,), [2, 3])
    """
    nodes: list[SparkNode] = []
    stack = list(graph.get("nodes") or [])
    while stack:
        node = stack.pop()
        if "nodes" in node:  # a cluster: its members are the operators
            stack.extend(node["nodes"] or [])
            continue
        rows = None
        for metric in node.get("metrics") or []:
            if metric.get("name") == ROWS_METRIC and values is not None:
                rows = _rows(values.get(str(metric.get("accumulatorId"))))
        nodes.append(SparkNode(int(node["id"]), str(node.get("name")), str(node.get("desc")), rows))
    edges = [(int(e["fromId"]), int(e["toId"])) for e in graph.get("edges") or []]
    return SparkGraph.build(sorted(nodes, key=lambda n: n.id), edges)


def plan_graph(spark: SparkSession, java_plan: Any) -> SparkGraph:
    """The graph of a physical plan that has not run (no counts): used to learn what a table's scan looks like."""
    jvm: Any = spark.sparkContext._jvm
    info = jvm.org.apache.spark.sql.execution.SparkPlanInfo.fromSparkPlan(java_plan)
    java_graph = jvm.org.apache.spark.sql.execution.ui.SparkPlanGraph.apply(info)
    mapper = _json_mapper(spark)
    nodes, edges = mapper.writeValueAsString(java_graph.nodes()), mapper.writeValueAsString(java_graph.edges())
    return graph_from_json({"nodes": json.loads(nodes), "edges": json.loads(edges)})


# ---------------------------------------------------------------- where each table's scan is

#: per session: table name -> what its scan reads
_IDENTITIES: weakref.WeakKeyDictionary[Any, dict[str, TableSource]] = weakref.WeakKeyDictionary()


def table_identities(spark: SparkSession, tables: set[str], graph: SparkGraph | None = None) -> dict[str, TableSource]:
    """For each table name the session resolves, what its scan reads (tables it cannot resolve are left out).

    Planning ``spark.table(name)`` to find out costs tens of milliseconds, so the answer is remembered per
    session; a remembered identity that ``graph`` (the run's plan) does not scan is looked up again, since a view
    may have been replaced since.
    """
    known = _IDENTITIES.setdefault(spark, {})
    scans = graph.scans() if graph is not None else []
    found: dict[str, TableSource] = {}
    for table in sorted(tables):
        remembered = known.get(table)
        scanned = remembered is not None and any(remembered.reads(s) for s in scans)
        identity = remembered if remembered is not None and scanned else _locate(spark, table)
        if identity is not None:
            found[table] = known[table] = identity
    return found


def _locate(spark: SparkSession, table: str) -> TableSource | None:
    try:
        plan = spark.table(table)._jdf.queryExecution().executedPlan()
    except Exception:  # noqa: BLE001 - a name the session does not know: that scan stays unmapped
        return None
    scans = plan_graph(spark, plan).scans()
    return TableSource.of(scans[0]) if len(scans) == 1 else None


_WARM: set[int] = set()


def needs_preparing(spark: SparkSession, tables: set[str]) -> bool:
    """Whether ``prepare`` has work left: a table never located in this session, or Jackson not warmed yet."""
    known = _IDENTITIES.get(spark) or {}
    return id(spark.sparkContext._gateway) not in _WARM or any(t not in known for t in tables)


def prepare(spark: SparkSession, tables: set[str]) -> None:
    """What a process's first feedback would otherwise do after its action, done while the action runs.

    Locating each table (planning ``spark.table``) and Jackson's first serializations (class loading, the
    Scala module's introspection) cost a few hundred milliseconds once per process, which is every run of a
    pipeline whose runs are separate processes.
    """
    mapper = _json_mapper(spark)
    gateway = id(spark.sparkContext._gateway)
    if gateway not in _WARM:
        store = spark._jsparkSession.sharedState().statusStore()
        newest = _newest_execution_id(store)
        if newest >= 0:
            graph = store.planGraph(newest)
            mapper.writeValueAsString(graph.nodes())
            mapper.writeValueAsString(graph.edges())
            mapper.writeValueAsString(store.executionMetrics(newest))
        _WARM.add(gateway)
    known = _IDENTITIES.setdefault(spark, {})
    for table in sorted(tables - set(known)):
        identity = _locate(spark, table)
        if identity is not None:
            known[table] = identity


# ---------------------------------------------------------------- the executions of one block


@dataclass(frozen=True)
class CapturedRun:
    """The plan graphs and metric values of a run's executions, as JSON out of the JVM (no Spark object)."""

    executions: tuple[tuple[dict[str, Any], dict[str, str]], ...]

    def graph(self) -> SparkGraph:
        """The merged final plan graphs of the run's executions, with their row counts."""
        return merge([graph_from_json(graph, values) for graph, values in self.executions])


@dataclass
class ObservedRun:
    """The executions started inside one ``observe`` block."""

    spark: SparkSession
    tag: str
    #: the newest execution id before the block (-1: none): the block's own are newer
    before: int = -1
    execution_ids: list[int] = field(default_factory=list)

    def capture(self) -> CapturedRun:
        """Copy the executions' graphs and metric values out of the JVM: a few py4j calls each.

        The graph's ``nodes`` and ``edges`` are serialized apart: Jackson would also write the graph's derived
        ``allNodes`` (every node again), which costs ten times as long.
        """
        store = self.spark._jsparkSession.sharedState().statusStore()
        mapper = _json_mapper(self.spark)
        executions = []
        for execution_id in self.execution_ids:
            java_graph = store.planGraph(execution_id)
            graph = {
                "nodes": json.loads(mapper.writeValueAsString(java_graph.nodes())),
                "edges": json.loads(mapper.writeValueAsString(java_graph.edges())),
            }
            values = json.loads(mapper.writeValueAsString(store.executionMetrics(execution_id)))
            executions.append((graph, {str(k): str(v) for k, v in values.items()}))
        return CapturedRun(tuple(executions))

    def graph(self) -> SparkGraph:
        """``capture().graph()``."""
        return self.capture().graph()


def _newest_execution_id(store: Any) -> int:
    count = int(store.executionsCount())
    return int(store.executionsList(count - 1, 1).head().executionId()) if count else -1


def _executions_since(store: Any, before: int, tag: str) -> list[int]:
    """Ids newer than ``before`` that carry ``tag``, reading the store from its newest execution backwards.

    The store lists executions in id order, so the walk stops at the first id not newer than ``before``.
    """
    found: set[int] = set()  # a set: when the store evicts its oldest meanwhile, two chunks overlap by one
    end = int(store.executionsCount())
    chunk = _FIRST_CHUNK  # a block usually starts one or two executions: look at few first, then more
    while end > 0:
        start = max(0, end - chunk)
        chunk = _CHUNK
        for execution in reversed(list(_iterate(store.executionsList(start, end - start)))):
            execution_id = int(execution.executionId())
            if execution_id <= before:
                return sorted(found)
            if str(execution.description()) == tag:
                found.add(execution_id)
        end = start
    return sorted(found)


@contextmanager
def observe(spark: SparkSession) -> Iterator[ObservedRun]:
    """Tag the executions the block starts on this thread; afterwards ``run.execution_ids`` lists them, finished.

    The thread's previous job description comes back when the block ends, whatever happens inside.
    """
    context = spark.sparkContext
    store = spark._jsparkSession.sharedState().statusStore()
    run = ObservedRun(spark, f"pushdown-feedback-{uuid.uuid4()}", _newest_execution_id(store))
    previous = context.getLocalProperty(_DESCRIPTION)
    context.setLocalProperty(_DESCRIPTION, run.tag)
    try:
        yield run
    finally:
        context.setLocalProperty(_DESCRIPTION, previous)  # type: ignore[arg-type]
    context._jsc.sc().listenerBus().waitUntilEmpty(LISTENER_WAIT_MS)
    run.execution_ids = _executions_since(store, run.before, run.tag)


def actual_rows(
    spark: SparkSession, answer: Mapping[str, Any], graph: SparkGraph, catalog: Mapping[str, Any] | None = None
) -> ActualRows:
    """Spark's counts for the answer's rewritten plan (``answer["plan"]``) from a run's ``graph``.

    ``catalog``: the request's, when its column statistics may vouch that a join key holds no NULL.
    """
    plan = answer["plan"]
    tables = {str(n["table"]) for n in walk(plan) if n.get("op") == "scan" and n.get("table")}
    return map_actuals(plan, graph, table_identities(spark, tables, graph), never_null_columns(catalog))
