"""bench/engine_instructions.py counts the engine's instructions per optimization under callgrind: the count is
of the optimizations alone (start-up cancels out), and it repeats, so a change of a fraction of a percent shows."""

from __future__ import annotations

import json
import shutil

import pytest

from bench import engine_instructions as bench

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")


def test_instructions_per_optimization_are_counted_and_written(tmp_path):
    results = tmp_path / "instructions.json"
    lines: list[str] = []
    assert bench.main(["--rounds", "1", "--results", str(results)], lines.append) == 0
    (row,) = json.loads(results.read_text())["engines"]
    assert row["engine"] == "checkout" and row["from"] == str(bench.ROOT / "costmodel")
    # an optimization of a TPC-H plan is millions of instructions; start-up (~400M) is not in the count
    assert 1_000_000 < row["instructions"] < 200_000_000
    assert lines == [f"checkout ({row['from']}): {row['instructions']:,} instructions per optimization (1.000)"]


def test_the_service_request_is_counted_whole_and_written_beside(tmp_path):
    """``--path sql``: the service's whole SQL request (the adapter, the engine, the answer's JSON) is counted,
    so it costs more than the engine's optimization alone."""
    results = tmp_path / "instructions-sql.json"
    lines: list[str] = []
    assert bench.main(["--path", "sql", "--plans", "3", "--rounds", "1", "--results", str(results)], lines.append) == 0
    written = json.loads(results.read_text())
    (row,) = written["engines"]
    assert written["path"] == "sql" and written["plans"] == 3 and row["engine"] == "checkout"
    assert 2_000_000 < row["instructions"] < 400_000_000
    assert lines == [f"checkout ({row['from']}): {row['instructions']:,} instructions per sql request (1.000)"]
    engine_alone = bench.per_optimization("", 1, 3, "engine")["instructions"]
    assert isinstance(engine_alone, int) and row["instructions"] > engine_alone


def test_a_whole_request_counts_the_same_twice():
    """The service's request imports numpy, whose thread pool's idle spinning moved counts by percents; held to one
    thread, with the hash seed fixed, two counts of the same build differ by a few thousand instructions (a few
    millionths; the spinning moved them by 0.6%)."""
    first, _ = bench.count("", 1, "plan", 2)
    second, _ = bench.count("", 1, "plan", 2)
    assert abs(first - second) <= first // 100_000
