"""Per-call cost of a query's Python UDFs, measured in the driver on a sample of their arguments.

Each Python UDF's own function (unpickled from the analyzed plan's ``PythonUDF``) is timed on up to
``SAMPLE_ROWS`` rows of its arguments, read with a ``LIMIT`` from the plan below the UDF (as deep as the arguments'
columns go through filters, projections and joins: a scan's first rows). Its cost is ``(python_row_s + seconds
per call) / unit_s`` (``pushdown_client.calibration``); the interval spans the slowest and fastest chunks of calls
and the calibration's ranges. The function runs in the driver: its side effects (an accumulator's ``add``) happen
there too. What it returns on the sample is kept as well: for a boolean UDF, the share of the rows it returned
true for is the ``selectivity`` of a conjunct that calls it (``costmodel.estimate_functions``), as good as the
sample is like the data (a scan's first rows).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pushdown_client.calibration import Calibration
from pushdown_client.functions import DetectedFunction, _expressions, _simple

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

logger = logging.getLogger(__name__)

#: rows of a UDF's arguments timed in the driver, and the most time measuring one UDF may take (seconds)
SAMPLE_ROWS = 200
MEASURE_BUDGET_S = 1.0
#: how long a row UDF's calls are timed for at least (its sample cycled), and the rows of a vectorized UDF's batch
TIMED_S = 0.1
ARROW_BATCH_ROWS = 10_000
#: steps of the fixed work timed beside each chunk of calls (about 2 ms: ``machine_speed``)
REFERENCE_STEPS = 30_000


class _Reference:
    """The fastest this process has run a fixed piece of pure-Python work (seconds)."""

    fastest = math.inf
    lock = threading.Lock()


def reference_seconds() -> float:
    """Seconds the fixed work takes now (and the process's fastest, kept)."""
    started = time.perf_counter()
    total = 0
    for i in range(REFERENCE_STEPS):
        total = (total * 31 + i) % 1_000_003
    took = time.perf_counter() - started
    with _Reference.lock:
        _Reference.fastest = min(_Reference.fastest, took)
    return took


def machine_speed(chunks: list[float], references: list[float], fastest: float) -> list[float]:
    """Each chunk's time per call at the machine's own speed: over the fixed work's time beside it, times
    ``fastest``, the fastest the work has run in this process (``_Reference.fastest``).

    This VM's Python speed drifts up to twice within seconds (as bench/engine_instructions.py found of the
    engine), so a chunk timed in a slow second priced a UDF up to twice too dear: one function, measured right
    after a sample's Spark job, came out 11.5 to 30 us a call from one detection to the next. The drift slows
    the fixed work timed beside it alike; interference only ever adds time, so the fastest is the machine's own
    speed, the one the executors' calls measured (learned-costs bench, quiet).

    >>> machine_speed([2e-5, 3e-5], [0.002, 0.003], 0.002)
    [2e-05, 2e-05]
    """
    return [chunk * fastest / ref for chunk, ref in zip(chunks, references, strict=True)]


@dataclass
class _Located:
    udf: Any  # the PythonUDF expression (py4j)
    node: Any  # the logical plan node holding it


def _locate_udfs(plan: Any, names: set[str]) -> dict[str, _Located]:
    """The first PythonUDF of each name in the analyzed plan, with the node that holds it (few py4j calls: only
    the nodes whose JSON holds one are opened)."""
    found: dict[str, _Located] = {}
    nodes = json.loads(plan.toJSON())
    for i, node in enumerate(nodes):
        wanted = {
            str(e.get("name", "")).lower()
            for e in _expressions({k: v for k, v in node.items() if k != "class"})
            if _simple(str(e["class"])) == "PythonUDF"
        } & (names - set(found))
        if not wanted:
            continue
        jnode = plan.apply(i)
        exprs = jnode.expressions()
        for k in range(exprs.size()):
            expr = exprs.apply(k)
            for j, item in enumerate(json.loads(expr.toJSON())):
                name = str(item.get("name", "")).lower()
                if _simple(str(item["class"])) == "PythonUDF" and name in wanted and name not in found:
                    found[name] = _Located(expr.apply(j), jnode)
    return found


#: plan nodes a sample may be read below: they only drop or rename rows, or combine inputs
_SAMPLE_THROUGH = ("Filter", "Project", "SubqueryAlias", "View", "Join", "Sort", "Distinct", "LocalLimit")


def _ids(plan: Any) -> list[int]:
    output = plan.output()
    return [int(output.apply(i).exprId().id()) for i in range(output.size())]


def _sample_source(plan: Any, wanted: set[int]) -> Any:
    """The deepest plan below ``plan`` that still outputs every ``wanted`` attribute, going down only through
    nodes that filter, rename or join: a ``LIMIT`` there reads a few rows of a scan instead of running a join."""
    while plan.nodeName() in _SAMPLE_THROUGH:
        children = plan.children()
        below = [children.apply(i) for i in range(children.size())]
        holding = [child for child in below if wanted <= set(_ids(child))]
        if len(holding) != 1:
            break
        plan = holding[0]
    return plan


def _sample_arguments(spark: SparkSession, located: _Located, rows: int) -> list[tuple[Any, ...]] | None:
    """Up to ``rows`` rows of the UDF's arguments, read from the input of its node that outputs them all (a
    filter's or projection's one input; for a UDF in a join's condition, the side its columns come from); None
    when an argument is not a column (a nested expression) or no single input holds every argument."""
    from pyspark.sql import DataFrame

    args = located.udf.children()
    wanted = []
    for i in range(args.size()):
        arg = args.apply(i)
        if not arg.getClass().getName().endswith("AttributeReference"):
            return None
        wanted.append(int(arg.exprId().id()))
    children = located.node.children()
    holding = [children.apply(i) for i in range(children.size()) if set(wanted) <= set(_ids(children.apply(i)))]
    if len(holding) != 1:
        return None
    source = _sample_source(holding[0], set(wanted))
    ids = _ids(source)
    jvm: Any = spark._jvm
    jdf = jvm.org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, source)
    frame = DataFrame(jdf, spark).toDF(*[f"c{i}" for i in range(len(ids))])
    return [tuple(r) for r in frame.select(*[f"c{ids.index(w)}" for w in wanted]).limit(rows).collect()]


def _python_function(udf: Any) -> Any:
    """The Python function a PythonUDF calls, unpickled from its command."""
    from pyspark.serializers import CloudPickleSerializer

    command = udf.func().command()
    raw = command.unsafeArray() if hasattr(command, "unsafeArray") else command
    loaded = CloudPickleSerializer().loads(bytes(raw))
    return loaded[0] if isinstance(loaded, tuple) else loaded


def time_calls(
    function: Any,
    rows: list[tuple[Any, ...]],
    vectorized: bool,
    budget_s: float,
    results: list[Any] | None = None,
    timed_s: float = TIMED_S,
    batch_rows: int = ARROW_BATCH_ROWS,
) -> list[float]:
    """Seconds per call (per row, ``vectorized``) of ``function`` on ``rows``, one figure per chunk: five chunks
    of calls, stopping once ``budget_s`` is spent. ``results``: what the calls returned, one value a row of
    ``rows`` (each row once).

    A row function is called on ``rows`` cycled until the calls take about ``timed_s`` (as a first call says; at
    least ``rows`` once, at least five calls): 200 rows of a 15 us function are 3 ms, chunks of 0.6 ms, which the
    timer's and the machine's noise moved by half (two detections of one function came out 10,000 and 16,000
    units apart). A vectorized function (pandas, Arrow) is called on a batch of ``batch_rows`` rows, ``rows``
    cycled, as Spark hands it batches (``spark.sql.execution.arrow.maxRecordsPerBatch``): its per-batch set-up,
    spread over 200 rows, priced a pandas UDF's row ten times too dear.

    Each chunk is timed at the machine's own speed (``machine_speed``).

    >>> returned: list[Any] = []
    >>> times = time_calls(lambda x: x % 2 == 0, [(i,) for i in range(50)], False, 0.5, returned)
    >>> 0 < len(times) <= 5 and all(t > 0 for t in times), returned[:3], len(returned)
    (True, [True, False, True], 50)
    """
    if not rows:
        return []
    if vectorized:
        return _time_batches(function, rows, budget_s, results, batch_rows)
    started = time.perf_counter()
    function(*rows[0])  # a first call: how many calls make ``timed_s``, and how many the budget allows
    first = max(time.perf_counter() - started, 1e-9)
    wanted = max(len(rows), int(timed_s / first))
    calls = [rows[i % len(rows)] for i in range(max(5, min(wanted, int(budget_s / first))))]
    chunk = -(-len(calls) // 5)
    runs, references = [], []
    deadline = time.perf_counter() + budget_s
    for begin in range(0, len(calls), chunk):
        part = calls[begin : begin + chunk]
        started = time.perf_counter()
        out = [function(*row) for row in part]
        runs.append((time.perf_counter() - started) / len(part))
        references.append(reference_seconds())
        if results is not None and len(results) < len(rows):
            results.extend(out[: len(rows) - len(results)])
        if time.perf_counter() > deadline:
            break
    return machine_speed(runs, references, _Reference.fastest)


def _time_batches(
    function: Any, rows: list[tuple[Any, ...]], budget_s: float, results: list[Any] | None, batch_rows: int
) -> list[float]:
    """``time_calls`` of a vectorized function: the sample once (what it returns), then batches of up to
    ``batch_rows`` rows (fewer when the sample's time per row says five would outlast ``budget_s``)."""
    import pandas as pd

    def columns(batch: list[tuple[Any, ...]]) -> list[Any]:
        return [pd.Series([r[i] for r in batch]) for i in range(len(batch[0]))]

    deadline = time.perf_counter() + budget_s
    started = time.perf_counter()
    out = function(*columns(rows))
    per_row = max((time.perf_counter() - started) / len(rows), 1e-9)
    if results is not None:
        results.extend(list(out))
    size = max(len(rows), min(batch_rows, int(budget_s / 5 / per_row)))
    batch = columns([rows[i % len(rows)] for i in range(size)])
    runs, references = [], []
    for _ in range(5):
        started = time.perf_counter()
        function(*batch)
        runs.append((time.perf_counter() - started) / size)
        references.append(reference_seconds())
        if time.perf_counter() > deadline:
            break
    return machine_speed(runs, references, _Reference.fastest)


def sampled_selectivity(results: list[Any]) -> float | None:
    """The share of ``results`` that are true, when every one is a boolean or None (a predicate's values); None
    for any other function, or no results.

    >>> sampled_selectivity([True, False, None, True]), sampled_selectivity(["a", True]), sampled_selectivity([])
    (0.5, None, None)
    """
    if not results:
        return None
    kept = 0
    for value in results:
        if value is None or type(value).__name__ == "NAType":  # pandas' missing boolean
            continue
        if not isinstance(value, bool) and type(value).__name__ not in ("bool_", "bool"):  # numpy's bool too
            return None
        kept += bool(value)
    return kept / len(results)


def measure_python_udfs(
    spark: SparkSession,
    frame: DataFrame,
    detected: Mapping[str, DetectedFunction],
    calibration: Calibration,
    sample_rows: int = SAMPLE_ROWS,
    budget_s: float = MEASURE_BUDGET_S,
) -> dict[str, DetectedFunction]:
    """``detected`` with each Python UDF's cost measured (``source: "measured: ..."``); one that cannot be measured
    (a nested argument, a failing call, a pickled broadcast) keeps its default, and the reason is logged."""
    out = dict(detected)
    wanted = {n for n, f in detected.items() if f.kind in ("python_udf", "pandas_udf", "arrow_udf")}
    if not wanted:
        return out
    try:
        located = _locate_udfs(frame._jdf.queryExecution().analyzed(), wanted)
    except Exception as exc:  # noqa: BLE001
        logger.warning("Python UDFs not located for measuring: %r", exc)
        return out
    for name, where in located.items():
        found = detected[name]
        try:
            rows = _sample_arguments(spark, where, sample_rows)
            if not rows:
                logger.info("%s not measured: no sample of its arguments", name)
                continue
            returned: list[Any] = []
            runs = time_calls(_python_function(where.udf), rows, found.kind != "python_udf", budget_s, returned)
        except Exception as exc:  # noqa: BLE001 - the default stands
            logger.warning("%s not measured: %r", name, exc)
            continue
        share = sampled_selectivity(returned)
        out[name] = replace(
            measured(found, runs, len(rows), calibration),
            selectivity=share,
            sample_rows=len(returned) if share is not None else None,
        )
    return out


def measured(found: DetectedFunction, runs: list[float], rows: int, calibration: Calibration) -> DetectedFunction:
    """``found`` priced from per-call times ``runs`` (seconds) and the session's calibration.

    A row UDF's call adds ``python_row_s``, a pickled row's trip to a Python worker and back. A vectorized one's
    rows travel in Arrow batches, whose cost a row is far below that (on the DataFrame workload, 17,000 rows of a
    pandas UDF more or less made no measurable difference): its interval's high end adds ``python_row_s``.

    >>> cal = Calibration(1e-8, (0.8e-8, 1.2e-8), 2e-6, (1.5e-6, 3e-6))
    >>> m = measured(DetectedFunction("f", "python_udf"), [1e-6, 2e-6], 200, cal)
    >>> m.cost, m.source, [round(v) for v in m.interval]
    (400.0, 'measured: 200 sample rows in the driver + Python row transfer', [208, 625])
    >>> v = measured(DetectedFunction("g", "pandas_udf"), [1e-7, 2e-7], 200, cal)
    >>> round(v.cost), v.source, [round(v) for v in v.interval]
    (20, 'measured: 200 sample rows in the driver, in Arrow batches', [8, 400])
    """
    median = sorted(runs)[len(runs) // 2]
    if found.kind == "python_udf":
        transfer, (transfer_low, transfer_high) = calibration.python_row_s, calibration.python_interval
        how = " + Python row transfer"
    else:
        transfer, transfer_low, transfer_high = 0.0, 0.0, calibration.python_interval[1]
        how = ", in Arrow batches"
    per_call = transfer + median
    low = (transfer_low + min(runs)) / calibration.unit_interval[1]
    high = (transfer_high + max(runs)) / calibration.unit_interval[0]
    return replace(
        found,
        cost=per_call / calibration.unit_s,
        source=f"measured: {rows} sample rows in the driver{how}",
        interval=(low, high),
        per_call_s=per_call,
    )
