"""bench/engine_stages.py runs optimize_wire's steps one by one to time them: its answer must be
optimize_wire's, or the breakdown would time something else."""

from __future__ import annotations

import json
from pathlib import Path

from bench import engine_stages as bench
from costmodel import optimize_wire
from costmodel.passes import PIPELINE

ROOT = Path(__file__).resolve().parents[2]
TPCH = ROOT / "bench" / "tpch"


def test_the_staged_run_answers_as_optimize_wire_does():
    catalog = json.loads((TPCH / "catalog.json").read_text())
    for path in sorted((TPCH / "plans").glob("q*.json")):
        plan = json.loads(path.read_text())
        times: dict[str, float] = {}
        assert bench.staged(plan, catalog, times) == optimize_wire(plan, catalog, baseline=True), path.stem
        assert [name for name, _ in PIPELINE] == [s for s in times if s in dict(PIPELINE)]


def test_the_breakdown_names_every_stage_and_adds_up(tmp_path):
    results = tmp_path / "stages.json"
    lines: list[str] = []
    assert bench.main(["--iterations", "1", "--queries", "q05,q21", "--results", str(results)], lines.append) == 0
    stages = json.loads(results.read_text())["stages"]
    names = [s["stage"] for s in stages]
    assert names[:2] == ["read catalog", "read plan"] and names[-3:] == ["answer", "full answer parts", "unique ids"]
    assert {name for name, _ in PIPELINE} <= set(names)
    assert abs(sum(s["share"] for s in stages) - 1) < 0.01
    assert lines[-1].split()[0] == "total"
