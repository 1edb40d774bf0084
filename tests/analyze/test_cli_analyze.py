"""``pushdown analyze`` run as a user runs it: a subprocess with its own Spark."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from service.statistics import StatisticsStore
from tests.analyze.conftest import make_table, write_parquet
from tests.service.test_cli import REPO, pushdown_command
from tests.spark_session import java_available

ROWS = 3_000


def run(args: list[str], env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*pushdown_command(), *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env
    )


@pytest.mark.slow
def test_analyze_stores_a_version_and_prints_a_summary(tmp_path: Path, clean_env: dict[str, str]) -> None:
    if not java_available():
        pytest.skip("no Java runtime: local Spark cannot start")
    table = write_parquet(make_table(ROWS).select(["id", "skew", "category"]), tmp_path / "events", row_group=1000)
    env = {
        **clean_env,
        "PUSHDOWN_DATA_DIR": str(tmp_path / "data"),
        "PUSHDOWN_SPARK_MASTER": "local[1]",
        "COLUMNS": "200",
    }
    result = run(["analyze", str(table), "--name", "events", "--sample-rows", "300"], env)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "events v1: 3,000 rows" in out and "4 containers" in out  # 2 files of 2 row groups
    for column in ("id", "skew", "category"):
        assert column in out
    store = StatisticsStore(tmp_path / "data" / "pushdown.db", tmp_path / "data" / "samples")
    stored = store.get("events")
    assert stored is not None and stored.version == 1 and stored.stats["row_count"] == ROWS
    assert stored.stats["source"] == {"path": str(table), "format": "parquet"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["analyze", "/no/such/dir", "--name", "t"], "no file or directory"),
        (["analyze", ".", "--name", "../t"], "table name"),
        (["analyze", ".", "--name", "t", "--format", "xlsx"], "format"),
    ],
)
def test_bad_input_exits_2_before_spark_starts(
    args: list[str], message: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    result = run(args, {**clean_env, "PUSHDOWN_DATA_DIR": str(tmp_path)}, timeout=60)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "pushdown.db").exists()


def test_json_summary_flag_is_documented(clean_env: dict[str, str]) -> None:
    result = run(["analyze", "--help"], {**clean_env, "COLUMNS": "200"}, timeout=60)
    assert result.returncode == 0
    for option in ("--name", "--format", "--sample-rows", "--master", "--json"):
        assert option in result.stdout
    json.dumps(result.stdout)


@pytest.mark.slow
def test_a_relative_path_is_stored_absolute_and_the_change_warning_s_advice_works(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    """``pushdown analyze quickstart/orders`` from one directory; the service (another directory) checks the
    files, warns once they change, and the command the warning gives re-analyzes them from a third directory."""
    import shlex

    from service.optimize import OptimizeInput, OptimizeService

    if not java_available():
        pytest.skip("no Java runtime: local Spark cannot start")
    first, third = tmp_path / "first", tmp_path / "third"
    third.mkdir()
    write_parquet(make_table(ROWS).select(["id", "skew"]), first / "quickstart" / "orders", row_group=1000)
    data = tmp_path / "data"
    env = {**clean_env, "PUSHDOWN_DATA_DIR": str(data), "PUSHDOWN_SPARK_MASTER": "local[1]", "PYTHONPATH": str(REPO)}
    analyzed = subprocess.run(
        [*pushdown_command(), "analyze", "quickstart/orders", "--name", "orders", "--sample-rows", "100"],
        capture_output=True, text=True, timeout=180, cwd=first, env=env,
    )  # fmt: skip
    assert analyzed.returncode == 0, analyzed.stderr[-3000:]
    store = StatisticsStore(data / "pushdown.db", data / "samples")
    stored = store.get("orders")
    assert stored is not None
    assert stored.stats["source"]["path"] == str((first / "quickstart" / "orders").resolve())

    service = OptimizeService(store)  # this process's directory is the repository, not ``first``
    query = OptimizeInput(sql="SELECT id FROM orders WHERE skew = 1")
    answer = service.optimize(query)
    assert answer["statistics"][0]["source_changed"] is False and not answer["warnings"]

    pq.write_table(make_table(10).select(["id", "skew"]), first / "quickstart" / "orders" / "part-9.parquet")
    (warning,) = service.optimize(query)["warnings"]
    command = warning.split("re-analyze it: ", 1)[1].split(" (or POST", 1)[0]
    assert command.startswith("pushdown analyze /")
    again = subprocess.run(
        [*pushdown_command(), *shlex.split(command)[1:], "--sample-rows", "100"],
        capture_output=True, text=True, timeout=180, cwd=third, env=env,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    answer = service.optimize(query)
    assert answer["statistics"][0]["version"] == 2 and not answer["warnings"]
