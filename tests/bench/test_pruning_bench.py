"""Smoke test of bench/pruning.py at a tiny scale: runs end to end, prunes nothing wrongly, keeps up with pyarrow."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.bench.scripts import load_bench

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")
if shutil.which("tpchgen-cli") is None:
    pytest.skip("tpchgen-cli is not installed", allow_module_level=True)


@pytest.mark.timeout(120)
def test_pruning_bench_at_a_tiny_scale(tmp_path):
    bench = load_bench("pruning")
    results = tmp_path / "pruning.json"
    code = bench.main(
        ["--scale", "0.01", "--row-groups", "8", "--cache-dir", str(tmp_path / "data"), "--results", str(results)]
    )
    report = json.loads(results.read_text())
    assert code == 0
    assert report["target"]["wrong"] == 0
    for kind in ("sorted", "unsorted"):
        rows = report["files"][kind]["predicates"]
        assert len(rows) == 20
        assert all(r["row_groups"] == 8 for r in rows)
        assert all(not r["wrong"] for r in rows), [r for r in rows if r["wrong"]]
        # the ideal bounds everyone's count: nothing is pruned beyond it
        assert all(r["minmax_provable"] <= r["ideal_pruned"] for r in rows)
    sorted_rows = report["files"]["sorted"]["predicates"]
    assert all(r["ours_pruned"] >= r["pyarrow_pruned"] for r in sorted_rows), sorted_rows
    assert report["files"]["sorted"]["totals"]["ours_pruned"] > 0  # sorted data does let us skip groups


def test_min_max_analysis_sees_what_the_box_rules_out():
    bench = load_bench("pruning")
    from costmodel.catalog import ColumnStats, Container

    group = Container("rg0", 10, {"x": ColumnStats(min=5, max=9, null_count=0)})
    can = lambda pred: bench.minmax_can_match(bench.dnf(pred), group)  # noqa: E731
    x = bench.col("x")
    assert can(bench.fn("=", x, bench.lit(7)))
    assert not can(bench.fn("<", x, bench.lit(5)))
    assert not can(bench.fn("and", bench.fn(">", x, bench.lit(7)), bench.fn("<", x, bench.lit(6))))
    assert can(bench.fn("or", bench.fn("<", x, bench.lit(2)), bench.fn(">=", x, bench.lit(9))))
    assert not can(bench.fn("not", bench.fn("between", x, bench.lit(0), bench.lit(10))))
    assert not can(bench.fn("in", x, bench.lit(1), bench.lit(10)))
