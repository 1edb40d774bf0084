"""bench/engine_instructions.py counts the engine's instructions per optimization under callgrind: the count is
of the optimizations alone (start-up cancels out)."""

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
    assert row["engine"] == "checkout" and row["build"] == "pure Python"
    # an optimization of a TPC-H plan is millions of instructions; start-up (~400M) is not in the count
    assert 1_000_000 < row["instructions"] < 200_000_000
    assert lines == [f"checkout (pure Python): {row['instructions']:,} instructions per optimization (1.000)"]
