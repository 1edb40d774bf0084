"""bench/feedback.py end to end at scale 0.01, two runs, on the shared Spark session: it runs, counts truly,
and the second run's estimates come from the first run's feedback."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.bench.scripts import load_bench
from tests.spark_session import get_spark, java_available

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    if not java_available():
        pytest.skip("no Java runtime: local Spark cannot start")
    if not (Path(sys.executable).with_name("tpchgen-cli").exists() or shutil.which("tpchgen-cli")):
        pytest.skip("tpchgen-cli is not installed")
    tmp = tmp_path_factory.mktemp("feedback_bench")
    output = tmp / "feedback.json"
    argv = ["--scale", "0.01", "--runs", "2", "--data-root", str(tmp / "data"), "--output", str(output)]
    return load_bench("feedback").main(argv, spark=get_spark()), output


def test_the_second_run_learns_from_the_first(outcome: tuple[dict[str, Any], Path]) -> None:
    result, output = outcome
    assert json.loads(output.read_text())["summary"] == result["summary"]
    rows = result["rows"]
    assert {r["run"] for r in rows} == {1, 2} and len(rows) == 2 * len(load_bench("feedback").WORKLOAD)
    second = [r for r in rows if r["run"] == 2]
    fixed = [r for r in second if r["task"] != "daily_early_shipments"]  # its literal moves, so its truth does
    assert second and all("feedback" in r["sources"] for r in second)
    assert all(r["q_error"] == pytest.approx(1.0, abs=1e-3) for r in fixed if r["true_rows"] > 0)
    summary = result["summary"]
    assert summary["after_feedback"]["p95_q_error"] <= summary["before_feedback"]["p95_q_error"]
    assert summary["feedback_cost_share"]["median"] is not None
