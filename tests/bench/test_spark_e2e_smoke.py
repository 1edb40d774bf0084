"""bench/spark_e2e.py end to end at scale 0.01: one run each, three TPC-H queries and two workload queries,
on the shared Spark session."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.bench.scripts import load_bench
from tests.spark_session import get_spark, java_available


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    if not java_available():
        pytest.skip("no Java runtime: local Spark cannot start")
    local = Path(sys.executable).with_name("tpchgen-cli")
    if not (local.exists() or shutil.which("tpchgen-cli")):
        pytest.skip("tpchgen-cli is not installed")
    bench = load_bench("spark_e2e")
    tmp = tmp_path_factory.mktemp("spark_e2e")
    output = tmp / "spark_e2e.json"
    argv = [
        "--scale",
        "0.01",
        "--runs",
        "1",
        "--queries",
        "q03,q06,q14",
        "--timeout",
        "60",
        "--workload",
        "w01,w07",
        "--udf-loops",
        "2",
        "--data-root",
        str(tmp / "data"),
        "--output",
        str(output),
    ]
    return bench.main(argv, spark=get_spark()), output


CONFIGS = ("A", "B", "C", "C2", "D")


def test_configurations_agree_on_rows(outcome: tuple[dict, Path]) -> None:
    result, _ = outcome
    assert sorted(result["queries"]) == ["q03", "q06", "q14"]
    assert sorted(result["workload"]) == ["w01_udf_left_of_join", "w07_udf_above_aggregate"]
    for name, row in {**result["queries"], **result["workload"]}.items():
        counts = {k: row[k]["row_count"] for k in CONFIGS}
        assert None not in counts.values(), (name, counts, row["results"])
        assert len(set(counts.values())) == 1, (name, counts)
        assert row["results_agree"] is True, (name, row["results"])
        for k in CONFIGS:
            assert row[k]["median_s"] is not None and row[k]["median_s"] > 0, (name, k, row[k])
        assert row["d_over_c"] is not None and row["c2_over_c"] is not None
    assert result["mismatches"] == []


def test_plan_checks_see_the_settings(outcome: tuple[dict, Path]) -> None:
    """A pushes nothing into the scans of a join query, C does; q14's comma join becomes a nested loop in A.
    On the workload, C pushes the UDF below the join, D (the runner, from Spark's defaults) keeps it above."""
    result, _ = outcome
    q03 = result["queries"]["q03"]
    assert all(not s["pushed"] for s in q03["A"]["plan_check"]["scans"])
    assert all(s["pushed"] for s in q03["C"]["plan_check"]["scans"])
    assert result["queries"]["q14"]["A"]["plan_check"]["nested_loop"] == 1
    udf = result["workload"]["w01_udf_left_of_join"]
    assert udf["barriers"] == ["expensive_check(o.o_comment)"] and udf["runner_conf"] == {}
    assert udf["A"]["plan_check"]["udf_evals"] == ["above"]
    assert udf["C"]["plan_check"]["udf_evals"] == ["below"]
    assert udf["D"]["plan_check"]["udf_evals"] == ["above"]


def test_json_written(outcome: tuple[dict, Path]) -> None:
    result, output = outcome
    written = json.loads(output.read_text())
    assert written["scale"] == 0.01 and written["runs"] == 1
    assert set(written["queries"]) == {"q03", "q06", "q14"}
    assert set(written["targets"]) == {
        "tpch_geomean_d_over_c_at_most_1",
        "tpch_no_query_above_1_10",
        "workload_geomean_d_over_c_at_most_0_3",
        "workload_no_query_slower_than_c",
        "zero_mismatches",
    }
    assert written["tpch_summary"]["geomean_d_over_c"] is not None and written["workload_summary"]["measured"] == 2
