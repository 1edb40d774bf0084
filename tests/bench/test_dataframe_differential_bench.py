"""bench/dataframe_differential.py: the campaign's counts from its outcomes (the campaign itself is the full tier's
tests/correctness/test_dataframe_differential.py at a smaller size)."""

from __future__ import annotations

from tests.bench.scripts import load_bench
from tests.correctness.dataframe_check import Outcome


def test_the_summary_counts_rewrites_moves_mismatches_and_errors_by_reason() -> None:
    bench = load_bench("dataframe_differential")
    outcomes = [
        Outcome(1, "same", ["scan", "filter"], rewritten=True, downward=2, upward=1, seconds={"original": 1.0}),
        Outcome(2, "same", ["scan"], downward=1, applied=True, seconds={"original": 3.0}),
        Outcome(3, "mismatch", ["scan", "join_full"], reason="rows", detail="missing ..."),
        Outcome(4, "error", ["scan"], reason="fallback: AnalysisException: x"),
        Outcome(5, "error", ["scan"], reason="fallback: AnalysisException: x"),
        Outcome(6, "same", ["scan"], opaque=["Deduplicate: dropDuplicates on a subset of the columns"]),
    ]
    summary = bench.summarize(outcomes)
    assert summary["pipelines"] == 6 and summary["same"] == 3 and summary["as_written"] == 2
    assert summary["as_written_with_the_answer_applied_too"] == 1
    assert summary["rewritten"] == 1 and summary["rewritten_with_upward_moves"] == 1
    assert summary["pipelines_with_downward_moves"] == 2 and summary["downward_decisions"] == 3
    assert summary["pipelines_with_upward_moves"] == 1 and summary["upward_decisions"] == 1
    assert [m["seed"] for m in summary["mismatches"]] == [3]
    assert summary["errors"] == 2 and summary["errors_by_reason"] == {"fallback: AnalysisException: x": 2}
    assert summary["opaque_nodes_by_reason"] == {"Deduplicate: dropDuplicates on a subset of the columns": 1}
    assert summary["operators_written"]["scan"] == 6
    assert summary["seconds_median_per_phase"] == {"original": 2.0}
