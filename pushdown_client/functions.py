"""Expensive functions found in a Spark query without declarations, with a first cost and where it came from.

``run_sql`` asks this module which functions of the query cost more than a comparison, so a query that calls an
undeclared Python UDF still gets it placed by cost. Three steps, each cheaper to skip than the one before it:

1. **Detect** (``detect_functions``): the query's *analyzed* plan, as the JVM writes it to JSON (one py4j call),
   is searched for Python UDFs (``PythonUDF``: ``evalType`` tells batched from pandas/Arrow ones), Scala/Java UDFs
   (``ScalaUDF``), regular expressions, JSON extraction and string similarity. Each gets the name the service's
   SQL adapter sees for it (a registered UDF's SQL name, a built-in's SQL function name: ``RLike`` is ``rlike``
   however the query spelled it), Spark's own determinism (``udfDeterministic``; built-ins are deterministic) and a
   default cost (``DEFAULT_COSTS``, ``source: "detected: <kind> default"``).
2. **Calibrate** (``calibrate``, once per SparkContext): the time per row of ``spark.range(N).filter(id % 7 = 3)
   .count()``, which the model prices at 3 units a row (scan 1, arithmetic 1, comparison 1), gives the seconds of
   one unit (``unit_s``); the same count with a no-op Python UDF as the filter, less the first, gives what moving
   one row through a Python worker costs (``python_row_s``). Each is a slope (the fastest of three runs of N rows
   against N/4, so the fixed cost of a job cancels; ``_per_row``). A few seconds, once, and only when the query has a
   Python UDF to measure.
3. **Measure** (``measure_python_udfs``): a Python UDF's own function (unpickled from the plan) is timed in the
   driver on up to ``SAMPLE_ROWS`` rows of its arguments, read with a ``LIMIT`` from the plan below the UDF (as
   deep as the arguments' columns go through filters, projections and joins: a scan's first rows). Its
   cost is ``(python_row_s + seconds per call) / unit_s``; the interval spans the slowest and fastest chunks of
   calls and calibration runs (``source: "measured: ..."``). The function runs in the driver: its side effects
   (an accumulator's ``add``) happen there too.

A caller's declaration always wins: a name the caller declared is neither detected nor measured. A function whose
cost the service learned from earlier runs (docs/feedback.md, "Function costs") is answered with the learned cost.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

logger = logging.getLogger(__name__)

_PKG = "org.apache.spark.sql.catalyst.expressions."

#: Spark expression class (simple name) -> (the SQL adapter's function name, kind)
BUILTINS: dict[str, tuple[str, str]] = {
    "RLike": ("rlike", "regex"),
    "RegExpExtract": ("regexp_extract", "regex"),
    "RegExpExtractAll": ("regexp_extract_all", "regex"),
    "RegExpReplace": ("regexp_replace", "regex"),
    "RegExpCount": ("regexp_count", "regex"),
    "RegExpInStr": ("regexp_instr", "regex"),
    "RegExpSubStr": ("regexp_substr", "regex"),
    "StringSplit": ("split", "regex"),
    "GetJsonObject": ("get_json_object", "json"),
    "JsonTuple": ("json_tuple", "json"),
    "JsonToStructs": ("from_json", "json"),
    "SchemaOfJson": ("schema_of_json", "json"),
    "JsonObjectKeys": ("json_object_keys", "json"),
    "LengthOfJsonArray": ("json_array_length", "json"),
    "Levenshtein": ("levenshtein", "similarity"),
    "SoundEx": ("soundex", "phonetic"),
}

#: Python eval types (``pyspark.util.PythonEvalType``) -> kind
PYTHON_EVAL_TYPES: dict[int, str] = {
    100: "python_udf",  # SQL_BATCHED_UDF: pickled rows
    101: "python_udf",  # SQL_ARROW_BATCHED_UDF: rows through Arrow, the function row by row
    200: "pandas_udf",  # SQL_SCALAR_PANDAS_UDF
    204: "pandas_udf",  # SQL_SCALAR_PANDAS_ITER_UDF
    250: "arrow_udf",  # SQL_SCALAR_ARROW_UDF
    251: "arrow_udf",  # SQL_SCALAR_ARROW_ITER_UDF
}

#: First guesses per kind, in comparisons (a comparison = 1), before anything is measured or learned. A Python
#: UDF's row crosses to a Python worker and back (a few microseconds on local Spark, where a unit is ~10 ns);
#: vectorized ones amortize that over a batch; a JVM UDF converts its arguments and boxes its result.
DEFAULT_COSTS: dict[str, float] = {
    "python_udf": 200.0,
    "pandas_udf": 50.0,
    "arrow_udf": 30.0,
    "scala_udf": 20.0,
    "regex": 10.0,
    "json": 30.0,
    "similarity": 20.0,
    "phonetic": 5.0,
}

#: rows of a UDF's arguments timed in the driver, and the most time measuring one UDF may take (seconds)
SAMPLE_ROWS = 200
MEASURE_BUDGET_S = 1.0


@dataclass(frozen=True)
class DetectedFunction:
    """One function of a query: the service's name for it, what it is, and a cost with its provenance."""

    name: str
    kind: str
    deterministic: bool = True
    cost: float = 0.0
    source: str = ""
    interval: tuple[float, float] | None = None
    eval_type: int | None = None
    #: per call, seconds (measured Python UDFs)
    per_call_s: float | None = None

    def to_spec(self) -> dict[str, Any]:
        """The request's ``functions`` entry."""
        spec: dict[str, Any] = {"cost": round(self.cost, 3), "source": self.source}
        if self.kind not in ("regex",):  # the engine knows what a pattern match does; only its cost is said
            spec["deterministic"] = self.deterministic
        if self.interval is not None:
            spec["interval"] = [round(self.interval[0], 3), round(self.interval[1], 3)]
        return spec


def _simple(cls: str) -> str:
    return cls.rsplit(".", 1)[-1]


def _scala_name(value: Any) -> str | None:
    """A ``ScalaUDF.udfName`` as Spark's JSON writes an ``Option[String]``."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        inner = value.get("value")
        return inner if isinstance(inner, str) else None
    return None


def _expressions(tree: Any) -> Iterable[Mapping[str, Any]]:
    """Every dict with a ``class`` in a plan's JSON (nodes, their expressions, subquery plans), iteratively."""
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if "class" in item:
                yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def detect_in_json(plan: Any, sql: str | None = None) -> dict[str, DetectedFunction]:
    """The functions of an analyzed plan's JSON that cost more than a comparison, by the service's name.

    ``sql``: a UDF whose name the query's text does not call (it comes from a view's definition) is left out:
    the service never sees it.

    >>> udf = {"class": _PKG + "PythonUDF", "name": "Score", "evalType": 100, "udfDeterministic": False}
    >>> found = detect_in_json([{"class": "x.Filter", "condition": [udf, {"class": _PKG + "RLike"}]}])
    >>> found["score"].kind, found["score"].deterministic, found["score"].source, found["rlike"].cost
    ('python_udf', False, 'detected: python_udf default', 10.0)
    """
    found: dict[str, DetectedFunction] = {}
    text = (sql or "").lower()
    for expr in _expressions(plan):
        cls = _simple(str(expr["class"]))
        if cls == "PythonUDF":
            eval_type = int(expr.get("evalType") or 0)
            name, kind = str(expr.get("name") or ""), PYTHON_EVAL_TYPES.get(eval_type, "python_udf")
            deterministic = bool(expr.get("udfDeterministic", True))
        elif cls == "ScalaUDF":
            eval_type, name, kind = None, _scala_name(expr.get("udfName")) or "", "scala_udf"
            deterministic = bool(expr.get("udfDeterministic", True))
        elif cls in BUILTINS:
            (name, kind), eval_type, deterministic = BUILTINS[cls], None, True
        else:
            continue
        name = name.lower()
        if not name or (
            sql is not None and kind.endswith("_udf") and not re.search(rf"\b{re.escape(name)}\s*\(", text)
        ):
            continue
        seen = found.get(name)
        if seen is not None:  # one name, two calls: the least deterministic view of it
            found[name] = replace(seen, deterministic=seen.deterministic and deterministic)
            continue
        found[name] = DetectedFunction(
            name, kind, deterministic, DEFAULT_COSTS[kind], f"detected: {kind} default", None, eval_type
        )
    return found


def analyzed_json(frame: DataFrame) -> Any:
    """The DataFrame's analyzed logical plan as Spark's JSON (one py4j call)."""
    return json.loads(frame._jdf.queryExecution().analyzed().toJSON())


def detect_functions(frame: DataFrame, sql: str | None = None) -> dict[str, DetectedFunction]:
    """``detect_in_json`` on the frame's analyzed plan; nothing (logged) when the plan cannot be read."""
    try:
        return detect_in_json(analyzed_json(frame), sql)
    except Exception as exc:  # noqa: BLE001 - detection only informs the request
        logger.warning("functions of the query not detected: %r", exc)
        return {}


# ---------------------------------------------------------------- calibration


@dataclass(frozen=True)
class Calibration:
    """Seconds per cost unit (a comparison) on this session's executors, and per row through a Python worker."""

    unit_s: float
    unit_interval: tuple[float, float]
    python_row_s: float
    python_interval: tuple[float, float]
    source: str = "measured: spark.range filter count"

    def to_wire(self) -> dict[str, Any]:
        """``options.calibration`` of a request."""
        return {
            "unit_s": self.unit_s,
            "interval": list(self.unit_interval),
            "python_row_s": self.python_row_s,
            "source": self.source,
        }


_CALIBRATIONS: dict[str, Calibration] = {}
_CALIBRATION_LOCK = threading.Lock()
#: rows of the comparison and of the Python UDF calibration queries
CALIBRATION_ROWS = 4_000_000
PYTHON_CALIBRATION_ROWS = 40_000


def _timed(action: Any, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return times


def _per_row(action: Any, rows: int, runs: int) -> tuple[float, tuple[float, float]]:
    """Seconds per row of ``action(n)`` and a range for it: the slope between the fastest of ``runs`` runs at
    ``rows`` and at a quarter of it, which cancels what a Spark job costs whatever its size (scheduling, a task's
    start); the fastest run is the one least disturbed by other work on the machine. When noise leaves no slope
    (under a tenth of the whole run's time per row), the whole run's time per row, which includes the job's fixed
    cost, stands instead, with a quarter of it as the range's low end. Otherwise the range spans the slope of the
    median runs and the whole run's time per row."""
    small = sorted(_timed(lambda: action(rows // 4), runs))
    big = sorted(_timed(lambda: action(rows), runs))
    span = rows - rows // 4
    whole = big[0] / rows
    slope = (big[0] - small[0]) / span
    if slope < whole / 10:  # no slope to read: at most the whole run's time a row, at least a quarter of it
        return whole, (whole / 4, whole)
    median = (big[len(big) // 2] - small[len(small) // 2]) / span
    candidates = [slope, whole] + ([median] if median >= whole / 10 else [])
    return slope, (min(candidates), max(candidates))


def calibrate(
    spark: SparkSession, rows: int = CALIBRATION_ROWS, python_rows: int = PYTHON_CALIBRATION_ROWS
) -> Calibration:
    """The session's calibration, measured on first use per SparkContext (a few seconds), then remembered."""
    key = str(spark.sparkContext.applicationId)
    with _CALIBRATION_LOCK:
        known = _CALIBRATIONS.get(key)
        if known is not None:
            return known
        from pyspark.sql import functions as F
        from pyspark.sql.types import BooleanType

        compare = lambda n: spark.range(n).filter(F.col("id") % 7 == 3).count()  # noqa: E731
        compare(rows // 2)  # code generation and JIT warm-up
        row_s, (row_lo, row_hi) = _per_row(compare, rows, 3)  # the model prices a row of it at 3 units
        noop = F.udf(lambda _: True, BooleanType(), useArrow=False)  # pickled rows, as a registered UDF runs
        python = lambda n: spark.range(n).filter(noop(F.col("id"))).count()  # noqa: E731
        python(1000)  # starts the Python workers
        py_s, (py_lo, py_hi) = _per_row(python, python_rows, 3)
        through = [max(t - row_s, row_s) for t in (py_s, py_lo, py_hi)]
        found = Calibration(row_s / 3, (row_lo / 3, row_hi / 3), through[0], (through[1], through[2]))
        _CALIBRATIONS[key] = found
        logger.info("calibrated %s: %.3g s a unit, %.3g s a Python row", key, found.unit_s, found.python_row_s)
        return found


def known_calibration(spark: SparkSession) -> Calibration | None:
    """The session's calibration when one was measured (feedback converts seconds with it), else None."""
    return _CALIBRATIONS.get(str(spark.sparkContext.applicationId))


# ---------------------------------------------------------------- measuring Python UDFs


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
    """Up to ``rows`` rows of the UDF's arguments, read from the plan below its node; None when an argument is not
    a column of that plan (a nested expression) or the node has no single input."""
    from pyspark.sql import DataFrame

    children = located.node.children()
    if children.size() != 1:
        return None
    args = located.udf.children()
    wanted = []
    for i in range(args.size()):
        arg = args.apply(i)
        if not arg.getClass().getName().endswith("AttributeReference"):
            return None
        wanted.append(int(arg.exprId().id()))
    if not set(wanted) <= set(_ids(children.apply(0))):
        return None
    source = _sample_source(children.apply(0), set(wanted))
    ids = _ids(source)
    jdf = spark._jvm.org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, source)
    frame = DataFrame(jdf, spark).toDF(*[f"c{i}" for i in range(len(ids))])
    return [tuple(r) for r in frame.select(*[f"c{ids.index(w)}" for w in wanted]).limit(rows).collect()]


def _python_function(udf: Any) -> Any:
    """The Python function a PythonUDF calls, unpickled from its command."""
    from pyspark.serializers import CloudPickleSerializer

    command = udf.func().command()
    raw = command.unsafeArray() if hasattr(command, "unsafeArray") else command
    loaded = CloudPickleSerializer().loads(bytes(raw))
    return loaded[0] if isinstance(loaded, tuple) else loaded


def time_calls(function: Any, rows: list[tuple[Any, ...]], vectorized: bool, budget_s: float) -> list[float]:
    """Seconds per call of ``function`` on ``rows``, one figure per chunk of calls (at least one chunk, at most
    ``budget_s`` spent after the first).

    >>> times = time_calls(lambda x: x + 1, [(i,) for i in range(50)], False, 0.5)
    >>> 0 < len(times) <= 5 and all(t > 0 for t in times)
    True
    """
    if not rows:
        return []
    if vectorized:
        import pandas as pd

        columns = [pd.Series([r[i] for r in rows]) for i in range(len(rows[0]))]
        runs = []
        deadline = time.perf_counter() + budget_s
        for _ in range(5):
            started = time.perf_counter()
            function(*columns)
            runs.append((time.perf_counter() - started) / len(rows))
            if time.perf_counter() > deadline:
                break
        return runs
    chunk = max(1, len(rows) // 5)
    runs = []
    deadline = time.perf_counter() + budget_s
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        started = time.perf_counter()
        for row in part:
            function(*row)
        runs.append((time.perf_counter() - started) / len(part))
        if time.perf_counter() > deadline:
            break
    return runs


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
            runs = time_calls(_python_function(where.udf), rows, found.kind != "python_udf", budget_s)
        except Exception as exc:  # noqa: BLE001 - the default stands
            logger.warning("%s not measured: %r", name, exc)
            continue
        out[name] = measured(found, runs, len(rows), calibration)
    return out


def measured(found: DetectedFunction, runs: list[float], rows: int, calibration: Calibration) -> DetectedFunction:
    """``found`` priced from per-call times ``runs`` (seconds) and the session's calibration.

    >>> cal = Calibration(1e-8, (0.8e-8, 1.2e-8), 2e-6, (1.5e-6, 3e-6))
    >>> m = measured(DetectedFunction("f", "python_udf"), [1e-6, 2e-6], 200, cal)
    >>> m.cost, m.source, [round(v) for v in m.interval]
    (400.0, 'measured: 200 sample rows in the driver + Python row transfer', [208, 625])
    """
    median = sorted(runs)[len(runs) // 2]
    per_call = calibration.python_row_s + median
    low = (calibration.python_interval[0] + min(runs)) / calibration.unit_interval[1]
    high = (calibration.python_interval[1] + max(runs)) / calibration.unit_interval[0]
    return replace(
        found,
        cost=per_call / calibration.unit_s,
        source=f"measured: {rows} sample rows in the driver + Python row transfer",
        interval=(low, high),
        per_call_s=per_call,
    )


@dataclass
class Detection:
    """What ``detect_and_measure`` found: the request's ``functions`` additions and the calibration used."""

    functions: dict[str, DetectedFunction] = field(default_factory=dict)
    calibration: Calibration | None = None

    def specs(self) -> dict[str, dict[str, Any]]:
        return {name: f.to_spec() for name, f in self.functions.items()}


def detect_and_measure(
    spark: SparkSession,
    frame: DataFrame,
    sql: str | None,
    declared: Iterable[str] = (),
    measure: bool = True,
) -> Detection:
    """Functions of ``frame``'s query the caller did not declare, priced: measured Python UDFs when ``measure``
    (calibrating the session on first use, only when there is a Python UDF to measure), defaults otherwise."""
    skip = {n.lower() for n in declared}
    found = {n: f for n, f in detect_functions(frame, sql).items() if n not in skip}
    python = any(f.kind in ("python_udf", "pandas_udf", "arrow_udf") for f in found.values())
    if not (measure and python):
        return Detection(found, known_calibration(spark))
    try:
        calibration = calibrate(spark)
    except Exception as exc:  # noqa: BLE001 - defaults stand
        logger.warning("session not calibrated: %r", exc)
        return Detection(found, None)
    return Detection(measure_python_udfs(spark, frame, found, calibration), calibration)


def with_detected(
    spark: SparkSession,
    frame: DataFrame,
    sql: str | None,
    functions: Mapping[str, Any] | None,
    options: Mapping[str, Any] | None,
    measure: bool = True,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The request's ``functions`` with the detected ones added (the caller's own, marked ``declared``, win) and
    its ``options`` with the session's calibration (``options.calibration``, for the time saved)."""
    declared = {str(k): dict(v) for k, v in (functions or {}).items()}
    declared.update({k: {**v, "source": "declared"} for k, v in declared.items() if "cost" in v and "source" not in v})
    also = set((options or {}).get("functions") or {})
    detection = detect_and_measure(spark, frame, sql, [*declared, *also], measure)
    merged = {**detection.specs(), **declared} or None
    opts = dict(options or {})
    if detection.calibration is not None and "calibration" not in opts:
        opts["calibration"] = detection.calibration.to_wire()
    return merged, (opts or None)
