"""The round-trip fixtures (test_roundtrip.py) on Spark: rewritten Spark SQL binds to the original's names and types.

test_roundtrip.py runs each fixture on DuckDB; here the same Spark SQL goes through the adapter as it is and
through the engine in ``always`` and ``cost`` modes, and the shared local session analyses each text (names, types
and clauses resolved; nothing runs): no rewritten SQL may fail to bind on Spark or change a column's name or type.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from costmodel import optimize_wire
from service.sql import plan_to_sql, sql_to_plan
from tests.sql.helpers import CATALOG, COLUMNS, ROWS
from tests.sql.test_roundtrip import CASES


@pytest.fixture(scope="module")
def spark() -> Any:
    from tests.spark_session import get_spark, java_available

    if not java_available():
        pytest.skip("no Java for local Spark")
    session = get_spark()
    for name, cols in COLUMNS.items():
        dates = [i for i, (_, t) in enumerate(cols) if t == "date"]
        data = [
            tuple(dt.date.fromisoformat(v) if i in dates and v is not None else v for i, v in enumerate(row))
            for row in ROWS[name]
        ]
        session.createDataFrame(data, schema=", ".join(f"{c} {t}" for c, t in cols)).createOrReplaceTempView(name)
    return session


#: Fixtures Spark itself refuses as written, and why (the test checks that it still does).
SPARK_REFUSES_THE_ORIGINAL = {
    "nested subqueries": "an outer reference two levels up (t.c inside EXISTS inside IN): UNRESOLVED_COLUMN",
}


def _shape(spark: Any, sql: str) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in spark.sql(sql).schema.fields]


@pytest.mark.parametrize(("name", "sql"), [c[:2] for c in CASES], ids=[c[0] for c in CASES])
def test_rewritten_spark_sql_binds_with_the_same_names_and_types(name: str, sql: str, spark: Any) -> None:
    if name in SPARK_REFUSES_THE_ORIGINAL:
        with pytest.raises(Exception, match="UNRESOLVED_COLUMN"):
            _shape(spark, sql)
        return
    expected = _shape(spark, sql)
    plan = sql_to_plan(sql, CATALOG, "spark")
    texts = {"as read": plan_to_sql(plan, "spark", source=sql)}
    for mode in ("always", "cost"):
        texts[mode] = plan_to_sql(optimize_wire(plan, CATALOG, {"mode": mode})["plan"], "spark", source=sql)
    for trip, text in texts.items():
        assert _shape(spark, text) == expected, f"{name} ({trip}):\n{text}"
