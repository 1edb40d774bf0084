"""``PushdownSparkSqlOperator``: optimize a query with the service and run the answer on Spark, keeping placements.

Example::

    def session(context):                       # the session to run on, with the tables and UDFs the SQL names
        spark = SparkSession.builder.getOrCreate()
        spark.udf.register("score", score, "double")
        spark.read.parquet("/data/orders").createOrReplaceTempView("orders")
        return spark

    PushdownSparkSqlOperator(
        task_id="orders_eu",
        sql="SELECT o.id FROM orders o JOIN customers c ON o.cid = c.id WHERE score(o.note) > 0.5 AND c.region = 'EU'",
        functions={"score": {"cost": 2000}},
        spark_session=session,
        write_to={"parquet": "/out/orders_eu/{{ ds }}", "mode": "overwrite"},
    )

The run is the client's Spark runner (``pushdown_client.spark_runner.run_sql``): the answer's Spark SQL on the given
session, with its barriers so that Spark's own optimizer keeps each predicate where the service put it, the
answer's settings (rarely any) held only while the action runs, and the original query's column names, order
and types. The task's XCom is the optimize summary plus what ran: the row count (no ``write_to``) or where it wrote.
After the action the runner sends Spark's actual rows per node to ``POST /feedback/{request_id}`` (the next run's
estimates learn from them); the task waits for that send before it ends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from pushdown_airflow.hooks import DEFAULT_TIMEOUT_SECONDS, PushdownHook
from pushdown_airflow.operators import default_context, failure, json_field
from pushdown_airflow.summary import summarize
from pushdown_client import PushdownError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from pushdown_client.spark_runner import SparkRun

#: ``write_to``'s one target key -> how the run writes it (``mode``/``overwrite`` are the only other keys).
WRITES: dict[str, Callable[[SparkRun, str, Mapping[str, Any]], None]] = {
    "table": lambda run, name, out: run.save_as_table(name, mode=out.get("mode", "errorifexists")),
    "insert_into": lambda run, name, out: run.insert_into(name, overwrite=bool(out.get("overwrite", False))),
    "parquet": lambda run, path, out: run.write_parquet(path, mode=out.get("mode", "errorifexists")),
}
_WRITE_OPTIONS = {"mode", "overwrite"}


def default_session(context: Mapping[str, Any]) -> SparkSession:
    """The active SparkSession, or a new one from the environment's defaults."""
    from pyspark.sql import SparkSession

    return SparkSession.builder.getOrCreate()


def write_target(write_to: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """(kind, target) of ``write_to``: exactly one of ``table``, ``insert_into`` or ``parquet``; None counts rows.

    >>> write_target({"parquet": "/out/x", "mode": "overwrite"}), write_target(None)
    (('parquet', '/out/x'), None)
    """
    if write_to is None:
        return None
    targets = [key for key in write_to if key in WRITES]
    unknown = sorted(set(write_to) - set(WRITES) - _WRITE_OPTIONS)
    if len(targets) != 1 or unknown:
        raise AirflowFailException(
            f"write_to takes exactly one of {sorted(WRITES)} (with {sorted(_WRITE_OPTIONS)}), not {sorted(write_to)}"
        )
    return targets[0], str(write_to[targets[0]])


def sent_feedback(run: SparkRun) -> dict[str, Any] | None:
    """What the action's feedback sent (waits for the send: the task's process may end right after ``execute``).

    None when nothing was sent (``feedback=False``, or the send failed: the runner logged why).
    """
    if run.sent is None:
        return None
    actual = run.actual
    if actual is None:
        return None
    return {"nodes": len(actual.nodes), "unmapped": dict(actual.unmapped)}


class PushdownSparkSqlOperator(BaseOperator):
    """Optimizes ``sql`` and runs the answer on Spark through the client's runner; returns the summary and the run.

    :param sql: the query in Spark SQL (templated; a path ending in ``.sql`` is read as a template file).
    :param catalog: tables and statistics for the service (templated); without one, the session's schemas.
    :param functions: what the query's functions cost, ``{"name": {"cost": N, ...}}`` (templated).
    :param spark_session: called with the task's context, returns the session to run on (the caller's temporary
        views and UDFs resolve there); default: the active session, or a new one.
    :param write_to: ``{"table" | "insert_into" | "parquet": target, "mode" | "overwrite": ...}`` (templated);
        without it, the task counts the rows.
    :param context: how the dashboard groups this run; defaults to the DAG, task and run ids (templated).
    :param options: ``{"mode": "cost" | "always" | "never", ...}``.
    :param feedback: send Spark's actual rows per plan node back to the service after the action (default on);
        the task waits for that send, and XCom's ``feedback`` says how many nodes were counted and why others
        were not.
    A 4xx answer fails the task without retries (the request is wrong); a 5xx or a network error may retry.
    """

    template_fields: Sequence[str] = ("sql", "catalog", "functions", "write_to", "context")
    template_ext: Sequence[str] = (".sql",)
    template_fields_renderers = {"sql": "sql", "catalog": "json", "functions": "json", "write_to": "json"}
    ui_color = "#fde8d7"

    def __init__(
        self,
        *,
        sql: str,
        catalog: dict[str, Any] | str | None = None,
        functions: dict[str, Any] | str | None = None,
        spark_session: Callable[[Mapping[str, Any]], SparkSession] = default_session,
        write_to: dict[str, Any] | str | None = None,
        context: dict[str, str] | None = None,
        options: dict[str, Any] | None = None,
        feedback: bool = True,
        pushdown_conn_id: str = PushdownHook.default_conn_name,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.sql = sql
        self.catalog = catalog
        self.functions = functions
        self.spark_session = spark_session
        self.write_to = write_to
        self.context = context
        self.options = options
        self.feedback = feedback
        self.pushdown_conn_id = pushdown_conn_id
        self.timeout = timeout

    def execute(self, context: Any) -> dict[str, Any]:
        write_to = json_field("write_to", self.write_to)
        target = write_target(write_to)
        spark = self.spark_session(context)
        hook = PushdownHook(self.pushdown_conn_id, timeout=self.timeout)
        try:
            run = hook.run_sql(
                spark,
                self.sql,
                feedback=self.feedback,
                catalog=json_field("catalog", self.catalog),
                functions=json_field("functions", self.functions),
                options=self.options,
                context=json_field("context", self.context) or default_context(self, context),
            )
        except PushdownError as exc:
            raise failure(exc) from None
        return finish_run(self, run, target, write_to)


def finish_run(
    task: BaseOperator, run: SparkRun, target: tuple[str, str] | None, write_to: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Run the action (count the rows, or write ``target``), wait for the feedback sent, log; the task's XCom:
    the optimize summary, what ran on Spark, the rows or where they went, and the feedback sent."""
    result = summarize(run.answer)
    spark_target = run.answer.get("spark") or {}
    result["spark"] = {
        "sql": spark_target.get("sql"),
        "conf": spark_target.get("conf", {}),
        "barriers": len(spark_target.get("barriers", [])),
        "left_to_spark": len(spark_target.get("left_to_spark", [])),
        "as_written": bool(spark_target.get("as_written")),
    }
    if target is None:
        result["rows"] = run.count()
    else:
        kind, where = target
        assert write_to is not None
        WRITES[kind](run, where, write_to)
        result["written_to"] = {kind: where}
    result["feedback"] = sent_feedback(run)
    task.log.info(
        "pushdown request %s ran on Spark with %d barrier(s): %s",
        result["request_id"],
        result["spark"]["barriers"],
        {"rows": result["rows"]} if target is None else result["written_to"],
    )
    for warning in run.answer.get("warnings", []):
        task.log.warning("pushdown: %s", warning)
    return result
