"""The expensive-predicate workload of bench/spark_e2e.py: predicates pipelines really run, over TPC-H tables.

Python and pandas UDFs, a regular expression over long strings, JSON extraction and string similarity, on the
left or the right of selective joins, above aggregates and windows, and two queries where pushing does pay (a
join that keeps every row; a filter on a window's partition key). Each query declares its functions' costs to
the service as a SQL caller would (``functions``), relative to a comparison (cost 1).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: a predicate pipelines write, over the orders' JSON documents (bench data: ``orders_doc``)
DOC_TABLE = "orders_doc"


@dataclass(frozen=True)
class WorkloadQuery:
    name: str
    what: str
    sql: str
    functions: dict[str, dict[str, Any]] = field(default_factory=dict)


def _udf(cost: float) -> dict[str, dict[str, Any]]:
    return {"expensive_check": {"cost": cost}}


WORKLOAD: list[WorkloadQuery] = [
    WorkloadQuery(
        "w01_udf_left_of_join",
        "Python UDF on orders above a join to 0.8% of customers",
        "SELECT count(*) AS n, sum(o.o_totalprice) AS total FROM orders o JOIN customer c ON o.o_custkey = "
        "c.c_custkey WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 7 AND expensive_check(o.o_comment)",
        _udf(5000),
    ),
    WorkloadQuery(
        "w02_pandas_left_of_join",
        "pandas UDF (regex counts over the comment repeated 20 times) above a selective join",
        "SELECT o.o_orderpriority, count(*) AS n FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
        "WHERE c.c_mktsegment = 'AUTOMOBILE' AND c.c_nationkey = 3 AND pandas_check(o.o_comment) "
        "GROUP BY o.o_orderpriority",
        {"pandas_check": {"cost": 400}},
    ),
    WorkloadQuery(
        "w03_udf_right_of_join",
        "Python UDF on customer (the join's right side) above a join to three days of orders",
        "SELECT c.c_mktsegment, count(*) AS n FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
        "WHERE o.o_orderdate BETWEEN DATE '1995-03-01' AND DATE '1995-03-03' AND expensive_check(c.c_comment) "
        "GROUP BY c.c_mktsegment",
        _udf(5000),
    ),
    WorkloadQuery(
        "w04_regex_long_strings",
        "regular expression over lineitem comments repeated 8 times, above a join to one week of orders",
        "SELECT count(*) AS n FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey "
        "WHERE o.o_orderdate BETWEEN DATE '1996-01-01' AND DATE '1996-01-07' "
        "AND repeat(l.l_comment, 8) RLIKE '(quick|slyly|careful)[a-z ]{0,30}(bold|furious|final)[a-z ]{0,30}"
        "(deposit|request)s? [a-z]+$'",
        {"rlike": {"cost": 800}},
    ),
    WorkloadQuery(
        "w05_json_extraction",
        "JSON extraction (a Python UDF parsing each document) above a join to 0.8% of customers",
        "SELECT count(*) AS n FROM orders_doc d JOIN customer c ON d.o_custkey = c.c_custkey "
        "WHERE c.c_mktsegment = 'MACHINERY' AND c.c_nationkey = 11 "
        "AND json_get(d.doc, 'detail.priority') = '1-URGENT'",
        {"json_get": {"cost": 1500}},
    ),
    WorkloadQuery(
        "w06_string_similarity",
        "Levenshtein distance on part names above a join to one day of lineitems",
        "SELECT count(*) AS n FROM part p JOIN lineitem l ON p.p_partkey = l.l_partkey "
        "WHERE l.l_shipdate = DATE '1995-06-17' AND levenshtein(p.p_name, 'forest green chiffon antique') < 20",
        {"levenshtein": {"cost": 200}},
    ),
    WorkloadQuery(
        "w07_udf_above_aggregate",
        "Python UDF on the grouping key above an aggregate (1.5M orders -> 100k customers)",
        "SELECT g.o_custkey, g.n, g.total FROM (SELECT o_custkey, count(*) AS n, sum(o_totalprice) AS total "
        "FROM orders GROUP BY o_custkey) g WHERE expensive_check(CAST(g.o_custkey AS STRING))",
        _udf(5000),
    ),
    WorkloadQuery(
        "w08_window_key_push_pays",
        "pandas UDF on a window's partition key: pushing it shrinks the window's sort (pushing pays)",
        "SELECT count(*) AS n, max(w.r) AS worst FROM (SELECT o_custkey, o_orderkey, rank() OVER (PARTITION BY "
        "o_custkey ORDER BY o_totalprice DESC) AS r FROM orders) w WHERE pandas_check(CAST(w.o_custkey AS STRING))",
        {"pandas_check": {"cost": 400}},
    ),
    WorkloadQuery(
        "w09_unselective_join_push_pays",
        "Python UDF above a join that keeps every order (pushing pays: the join gets fewer rows)",
        "SELECT count(*) AS n FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
        "WHERE expensive_check(o.o_comment)",
        _udf(5000),
    ),
]


def workload_catalog(catalog: dict[str, Any]) -> dict[str, Any]:
    """The TPC-H catalog plus ``orders_doc`` (one JSON document per order, orders' statistics)."""
    out = copy.deepcopy(catalog)
    orders = out["tables"]["orders"]
    keep = ("o_orderkey", "o_custkey")
    out["tables"][DOC_TABLE] = {
        "columns": [c for c in orders["columns"] if c["name"] in keep] + [{"name": "doc", "type": "string"}],
        "row_count": orders["row_count"],
        "column_stats": {k: v for k, v in orders.get("column_stats", {}).items() if k in keep},
    }
    return out


def ensure_doc_table(spark: SparkSession, data: Path) -> Path:
    """``data/orders_doc``: orders as JSON documents (comment, clerk, priority nested), written once."""
    target = data / DOC_TABLE
    if any(target.glob("*.parquet")):
        return target
    spark.read.parquet(str(data / "orders")).selectExpr(
        "o_orderkey",
        "o_custkey",
        "to_json(named_struct('comment', o_comment, 'clerk', o_clerk, "
        "'detail', named_struct('priority', o_orderpriority, 'status', o_orderstatus))) AS doc",
    ).write.mode("overwrite").parquet(str(target))
    return target


def make_check(loops: int) -> Callable[[str | None], bool | None]:
    """Deterministic, about ``loops`` multiply-adds per call; true for about 90% of strings."""

    def expensive_check(text: str | None) -> bool | None:
        if text is None:
            return None
        h = 0
        for i in range(loops):
            h = (h * 31 + ord(text[i % len(text)]) if text else h * 31 + i) % 1_000_003
        return h % 10 != 0

    return expensive_check


def register_functions(spark: SparkSession, loops: int) -> None:
    """The workload's UDFs on ``spark``: ``expensive_check`` and ``json_get`` (Python), ``pandas_check`` (pandas)."""
    import pandas as pd
    from pyspark.sql.functions import pandas_udf
    from pyspark.sql.types import BooleanType, StringType

    spark.udf.register("expensive_check", make_check(loops), BooleanType())

    def check(texts: pd.Series) -> pd.Series:
        long = texts.str.repeat(20)
        hits = long.str.count(r"(?:a|e)[a-z]*(?:ly|al)\b") + long.str.count(r"\b[a-z]{3,}s\b")
        return (hits % 7 != 0).astype("boolean").where(texts.notna())

    check.__annotations__ = {"texts": pd.Series, "return": pd.Series}  # pandas_udf reads real types, not strings
    spark.udf.register("pandas_check", pandas_udf(check, BooleanType()))
    spark.udf.register("json_get", json_get, StringType())


def json_get(doc: str | None, path: str | None) -> str | None:
    """The value at a dotted ``path`` of a JSON document, as text (None where absent)."""
    if doc is None or path is None:
        return None
    value: Any = json.loads(doc)
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return None if value is None else str(value)
