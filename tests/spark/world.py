"""Two small tables rich in NULLs, duplicates and skew, their catalog for the service, and a counting UDF."""

from __future__ import annotations

from typing import Any

ORDERS = 4000
CUSTOMERS = 400
SEGMENTS = ["BUILDING", "AUTOMOBILE", "MACHINERY", "HOUSEHOLD", "FURNITURE"]


def orders_rows() -> list[tuple[Any, ...]]:
    rows = []
    for i in range(ORDERS):
        custkey = None if i % 23 == 0 else (i % 37 if i % 3 == 0 else i % CUSTOMERS)  # skewed to 37 keys
        comment = None if i % 19 == 0 else ("carefully final deposits " * (1 + i % 4)) + str(i % 101)
        price = None if i % 29 == 0 else float((i * 37) % 1000) + 0.5
        rows.append((i % 3900, custkey, comment, price))  # o_id repeats: duplicates
    return rows


def customer_rows() -> list[tuple[Any, ...]]:
    return [
        (i, None if i % 31 == 0 else SEGMENTS[i % 5], None if i % 41 == 0 else i % 25, f"Customer#{i}")
        for i in range(CUSTOMERS)
    ]


ORDERS_DDL = "o_id INT, o_custkey INT, o_comment STRING, o_totalprice DOUBLE"
CUSTOMER_DDL = "c_custkey INT, c_mktsegment STRING, c_nationkey INT, c_name STRING"


def register(spark: Any) -> None:
    spark.createDataFrame(orders_rows(), ORDERS_DDL).createOrReplaceTempView("orders")
    spark.createDataFrame(customer_rows(), CUSTOMER_DDL).createOrReplaceTempView("customer")


def catalog() -> dict[str, Any]:
    """Columns and statistics that describe the tables above (what an analyze would report)."""
    return {
        "tables": {
            "orders": {
                "columns": [
                    {"name": "o_id", "type": "int"},
                    {"name": "o_custkey", "type": "int"},
                    {"name": "o_comment", "type": "string"},
                    {"name": "o_totalprice", "type": "double"},
                ],
                "row_count": ORDERS,
                "column_stats": {
                    "o_id": {"ndv": 3900, "min": 0, "max": 3899, "null_count": 0},
                    "o_custkey": {"ndv": CUSTOMERS, "min": 0, "max": CUSTOMERS - 1, "null_count": ORDERS // 23},
                    "o_totalprice": {"ndv": 1000, "min": 0.5, "max": 999.5, "null_count": ORDERS // 29},
                },
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
                    "c_mktsegment": {"ndv": 5, "null_count": CUSTOMERS // 31},
                    "c_nationkey": {"ndv": 25, "min": 0, "max": 24, "null_count": CUSTOMERS // 41},
                },
            },
        }
    }


class CountingUdf:
    """A Python UDF registered as ``name`` whose calls are counted with an accumulator."""

    def __init__(self, spark: Any, name: str = "expensive_check") -> None:
        from pyspark.sql.types import BooleanType

        self.name = name
        self.calls = spark.sparkContext.accumulator(0)
        calls = self.calls

        def check(text: str | None) -> bool | None:
            calls.add(1)
            return None if text is None else len(text) % 3 != 0

        spark.udf.register(name, check, BooleanType())

    def count(self, action: Any) -> tuple[Any, int]:
        """``action()``'s result and the UDF calls it made."""
        start = self.calls.value
        result = action()
        return result, self.calls.value - start
