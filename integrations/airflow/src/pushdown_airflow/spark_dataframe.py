"""``PushdownSparkDataFrameOperator``: a task that builds a PySpark DataFrame in a callable, optimizes it with the
service and runs the answer on Spark, as ``PushdownSparkSqlOperator`` does for SQL text.

Example::

    def revenue(spark, day):                    # called with the task's session and the rendered dataframe_kwargs
        score = F.udf(looks_fine, BooleanType())  # never registered: it is named looks_fine by its function
        orders = spark.read.parquet(f"/data/orders/{day}")
        customer = spark.read.parquet("/data/customer").filter(F.col("c_mktsegment") == "BUILDING")
        joined = orders.join(customer, F.col("o_custkey") == F.col("c_custkey")).filter(score(F.col("o_comment")))
        return joined.groupBy("c_nationkey").agg(F.sum("o_totalprice").alias("revenue"))

    PushdownSparkDataFrameOperator(
        task_id="revenue",
        dataframe=revenue,
        dataframe_kwargs={"day": "{{ ds }}"},
        functions={"looks_fine": {"cost": 5000}},
        write_to={"parquet": "/out/revenue/{{ ds }}", "mode": "overwrite"},
    )

The run is the client's DataFrame runner (``pushdown_client.dataframe.run_dataframe``, docs/dataframe.md): the
DataFrame's analyzed plan is read from Spark and sent as a plan, and the answer runs on the same session with the
original's column names, order, types and nullability. After the action the runner sends Spark's actual rows per
node to ``POST /feedback/{request_id}``; the task waits for that send before it ends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from pushdown_airflow.hooks import DEFAULT_TIMEOUT_SECONDS, PushdownHook
from pushdown_airflow.operators import default_context, failure, json_field
from pushdown_airflow.spark_sql import default_session, finish_run, write_target
from pushdown_client import PushdownError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from pushdown_client.dataframe import DataFrameRun


def dataframe_summary(run: DataFrameRun) -> dict[str, Any]:
    """What XCom says of the DataFrame side: whether the caller's own DataFrame ran (``as_written``), why the
    answer could not be applied (``fallback``), the leaves by label, and what was read as opaque."""
    translation = run.translation
    return {
        "as_written": run.as_written,
        "fallback": run.fallback,
        "leaves": [leaf.label for leaf in translation.leaves] if translation is not None else [],
        "opaque": list(translation.opaque) if translation is not None else [],
    }


class PushdownSparkDataFrameOperator(BaseOperator):
    """Builds a DataFrame with ``dataframe(spark, **dataframe_kwargs)``, optimizes it through the service and runs
    the answer on Spark (count, or ``write_to``); returns the summary and the run.

    :param dataframe: called with the session and ``dataframe_kwargs``; returns the PySpark DataFrame to run
        (files, tables, temporary views, in-memory data, Python UDFs made with ``F.udf`` or ``pandas_udf``).
    :param dataframe_kwargs: keyword arguments for ``dataframe`` (templated: ``{"day": "{{ ds }}"}``).
    :param functions: what the pipeline's Python UDFs cost, by the UDF's name (its Python function's
        ``__name__``): ``{"name": {"cost": N, "deterministic": ...}}`` (templated).
    :param catalog: statistics per leaf label (a view's or table's name, a file's name; XCom's
        ``dataframe.leaves`` lists them): ``{"tables": {label: {"row_count": N, "column_stats": ...}}}``
        (templated); without it, Spark's own statistics.
    :param spark_session: called with the task's context, returns the session to build on; default: the active
        session, or a new one.
    :param write_to: ``{"table" | "insert_into" | "parquet": target, "mode" | "overwrite": ...}`` (templated);
        without it, the task counts the rows.
    :param context: how the dashboard groups this run; defaults to the DAG, task and run ids (templated).
    :param options: ``{"mode": "cost" | "always" | "never", ...}``.
    :param feedback: send Spark's actual rows per plan node back to the service after the action (default on).
    A 4xx answer, or a Spark Connect DataFrame (no JVM plan to read), fails the task without retries; a 5xx or a
    network error may retry.
    """

    template_fields: Sequence[str] = ("dataframe_kwargs", "catalog", "functions", "write_to", "context")
    template_fields_renderers = {"dataframe_kwargs": "json", "catalog": "json", "functions": "json", "write_to": "json"}
    ui_color = "#fde8d7"

    def __init__(
        self,
        *,
        dataframe: Callable[..., DataFrame],
        dataframe_kwargs: dict[str, Any] | None = None,
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
        if not callable(dataframe):
            raise TypeError(f"dataframe must be a callable that returns a DataFrame, not {type(dataframe).__name__}")
        self.dataframe = dataframe
        self.dataframe_kwargs = dataframe_kwargs
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
        from pushdown_client.dataframe import check_classic

        write_to = json_field("write_to", self.write_to)
        target = write_target(write_to)
        spark = self.spark_session(context)
        df = self.dataframe(spark, **(json_field("dataframe_kwargs", self.dataframe_kwargs) or {}))
        try:
            check_classic(df)  # a Spark Connect DataFrame (no JVM plan to read) or no DataFrame at all
        except TypeError as exc:
            raise AirflowFailException(f"{getattr(self.dataframe, '__name__', self.dataframe)!r}: {exc}") from None
        hook = PushdownHook(self.pushdown_conn_id, timeout=self.timeout)
        try:
            run = hook.run_dataframe(
                df,
                feedback=self.feedback,
                catalog=json_field("catalog", self.catalog),
                functions=json_field("functions", self.functions),
                options=self.options,
                context=json_field("context", self.context) or default_context(self, context),
            )
        except PushdownError as exc:
            raise failure(exc) from None
        if run.fallback is not None:
            self.log.warning(
                "pushdown: the answer could not be applied, the DataFrame ran as written: %s", run.fallback
            )
        result = finish_run(self, run, target, write_to)
        result["spark"]["as_written"] = run.as_written  # the caller's own DataFrame ran
        result["dataframe"] = dataframe_summary(run)
        return result
