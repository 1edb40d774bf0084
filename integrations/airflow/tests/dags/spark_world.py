"""Two small tables rich in NULLs, duplicates and skew, their catalog, and a counted UDF, for the Spark operator's
DAGs (pushdown_spark_dags.py) and tests. A module of its own, imported by name from both, so that the DAG file
(which Airflow loads under a module name of its own) and the tests count the same UDF calls."""

from __future__ import annotations

from typing import Any

SEGMENTS = ["BUILDING", "AUTOMOBILE", "MACHINERY", "HOUSEHOLD", "FURNITURE"]
ORDERS, CUSTOMERS = 4000, 400
SQL = (
    "SELECT o.o_id AS id, c.c_name, o.o_totalprice * 2 FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
    "WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5 AND expensive_check(o.o_comment)"
)
JOINED = (
    "SELECT count(*) FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
    "WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5"
)
FUNCTIONS = {"expensive_check": {"cost": 5000}}
CATALOG = {
    "tables": {
        "orders": {
            "columns": [
                {"name": "o_id", "type": "int"},
                {"name": "o_custkey", "type": "int"},
                {"name": "o_comment", "type": "string"},
                {"name": "o_totalprice", "type": "double"},
            ],
            "row_count": ORDERS,
            "column_stats": {"o_custkey": {"ndv": CUSTOMERS, "min": 0, "max": CUSTOMERS - 1, "null_count": 173}},
        },
        "customer": {
            "columns": [
                {"name": "c_custkey", "type": "int"},
                {"name": "c_mktsegment", "type": "string"},
                {"name": "c_nationkey", "type": "int"},
                {"name": "c_name", "type": "string"},
            ],
            "row_count": CUSTOMERS,
            "column_stats": {
                "c_custkey": {"ndv": CUSTOMERS, "min": 0, "max": CUSTOMERS - 1, "null_count": 0},
                "c_mktsegment": {"ndv": 5, "null_count": 12},
                "c_nationkey": {"ndv": 25, "min": 0, "max": 24, "null_count": 9},
            },
        },
    }
}

#: The UDF's calls, counted by a Spark accumulator (set up by ``session_with_udf``).
CALLS: list[Any] = []


def tables() -> dict[str, tuple[str, list[tuple[Any, ...]]]]:
    orders = [
        (
            i % 3900,  # duplicates
            None if i % 23 == 0 else (i % 37 if i % 3 == 0 else i % CUSTOMERS),  # NULLs, skewed to 37 keys
            None if i % 19 == 0 else "carefully final deposits " * (1 + i % 4) + str(i % 101),
            None if i % 29 == 0 else float((i * 37) % 1000) + 0.5,
        )
        for i in range(ORDERS)
    ]
    customers = [
        (i, None if i % 31 == 0 else SEGMENTS[i % 5], None if i % 41 == 0 else i % 25, f"Customer#{i}")
        for i in range(CUSTOMERS)
    ]
    return {
        "orders": ("o_id INT, o_custkey INT, o_comment STRING, o_totalprice DOUBLE", orders),
        "customer": ("c_custkey INT, c_mktsegment STRING, c_nationkey INT, c_name STRING", customers),
    }


def session_with_udf(context: Any):
    """The caller's own session: temporary views and a Python UDF the runner must see (no ``newSession()``)."""
    from pyspark.sql import SparkSession
    from pyspark.sql.types import BooleanType

    spark = SparkSession.builder.getOrCreate()
    for name, (schema, rows) in tables().items():
        spark.createDataFrame(rows, schema).createOrReplaceTempView(name)
    if not CALLS:
        CALLS.append(spark.sparkContext.accumulator(0))
    calls = CALLS[0]

    def check(text: str | None) -> bool | None:
        calls.add(1)
        return None if text is None else len(text) % 3 != 0

    spark.udf.register("expensive_check", check, BooleanType())
    return spark


def session_on_parquet(context: Any):
    """A pipeline's session: the same tables written once as Parquet under ``params.data``, read as views."""
    from pathlib import Path

    spark = session_with_udf(context)
    root = Path(context["params"]["data"])
    for name, (schema, rows) in tables().items():
        path = root / name
        if not path.exists():
            spark.createDataFrame(rows, schema).coalesce(1).write.parquet(str(path))
        spark.read.parquet(str(path)).createOrReplaceTempView(name)
    return spark


def write_tables(spark: Any, root: str) -> None:
    """The tables as Parquet under ``root`` (once: a pipeline's input is there before it runs)."""
    from pathlib import Path

    for name, (schema, rows) in tables().items():
        path = Path(root) / name
        if not path.exists():
            spark.createDataFrame(rows, schema).coalesce(1).write.parquet(str(path))


def building_orders(spark: Any, data: str) -> Any:
    """``SQL`` written with the DataFrame API over the Parquet tables under ``data``, as a pipeline writes it: the
    UDF made with ``F.udf`` and never registered, applied after the join.

    The UDF's function is defined in here, so that it is pickled by value: Spark's Python workers cannot import
    this module (a function of an importable module is pickled by reference to it)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    if not CALLS:
        CALLS.append(spark.sparkContext.accumulator(0))
    calls = CALLS[0]

    def expensive_check(text):  # no type hints: PySpark would take it for a pandas UDF
        calls.add(1)
        return None if text is None else len(text) % 3 != 0

    write_tables(spark, data)
    check = F.udf(expensive_check, BooleanType())
    orders = spark.read.parquet(f"{data}/orders")
    customer = spark.read.parquet(f"{data}/customer")
    building = customer.filter((F.col("c_mktsegment") == "BUILDING") & (F.col("c_nationkey") == 5))
    joined = orders.join(building, F.col("o_custkey") == F.col("c_custkey")).filter(check(F.col("o_comment")))
    return joined.select(F.col("o_id").alias("id"), "c_name", (F.col("o_totalprice") * 2).alias("doubled"))
