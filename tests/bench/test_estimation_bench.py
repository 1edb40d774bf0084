"""Smoke test of bench/estimation.py at a tiny scale: our analyze job, the sample estimator and DuckDB's
exact counts end to end on five predicates (Spark's CBO part is skipped: it is the full benchmark's)."""

from __future__ import annotations

import math
import shutil

import pytest

from tests.bench.scripts import load_bench
from tests.spark_session import get_spark, java_available

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")
pytest.importorskip("pyspark")
if shutil.which("tpchgen-cli") is None:
    pytest.skip("tpchgen-cli is not installed", allow_module_level=True)

#: Selective enough to be interesting, common enough that a 2,000-row sample holds plenty of matches.
SMOKE = ("l_ship_1994", "l_flag_r_status_f", "l_ship_receipt_1997", "o_date_late_status_o", "p_type_prefix")


def test_q_error_and_percentile():
    bench = load_bench("estimation")
    assert bench.q_error(50, 100) == 2.0
    assert bench.q_error(200, 100) == 2.0
    assert bench.q_error(0, 0) == 1.0  # both floored at one row
    assert bench.q_error(0.2, 3) == 3.0
    assert bench.q_error(None, 10) == math.inf
    values = [float(v) for v in range(1, 21)]
    assert bench.percentile(values, 0.5) == 10.0
    assert bench.percentile(values, 0.95) == 19.0
    assert bench.percentile(values, 1.0) == 20.0


def test_workload_is_well_formed():
    bench = load_bench("estimation")
    workload = bench.WORKLOAD
    assert len(workload) >= 40
    assert len({p.name for p in workload}) == len(workload)
    assert {p.table for p in workload} == set(bench.TABLES)
    kinds = {p.kind.split(":")[0] for p in workload}
    assert {"range", "eq", "in", "like", "correlated", "column-compare", "is_null"} <= kinds


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_estimation_bench_at_a_tiny_scale(tmp_path_factory):
    if not java_available():
        pytest.skip("no Java runtime: local Spark cannot start")
    bench = load_bench("estimation")
    data = bench.ensure_data(0.01, root=tmp_path_factory.mktemp("tpch"))
    paths = {t: data / t for t in bench.TABLES}
    workload = tuple(p for p in bench.WORKLOAD if p.name in SMOKE)
    assert len(workload) == len(SMOKE)

    report = bench.run_benchmark(get_spark(), paths, workload, spark_cbo=False, truth="duckdb", sample_rows=2_000)

    rows = report["predicates"]
    assert [r["name"] for r in rows] == list(SMOKE)
    assert all(r["true_rows"] > 0 for r in rows)
    assert all(math.isfinite(r["ours"]["q_error"]) and r["ours"]["q_error"] >= 1 for r in rows)
    assert all(r["ours"]["source"] == "sample" for r in rows), [(r["name"], r["ours"]["source"]) for r in rows]
    assert all(r["ours"]["interval"][0] <= r["ours"]["selectivity"] <= r["ours"]["interval"][1] for r in rows)
    # the wire predicate and its SQL text select the same sample rows (our evaluator vs DuckDB)
    assert report["sample_check_failures"] == []
    # lineitem at SF 0.01 has ~60,000 rows, so 2,000 is a true sample, not the whole table
    assert 1_000 < report["sample_rows"]["lineitem"] < 3_000
    assert math.isfinite(report["summary"]["ours"]["p95"])
    assert "spark" not in report["summary"]
