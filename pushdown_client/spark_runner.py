"""Run a query on the caller's SparkSession the way the pushdown service decided, so Spark keeps the placement.

::

    from pushdown_client import PushdownClient                  # or service.client / service.spark_runner
    from pushdown_client.spark_runner import run_sql

    run = run_sql(spark, "SELECT ... WHERE score(o.note) AND c.region = 'EU'",
                  client=PushdownClient("http://pushdown:8000"),  # in-process: service.client.PushdownClient()
                  functions={"score": {"cost": 2000}})
    rows = run.collect()                                       # or run.save_as_table("out"), run.write_parquet(p)
    run.answer["cost"]["savings_vs_baseline"]

What it does, and why:

- it asks the service for the answer and runs ``answer["spark"]["sql"]`` with ``spark.sql`` on *this* session,
  so the caller's temporary views and UDFs resolve (a ``newSession()`` would not see them);
- the kept predicates carry their own barriers in that SQL, so under Spark's defaults nothing else is needed and
  ``run.dataframe`` can be used like any DataFrame. When the answer does need settings (``answer["spark"]["conf"]``,
  rare; a warning says why), every action of ``SparkRun`` applies them for exactly its duration and puts the
  caller's values back (unset keys unset again): a DataFrame write plans its query again under the settings in
  force at that moment, so the settings must be on during the write, not only when the DataFrame is made;
- the result has the original query's column names, order and types (the rewrite may name columns differently);
- with a service URL, each action's own row counts are read from Spark afterwards and sent back
  (``POST /feedback/{request_id}``, see docs/feedback.md): the action waits only while Spark's plan graphs are
  copied out (a few py4j calls); mapping and sending happen on a background thread, which finishes its queue
  before the interpreter exits. ``run.actual`` waits for that and says what was counted and what could not be
  mapped. Feedback never fails the action: a failure to read or send it is logged. Reading and sending the
  counts is ``pushdown_client.feedback`` (standard library and PySpark), so it works where only this client is
  installed (an orchestrator's environment); the service stores and learns from them. Before a process exits
  on its own terms (``os._exit``, as some task runners do), wait with ``run.actual`` or ``flush_feedback()``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pushdown_client.client import Answer, FunctionSpec, PushdownClient
from pushdown_client.views import inline_temp_views

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameWriter, Row, SparkSession
    from pyspark.sql.types import DataType

    from pushdown_client.feedback.mapping import ActualRows
    from pushdown_client.feedback.runner import SentFeedback

logger = logging.getLogger(__name__)
#: how long ``SparkRun.actual`` waits for the feedback thread (seconds)
FEEDBACK_WAIT_S = 60.0

#: Spark's type names as the service's catalog spells them (``decimal(p,s)`` and others pass through).
_WIRE_TYPES = {
    "integer": "int",
    "int": "int",
    "bigint": "bigint",
    "long": "bigint",
    "smallint": "smallint",
    "tinyint": "tinyint",
    "double": "double",
    "float": "float",
    "string": "string",
    "boolean": "boolean",
    "date": "date",
    "timestamp": "timestamp",
}


@dataclass
class SparkRun:
    """The answer and the DataFrame that runs it; actions here hold the answer's settings while they run."""

    spark: SparkSession
    answer: Answer
    dataframe: DataFrame
    conf: dict[str, str] = field(default_factory=dict)
    #: where to send the actual rows after each action (None: not sent)
    client: PushdownClient | None = None
    #: the request's catalog: statistics in it may vouch that a join key holds no NULL (docs/feedback.md)
    catalog: Mapping[str, Any] | None = None
    #: the last action's feedback, mapped and sent on the feedback thread (``actual`` waits for it)
    sent: Future[SentFeedback] | None = None

    @property
    def actual(self) -> ActualRows | None:
        """What the last action counted per node of the answer's plan, and what could not be mapped.

        Waits for the feedback thread to have sent it; None when nothing was reported or the send failed.
        """
        if self.sent is None:
            return None
        try:
            return self.sent.result(timeout=FEEDBACK_WAIT_S).actual
        except Exception:  # noqa: BLE001 - the failure was logged when it happened
            return None

    @contextlib.contextmanager
    def settings(self) -> Iterator[None]:
        """The answer's session settings for the duration of the block; the caller's own values afterwards."""
        with session_settings(self.spark, self.conf):
            yield

    def collect(self) -> list[Row]:
        return self._with_settings(self.dataframe.collect)

    def count(self) -> int:
        return self._with_settings(self.dataframe.count)

    def write(self, action: Callable[[DataFrameWriter], Any]) -> Any:
        """Any write: ``run.write(lambda w: w.format("delta").save(path))``."""
        return self._with_settings(lambda: action(self.dataframe.write))

    def save_as_table(self, name: str, mode: str = "errorifexists", **options: Any) -> None:
        self.write(lambda w: w.mode(mode).options(**options).saveAsTable(name))

    def insert_into(self, name: str, overwrite: bool = False) -> None:
        self.write(lambda w: w.insertInto(name, overwrite=overwrite))

    def write_parquet(self, path: str, mode: str = "errorifexists", **options: Any) -> None:
        self.write(lambda w: w.mode(mode).options(**options).parquet(path))

    def _with_settings(self, action: Callable[[], Any]) -> Any:
        if not self._reports():
            with self.settings():
                return action()
        from pushdown_client.feedback.runner import observed, start_feedback

        with self.settings(), observed(self.spark, self.answer) as run:
            result = action()
        client = self.client
        assert client is not None
        request_id = self.answer.get("request_id")
        try:
            self.sent = start_feedback(
                self.spark,
                self.answer,
                run,
                lambda rid, body: client.feedback(rid, body["nodes"], **_functions_of(body)),
                self.catalog,
            )
        except Exception as exc:  # noqa: BLE001 - the caller's action succeeded; feedback is best effort
            logger.warning("feedback for %s not sent: %r", request_id, exc)
            self.sent = None
            return result
        self.sent.add_done_callback(lambda done: _log_failure(request_id, done))
        return result

    def _reports(self) -> bool:
        """Feedback needs a service (it keeps the history), classic Spark (py4j) and the answer's own SQL."""
        return (
            self.client is not None
            and self.client.url is not None
            and hasattr(self.spark, "_jsparkSession")
            and self.answer.get("spark") is not None
            and "request_id" in self.answer
        )


def _functions_of(body: Mapping[str, Any]) -> dict[str, Any]:
    """``functions=`` for ``client.feedback`` when the body has any (a client of its own may not take it)."""
    return {"functions": body["functions"]} if body.get("functions") else {}


def _log_failure(request_id: Any, done: Future[SentFeedback]) -> None:
    error = done.exception()
    if error is not None:
        logger.warning("feedback for %s not sent: %r", request_id, error)


#: executor seconds a rewrite must be predicted to save to run instead of the caller's query (with a measured
#: calibration): a barrier and the answer's SQL cost Spark about a stage's scheduling, a tenth of a second on
#: local[2] (the learned-costs bench's d02: a pandas UDF held above the joins, 7 ms of executor time predicted
#: saved, 0.1 s of wall time lost over 7 runs)
MIN_TIME_SAVED_S = 0.1


def saves_too_little(answer: Mapping[str, Any], floor_s: float = MIN_TIME_SAVED_S) -> bool:
    """Whether the answer's predicted executor time saved against Spark's own placement is below ``floor_s``;
    never for a saving in default units (no calibration of the session: no clock to hold it to). Says so in the
    log when it is: the answer still shows the rewrite, and the caller's query is what runs.

    >>> def answer(estimate, source="measured: spark.range filter count"):
    ...     return {"cost": {"time_saved_vs_baseline_s": {"estimate": estimate, "unit_source": source}}}
    >>> saves_too_little(answer(0.007)), saves_too_little(answer(2.1)), saves_too_little(answer(0.007, "default"))
    (True, False, False)
    """
    saved = (answer.get("cost") or {}).get("time_saved_vs_baseline_s") or {}
    if saved.get("unit_source", "default") == "default" or saved.get("estimate") is None:
        return False
    too_little = float(saved["estimate"]) < floor_s
    if too_little:
        logger.info(
            "request %s: running the query as written: the rewrite is predicted to save %.3g s, below "
            "min_time_saved_s=%g",
            answer.get("request_id"),
            float(saved["estimate"]),
            floor_s,
        )
    return too_little


def run_sql(
    spark: SparkSession,
    sql: str,
    *,
    client: PushdownClient | None = None,
    catalog: Mapping[str, Any] | None = None,
    functions: Mapping[str, FunctionSpec] | None = None,
    options: Mapping[str, Any] | None = None,
    context: Mapping[str, str] | None = None,
    feedback: bool = True,
    detect: bool | str = True,
    min_time_saved_s: float = MIN_TIME_SAVED_S,
) -> SparkRun:
    """Ask the service about ``sql`` and return the run (lazy: nothing executes until an action).

    ``catalog``: tables and statistics for the service (``{"ref": name}`` for analyzed tables); without one the
    tables' columns and types are read from this session, so decisions rest on default estimates.
    ``feedback``: send each action's actual rows back to the service (only with a service URL).
    ``client``: without one, ``PushdownClient()``, which needs a transport (``service.spark_runner.run_sql``
    defaults to the service in this process). Raises ``PushdownError`` when the service refuses the query.
    ``detect``: send the query's undeclared UDFs, regular expressions and the like with a cost
    (``pushdown_client.functions``): True measures Python UDFs, ``"defaults"`` sends first guesses, False nothing.
    ``min_time_saved_s``: a rewrite predicted to save less executor time than this runs the query as written
    (``saves_too_little``; 0 runs every rewrite).
    """
    client = client or PushdownClient()
    original = spark.sql(sql)  # analysis only: the caller's views and UDFs, and the output schema to keep
    sent = inline_temp_views(spark, sql)  # a filter written inside a temporary view is the service's to place too
    if detect:
        from pushdown_client.functions import with_detected

        # the text sent, views inlined: a UDF written inside a temporary view is the service's to place too
        functions, options = with_detected(spark, original, sent, functions, options, measure=detect is True)
    answer = client.optimize(
        sent,
        catalog=catalog if catalog is not None else session_catalog(spark, sent),
        functions=functions,
        options=options,
        context=context,
        dialect="spark",
    )
    target = answer.get("spark")
    if target is None:  # the rewrite has no Spark SQL form: the query as written, with a warning in the answer
        return SparkRun(spark, answer, original)
    # As written (nothing kept, Spark's own pushdown agrees): the query already analyzed is the one to run.
    if target["sql"] in (sql, sent) or saves_too_little(answer, min_time_saved_s):
        frame, conf = original, {}
    else:
        frame, conf = conform(spark.sql(target["sql"]), original.schema), dict(target.get("conf") or {})
    return SparkRun(spark, answer, frame, conf, client if feedback else None, catalog)


def conform(frame: DataFrame, schema: Any) -> DataFrame:
    """``frame`` with ``schema``'s column names, in order, cast where a type differs."""
    from pyspark.sql import functions as F

    names = [f.name for f in schema.fields]
    if [(f.name, f.dataType) for f in frame.schema.fields] == [(f.name, f.dataType) for f in schema.fields]:
        return frame  # already the original's names and types: no projection for Spark to analyze again
    if len(frame.columns) != len(names):
        raise ValueError(f"the rewritten query returns {len(frame.columns)} columns, the original {len(names)}")
    renamed = frame.toDF(*names)
    casts = {i: f.dataType for i, (f, g) in enumerate(zip(schema.fields, renamed.schema.fields, strict=True))}
    casts = {i: t for i, t in casts.items() if t != renamed.schema.fields[i].dataType}
    if not casts:
        return renamed
    if len(set(names)) != len(names):
        raise ValueError(f"cannot cast columns of a result with duplicate names {names}")
    return renamed.select(*[_cast(F.col(f"`{n}`"), casts.get(i)).alias(n) for i, n in enumerate(names)])


def _cast(column: Any, data_type: DataType | None) -> Any:
    return column if data_type is None else column.cast(data_type)


@contextlib.contextmanager
def session_settings(spark: SparkSession, conf: Mapping[str, str]) -> Iterator[None]:
    """Set ``conf`` on the session for the block, then restore each key exactly (unset again if it was unset)."""
    if not conf:
        yield
        return
    saved = {key: _get(spark, key) for key in conf}
    try:
        for key, value in conf.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, previous in saved.items():
            if previous is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, previous)


def _get(spark: SparkSession, key: str) -> str | None:
    """The session's own value of ``key``, or None when it is not set."""
    jconf = spark._jsparkSession.conf()  # the JVM's view: SparkConf.getOption distinguishes unset from a default
    option = jconf.getOption(key)
    return option.get() if option.isDefined() else None


def session_catalog(spark: SparkSession, sql: str) -> dict[str, Any]:
    """Columns and types of every table ``sql`` reads, as this session resolves them (temporary views too)."""
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(sql, dialect="spark")
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    tables: dict[str, Any] = {}
    for table in tree.find_all(exp.Table):
        name = ".".join(p for p in (table.catalog, table.db, table.name) if p)
        if not name or name.lower() in ctes or name in tables:
            continue
        fields = spark.table(name).schema.fields
        tables[name] = {"columns": [{"name": f.name, "type": wire_type(f.dataType)} for f in fields]}
    return {"tables": tables}


def wire_type(data_type: DataType) -> str:
    """Spark's type as the service's catalog spells it.

    >>> from pyspark.sql.types import DecimalType, IntegerType
    >>> wire_type(IntegerType()), wire_type(DecimalType(15, 2))
    ('int', 'decimal(15,2)')
    """
    text = data_type.simpleString()
    return _WIRE_TYPES.get(text, text)
