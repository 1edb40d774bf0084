"""Expensive functions found in a Spark query without declarations, with a first cost and where it came from.

``run_sql`` asks this module which functions of the query cost more than a comparison, so a query that calls an
undeclared Python UDF still gets it placed by cost. Three steps, each cheaper to skip than the one before it:

1. **Detect** (``detect_functions``): the query's *analyzed* plan, as the JVM writes it to JSON (one py4j call),
   is searched for Python UDFs (``PythonUDF``: ``evalType`` tells batched from pandas/Arrow ones), Scala/Java UDFs
   (``ScalaUDF``), regular expressions, JSON extraction and string similarity. Each gets the name the service's
   SQL adapter sees for it (a registered UDF's SQL name, a built-in's SQL function name: ``RLike`` is ``rlike``
   however the query spelled it), Spark's own determinism (``udfDeterministic``; built-ins are deterministic) and a
   default cost (``DEFAULT_COSTS``, ``source: "detected: <kind> default"``).
2. **Calibrate** (``pushdown_client.calibration``, once per SparkContext, only when there is a Python UDF to
   measure): the seconds of one cost unit on the session's executors, and of a row's trip to a Python worker.
3. **Measure** (``pushdown_client.udf_timing``): each Python UDF's own function is timed in the driver on a
   sample of its arguments; ``source: "measured: ..."`` with an interval.

A caller's declaration always wins: a name the caller declared is neither detected nor measured. A function whose
cost the service learned from earlier runs (docs/feedback.md, "Function costs") is answered with the learned cost.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pushdown_client.calibration import Calibration, calibrate, known_calibration

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


#: a first guess's interval: this factor below and above it
GUESS_SPREAD = 10.0


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
    #: the share of the measured sample's rows the call returned true for (a boolean UDF), and the sample's rows
    selectivity: float | None = None
    sample_rows: int | None = None

    def to_spec(self) -> dict[str, Any]:
        """The request's ``functions`` entry."""
        spec: dict[str, Any] = {"cost": round(self.cost, 3), "source": self.source}
        if self.kind not in ("regex",):  # the engine knows what a pattern match does; only its cost is said
            spec["deterministic"] = self.deterministic
        if self.interval is not None:
            spec["interval"] = [round(self.interval[0], 3), round(self.interval[1], 3)]
        if self.selectivity is not None and self.sample_rows:
            spec["selectivity"], spec["sample_rows"] = round(self.selectivity, 4), self.sample_rows
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

    ``sql``: the text the service gets (temporary views inlined, ``pushdown_client.views``); a UDF whose name it
    does not call (a view made from a DataFrame, a permanent view) is left out: the service never sees it.

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
        cost = DEFAULT_COSTS[kind]
        interval = (cost / GUESS_SPREAD, cost * GUESS_SPREAD)
        found[name] = DetectedFunction(
            name, kind, deterministic, cost, f"detected: {kind} default", interval, eval_type
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


@dataclass
class Detection:
    """What ``detect_and_measure`` found: the request's ``functions`` additions and the calibration used."""

    functions: dict[str, DetectedFunction] = field(default_factory=dict)
    calibration: Calibration | None = None

    def specs(self) -> dict[str, dict[str, Any]]:
        return {name: f.to_spec() for name, f in self.functions.items()}


#: calls and SQL words followed by ``(`` that no detector looks for: Spark's everyday built-ins and the keywords a
#: parenthesis follows (``IN (``, ``FROM (``). A name outside this set, ``RLIKE``/``REGEXP`` or a declared-elsewhere
#: UDF sends the query to the full detection; a UDF registered under one of these names (shadowing a built-in) is
#: the one case the shortcut misses, and it is then placed as Spark places the built-in.
CHEAP_CALLS: frozenset[str] = frozenset(
    [
        "in",
        "exists",
        "over",
        "as",
        "and",
        "or",
        "not",
        "on",
        "using",
        "values",
        "filter",
        "when",
        "then",
        "else",
        "case",
        "cast",
        "try_cast",
        "from",
        "join",
        "select",
        "where",
        "by",
        "having",
        "limit",
        "union",
        "all",
        "distinct",
        "with",
        "lateral",
        "table",
        "tablesample",
        "repeatable",
        "percent",
        "sets",
        "rollup",
        "cube",
        "interval",
        "decimal",
        "varchar",
        "char",
        "count",
        "sum",
        "avg",
        "mean",
        "min",
        "max",
        "stddev",
        "stddev_samp",
        "stddev_pop",
        "variance",
        "var_samp",
        "var_pop",
        "first",
        "last",
        "any_value",
        "coalesce",
        "nullif",
        "ifnull",
        "nvl",
        "nvl2",
        "if",
        "abs",
        "round",
        "bround",
        "floor",
        "ceil",
        "ceiling",
        "greatest",
        "least",
        "substring",
        "substr",
        "left",
        "right",
        "upper",
        "lower",
        "trim",
        "ltrim",
        "rtrim",
        "length",
        "char_length",
        "concat",
        "concat_ws",
        "lpad",
        "rpad",
        "replace",
        "instr",
        "locate",
        "position",
        "startswith",
        "endswith",
        "contains",
        "date_add",
        "date_sub",
        "datediff",
        "add_months",
        "months_between",
        "year",
        "month",
        "day",
        "dayofmonth",
        "dayofweek",
        "dayofyear",
        "weekofyear",
        "quarter",
        "hour",
        "minute",
        "second",
        "extract",
        "to_date",
        "to_timestamp",
        "date_format",
        "date_trunc",
        "trunc",
        "current_date",
        "current_timestamp",
        "row_number",
        "rank",
        "dense_rank",
        "percent_rank",
        "ntile",
        "lag",
        "lead",
        "cume_dist",
        "grouping",
        "grouping_id",
        "struct",
        "array",
        "map",
        "named_struct",
        "size",
        "explode",
        "explode_outer",
        "posexplode",
        "sqrt",
        "exp",
        "ln",
        "log",
        "log10",
        "pow",
        "power",
        "mod",
        "pmod",
        "sign",
        "collect_list",
        "collect_set",
        "approx_count_distinct",
        "percentile_approx",
        "percentile",
        "median",
    ]
)
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_REGEX_OPERATOR = re.compile(r"\b(rlike|regexp)\b", re.IGNORECASE)
#: comments and string literals: a word in them calls nothing
_NOT_CODE = re.compile(r"--[^\n]*|/\*.*?\*/|'(?:[^'\\]|\\.|'')*'", re.DOTALL)


def may_call_detectable(sql: str, declared: Iterable[str] = ()) -> bool:
    """Whether ``sql``'s text may call something ``detect_functions`` would report: a call outside
    ``CHEAP_CALLS`` and ``declared``, or a regular-expression operator. False spares the analyzed plan's JSON (one
    py4j call of tens of milliseconds) on the ordinary query; True only means the full detection runs.

    >>> may_call_detectable("SELECT sum(x) FROM t WHERE k IN (SELECT k FROM u) AND d < date_add(e, 3)")
    False
    >>> may_call_detectable("SELECT x FROM t WHERE score(x)"), may_call_detectable("SELECT x FROM t WHERE x RLIKE 'a'")
    (True, True)
    >>> may_call_detectable("SELECT x FROM t WHERE score(x)", {"score"})
    False
    >>> may_call_detectable("-- Pricing Summary Report (Q1)\\nSELECT x FROM t WHERE b = 'see f(x)'")
    False
    """
    code = _NOT_CODE.sub(" ", sql)
    if _REGEX_OPERATOR.search(code):
        return True
    names = {name.lower() for name in _CALL.findall(code)}
    return bool(names - CHEAP_CALLS - {d.lower() for d in declared})


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
    if sql is not None and not may_call_detectable(sql, skip):
        return Detection({}, known_calibration(spark))  # nothing to find: the plan's JSON is not worth its time
    found = {n: f for n, f in detect_functions(frame, sql).items() if n not in skip}
    python = any(f.kind in ("python_udf", "pandas_udf", "arrow_udf") for f in found.values())
    if not (measure and python):
        return Detection(found, known_calibration(spark))
    try:
        calibration = calibrate(spark)
    except Exception as exc:  # noqa: BLE001 - defaults stand
        logger.warning("session not calibrated: %r", exc)
        return Detection(found, None)
    from pushdown_client.udf_timing import measure_python_udfs

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
    return merged, calibrated_options(options, detection.calibration)


def calibrated_options(options: Mapping[str, Any] | None, calibration: Calibration | None) -> dict[str, Any] | None:
    """``options`` with the session's calibration: ``calibration`` (seconds a unit, for the time saved) and the
    measured operator constants as ``operator_costs``, under the caller's own where given.

    >>> cal = Calibration(4e-9, (3e-9, 5e-9), 1e-5, (8e-6, 2e-5), operator_costs={"join": 30.0})
    >>> opts = calibrated_options({"operator_costs": {"sort": 5}}, cal)
    >>> opts["operator_costs"], opts["calibration"]["unit_s"]
    ({'join': 30.0, 'sort': 5}, 4e-09)
    """
    opts = dict(options or {})
    if calibration is None:
        return opts or None
    opts.setdefault("calibration", calibration.to_wire())
    if calibration.operator_costs:
        opts["operator_costs"] = {**calibration.operator_costs, **(opts.get("operator_costs") or {})}
    return opts
