"""Optimize a PySpark DataFrame pipeline, not only SQL text (docs/dataframe.md)::

    from pushdown_client import PushdownClient
    from pushdown_client.dataframe import optimize_dataframe, run_dataframe

    scored = orders.filter(score(F.col("note"))).join(customer, "ck").groupBy("region").count()
    client = PushdownClient("http://pushdown:8000")
    fast = optimize_dataframe(scored, client=client, functions={score: {"cost": 2000}})
    run = run_dataframe(scored, client=client, functions={score: {"cost": 2000}})  # run.collect(), writes...

What it does:

- reads the DataFrame's analyzed plan through py4j and writes it as the service's wire plan
  (``pushdown_client.dataframe_plan``): every relation that is not a node the wire format has (files, tables,
  ``spark.range``, in-memory rows, a cached DataFrame, anything unknown) is a *leaf*, a scan of a made-up table
  whose DataFrame is kept by reference; a Python UDF (``F.udf``, ``pandas_udf``, registered or not) is a
  ``{"fn": "udf"}`` call with the cost ``functions`` declares for it (keyed by the UDF's name or the UDF object);
- asks the service (``detail="full"``, so the answer carries its Spark SQL with a barrier per kept predicate);
- when the answer needs no barrier and no setting, Spark's own pushdown places every predicate where the answer
  does: the run's DataFrame is the caller's own (``run.as_written``);
- otherwise the leaves are registered as temporary views and the UDFs as temporary functions under names no
  caller uses (``__pushdown_...``), only while ``spark.sql`` analyzes the answer's SQL, then dropped through the
  session catalog, which (unlike ``spark.catalog.dropTempView``) leaves a cached DataFrame cached. The analyzed
  DataFrame no longer needs the names: collects and writes plan it again from its analyzed plan;
- the result has the original's column names, order, types and nullability.

Spark Connect DataFrames have no JVM plan to read: ``SparkConnectUnsupported``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pushdown_client.client import PushdownClient
from pushdown_client.dataframe_plan import Translation, translate
from pushdown_client.spark_runner import MIN_TIME_SAVED_S, SparkRun, conform, saves_too_little

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

logger = logging.getLogger(__name__)
#: names are registered and dropped under this lock: two threads of one session never see each other's
_NAMES_LOCK = threading.Lock()


class SparkConnectUnsupported(TypeError):
    """The DataFrame belongs to a Spark Connect session: there is no JVM plan to read through py4j."""


@dataclass
class DataFrameRun(SparkRun):
    """A ``SparkRun`` for a DataFrame: also the translation (the wire plan sent, its leaves and UDFs)."""

    translation: Translation | None = None
    #: the answer needed no barrier and no setting: ``dataframe`` is the caller's own DataFrame
    as_written: bool = False
    #: why the answer's SQL could not be applied (``dataframe`` is then the caller's own, and a warning is logged)
    fallback: str | None = None


def run_dataframe(
    df: DataFrame,
    *,
    client: PushdownClient | None = None,
    functions: Mapping[Any, Mapping[str, Any]] | None = None,
    catalog: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    context: Mapping[str, str] | None = None,
    feedback: bool = True,
    detect: bool | str = True,
    min_time_saved_s: float = MIN_TIME_SAVED_S,
) -> DataFrameRun:
    """Ask the service about ``df`` and return the run (lazy: nothing executes until an action).

    ``functions``: per Python UDF, keyed by its name (the Python function's ``__name__``) or by the UDF object,
    ``{"cost": N, "deterministic": ...}``. ``catalog``: ``{"tables": {label: {"row_count", "column_stats"}}}``
    keyed by a leaf's label (its view or table name, its file's name; ``run.translation.leaves`` lists them):
    statistics to use instead of Spark's. ``detect``: the UDFs, regular expressions and the like that
    ``functions`` does not declare are sent with a cost (``pushdown_client.functions``): True measures Python UDFs
    on a sample, ``"defaults"`` sends first guesses, False nothing. Raises ``PushdownError`` when the service
    refuses the plan and ``SparkConnectUnsupported`` for a Spark Connect DataFrame. ``min_time_saved_s``: a
    rewrite predicted to save less executor time than this runs the caller's DataFrame
    (``pushdown_client.spark_runner.saves_too_little``; 0 runs every rewrite).
    """
    check_classic(df)
    client = client or PushdownClient()
    if detect:
        functions, options = with_detected(df, functions, options, measure=detect is True)
    translation = translate(df, functions)
    request_catalog = _merged_catalog(translation, catalog)
    answer = client.optimize(
        plan=translation.plan,
        catalog=request_catalog,
        functions=translation.functions() or None,
        options=options,
        context=context,
        detail="full",
    )
    spark = df.sparkSession
    target = answer.get("spark")
    reports = feedback and client.url is not None
    fallback: str | None = None
    if (
        target is None
        or (not target.get("barriers") and not target.get("conf"))
        or saves_too_little(answer, min_time_saved_s)
    ):
        if reports and target is not None:  # the caller's DataFrame runs; its scans still map onto the answer
            try:
                apply_sql(spark, translation, None, locate=True)
            except Exception as exc:  # noqa: BLE001 - feedback is best effort
                logger.warning("the leaves' scans were not located for feedback: %r", exc)
        frame = df
    else:
        try:
            applied = apply_sql(spark, translation, target["sql"], locate=reports)
            assert applied is not None
            frame = conform_exactly(applied, df.schema)
        except Exception as exc:  # noqa: BLE001 - the caller's DataFrame is always a correct answer
            logger.warning("the answer's Spark SQL could not be applied, running the DataFrame as written: %r", exc)
            frame, fallback = df, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    conf = dict(target.get("conf") or {}) if target is not None and frame is not df else {}
    run = DataFrameRun(spark, answer, frame, conf, client if feedback and fallback is None else None, request_catalog)
    run.translation, run.as_written, run.fallback = translation, frame is df and fallback is None, fallback
    return run


def with_detected(
    df: DataFrame,
    functions: Mapping[Any, Mapping[str, Any]] | None,
    options: Mapping[str, Any] | None,
    measure: bool = True,
) -> tuple[dict[Any, Mapping[str, Any]], dict[str, Any] | None]:
    """``functions`` with the DataFrame's undeclared functions added by their own names (a declaration, by name or
    by UDF object, wins), and ``options`` with the session's calibration (for the time saved)."""
    from pushdown_client.functions import calibrated_options, detect_and_measure

    given = dict(functions or {})
    declared = [key if isinstance(key, str) else udf_name(key) for key in given]
    detection = detect_and_measure(df.sparkSession, df, None, [n for n in declared if n], measure)
    merged: dict[Any, Mapping[str, Any]] = {**detection.specs(), **given}
    return merged, calibrated_options(options, detection.calibration)


def udf_name(udf: Any) -> str | None:
    """The name Spark's plan gives a UDF object (``F.udf``'s wrapper or the UserDefinedFunction itself)."""
    inner = getattr(udf, "_unwrapped", udf)
    name = getattr(inner, "_name", None) or getattr(inner, "__name__", None)
    return str(name) if name else None


def optimize_dataframe(df: DataFrame, **kwargs: Any) -> DataFrame:
    """The DataFrame that runs the service's answer for ``df`` (keywords as ``run_dataframe``)."""
    return run_dataframe(df, **kwargs).dataframe


def check_classic(df: Any) -> None:
    """Raise ``SparkConnectUnsupported`` unless ``df`` is a classic (py4j) PySpark DataFrame."""
    # Not ``isinstance`` against pyspark.sql.connect's class: importing it without Spark Connect's dependencies
    # (grpc) fails, and in some interpreters exits the process (its doctest check).
    connect = any(k.__module__.startswith("pyspark.sql.connect") for k in type(df).__mro__)
    if not connect and getattr(df, "_jdf", None) is None:
        raise TypeError(f"expected a PySpark DataFrame, got {type(df).__module__}.{type(df).__name__}")
    if connect:
        raise SparkConnectUnsupported(
            "optimize_dataframe reads the DataFrame's plan from the JVM through py4j, and a Spark Connect "
            f"DataFrame ({type(df).__module__}.{type(df).__name__}) has none: run the pipeline on a classic "
            "SparkSession, or send its SQL with run_sql (docs/dataframe.md)"
        )


def apply_sql(spark: Any, translation: Translation, sql: str | None, locate: bool = False) -> DataFrame | None:
    """``spark.sql(sql)`` analyzed with the leaves as temporary views and the UDFs as temporary functions, which
    are dropped again before this returns (through the session catalog: the public ``dropTempView`` uncaches a
    view's plan, and a leaf's plan may be the caller's cached DataFrame).

    ``locate``: also remember what each leaf's scan reads while its name resolves, so that feedback can map the
    run's scans onto the answer's plan after the names are gone (``pushdown_client.feedback.spark``)."""
    from pyspark.sql import DataFrame

    jsession = spark._jsparkSession
    jvm = spark._jvm
    session_catalog = jsession.sessionState().catalog()
    views: list[str] = []
    functions: list[str] = []
    with _NAMES_LOCK:
        try:
            for leaf in translation.leaves:
                frame = DataFrame(leaf.jdf, spark)
                if [c for c, _ in leaf.columns] != leaf.original_names:
                    frame = frame.toDF(*[c for c, _ in leaf.columns])
                frame.createOrReplaceTempView(leaf.table)
                views.append(leaf.table)
            for udf in translation.udfs.values():
                expression = udf.expression
                function = jvm.org.apache.spark.sql.execution.python.UserDefinedPythonFunction(
                    udf.name,
                    expression.func(),
                    expression.dataType(),
                    expression.evalType(),
                    expression.udfDeterministic(),
                    [],
                    [],
                )
                jsession.udf().registerPython(udf.name, function)
                functions.append(udf.name)
            if locate:
                from pushdown_client.feedback.spark import table_identities

                table_identities(spark, set(views))
            return spark.sql(sql) if sql is not None else None
        finally:
            for name in views:
                session_catalog.dropTempView(name)
            for name in functions:
                session_catalog.dropTempFunction(name, True)


def conform_exactly(frame: DataFrame, schema: Any) -> DataFrame:
    """``conform`` (names, order, types); then each column as nullable as in ``schema`` (a rewrite can make one
    non-nullable, e.g. a full join turned left by a filter) and with its metadata (Spark marks an unaliased
    aggregate's name ``__autoGeneratedAlias``).

    Nullability is loosened with ``CASE WHEN c IS NULL THEN NULL ELSE c END``: nullable as analyzed, and gone once
    optimized (``c IS NULL`` is false for a non-nullable ``c``). ``CASE WHEN true THEN c END`` is not: Spark 4
    analyzes it as ``c``'s own nullability."""
    from pyspark.sql import functions as F

    frame = conform(frame, schema)
    pairs = list(zip(frame.schema.fields, schema.fields, strict=True))
    loosen = {i for i, (ours, theirs) in enumerate(pairs) if theirs.nullable and not ours.nullable}
    relabel = {i for i, (ours, theirs) in enumerate(pairs) if (ours.metadata or {}) != (theirs.metadata or {})}
    if not loosen and not relabel:
        return frame
    unique = len(set(frame.columns)) == len(frame.columns)
    columns = []
    for i, field in enumerate(schema.fields):
        column = F.col(f"`{field.name}`") if unique else frame[i]
        if i in loosen:
            column = F.when(column.isNull(), F.lit(None).cast(field.dataType)).otherwise(column)
        if i in loosen or i in relabel:
            column = column.alias(field.name, metadata=field.metadata or {})
        columns.append(column)
    return frame.select(*columns)


def _merged_catalog(translation: Translation, given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The leaves' columns (and Spark's row counts) with the caller's statistics, given per leaf label or
    table name, column names as the caller's DataFrame has them. A cached leaf keeps the row count Spark counted
    (the caller's statistics describe the table, the cache may hold a filtered part of it)."""
    catalog = translation.catalog()
    tables: Mapping[str, Any] = (given or {}).get("tables", {})
    by_label = {k.lower(): v for k, v in tables.items()}
    for leaf in translation.leaves:
        extra = by_label.get(leaf.table.lower()) or by_label.get(leaf.label.lower())
        if not extra:
            continue
        entry = catalog["tables"][leaf.table]
        renamed = {o.lower(): n for o, (n, _) in zip(leaf.original_names, leaf.columns, strict=True)}
        for key, value in extra.items():
            if key == "row_count" and leaf.cached and leaf.row_count is not None:
                continue  # the rows the cache holds, as Spark counted them, over a table's count
            if key == "column_stats":
                entry[key] = {renamed.get(c.lower(), c): s for c, s in value.items()}
            elif key != "columns":
                entry[key] = value
    return catalog
