"""bench/pullup_dataframes.py: every query of the pull-up workload (bench/pullup_workload.py) has a DataFrame form,
and a DataFrame form returns its SQL form's rows (TPC-H sf0.01 on the shared local Spark session), as written and
as ``run_dataframe`` runs it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.bench.scripts import load_bench
from tests.spark_session import get_spark, java_available


def test_every_sql_query_of_the_workload_has_a_dataframe_form() -> None:
    workload = load_bench("pullup_workload")
    forms = load_bench("pullup_dataframes").builders(spark=None, expensive=None)
    assert [q.name for q in workload.QUERIES] == list(forms)


@pytest.fixture(scope="module")
def tpch_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Any]:
    """A new session on the shared Spark with TPC-H sf0.01 registered, the workload's UDF both ways (2 loops)."""
    if not java_available():
        pytest.skip("no Java runtime: local Spark cannot start")
    if not (Path(sys.executable).with_name("tpchgen-cli").exists() or shutil.which("tpchgen-cli")):
        pytest.skip("tpchgen-cli is not installed")
    workload = load_bench("pullup_workload")
    data = workload.ensure_data(0.01, tmp_path_factory.mktemp("tpch"))
    spark = get_spark().newSession()
    for table in workload.TABLES:
        spark.read.parquet(str(data / table)).createOrReplaceTempView(table)
    calls = workload.Calls(spark, 2)
    return workload, spark, calls


@pytest.mark.parametrize("name", ["p01_cte", "p08_dataframe_nesting"])
def test_a_dataframe_form_returns_its_sql_forms_rows_as_written_and_optimized(
    tpch_session: tuple[Any, Any, Any], name: str
) -> None:
    workload, spark, calls = tpch_session
    query = next(q for q in workload.QUERIES if q.name == name)
    make = load_bench("pullup_dataframes").builders(spark, calls.dataframe_udf)[name]
    expected = spark.sql(query.sql)
    rows = sorted(tuple(r) for r in expected.collect())
    assert rows and rows != [(0, None)], "the query selects nothing at this scale: the comparison would be empty"

    written = make()
    assert [(f.name, f.dataType) for f in written.schema.fields] == [
        (f.name, f.dataType) for f in expected.schema.fields
    ]
    assert sorted(tuple(r) for r in written.collect()) == rows

    run = workload.run_dataframe(
        make(),
        client=workload.DataFrameAnswers(),
        functions={calls.dataframe_udf: workload.FUNCTIONS[workload.UDF]},
        catalog=workload.scaled_catalog(0.01),
        options={"mode": "cost"},
    )
    assert run.fallback is None
    assert run.dataframe.schema == written.schema
    assert sorted(tuple(r) for r in run.collect()) == rows
