"""The ``pushdown`` command, run as a user runs it: a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.cli import format_table, render
from tests.serving import free_port, wait_for_health

REPO = Path(__file__).resolve().parents[2]
COST_HEADER = ["operator", "id", "rows", "received", "rows", "emitted", "k", "cost"]
DECISION_HEADER = ["predicate", "operator", "action", "reason", "p", "r", "r1", "lhs", "rhs"]
REQUEST = {
    "plan": {
        "op": "project",
        "exprs": [{"expr": {"col": "name"}, "as": "name"}],
        "input": {
            "op": "filter",
            "predicate": {"fn": ">", "args": [{"col": "state_id"}, {"lit": 40, "type": "int"}]},
            "input": {"op": "scan", "table": "cities"},
        },
    },
    "catalog": {"tables": {"cities": {"columns": ["id", "name", "state_id"], "row_count": 20000}}},
}


def pushdown_command() -> list[str]:
    """The installed console script next to this interpreter, else the module."""
    script = Path(sys.executable).with_name("pushdown")
    return [str(script)] if script.exists() else [sys.executable, "-m", "service.cli"]


def run(args: list[str], env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*pushdown_command(), *args], input=stdin, capture_output=True, text=True, timeout=60, cwd=REPO, env=env
    )


@pytest.fixture
def request_file(tmp_path: Path) -> Path:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(REQUEST))
    return path


def test_optimize_prints_explain_costs_and_decisions(request_file: Path, clean_env: dict[str, str]) -> None:
    result = run(["optimize", str(request_file)], clean_env)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for heading in (
        "== explain before ==",
        "== explain after ==",
        "== cost before ==",
        "== cost after ==",
        "== decisions ==",
    ):
        assert heading in out
    lines = out.splitlines()
    for heading, first_column in (
        ("== cost before ==", "operator"),
        ("== cost after ==", "operator"),
        ("== decisions ==", "predicate"),
    ):
        header = lines[lines.index(heading) + 1]
        assert header.startswith(first_column)
    assert lines[lines.index("== cost before ==") + 1].split() == COST_HEADER
    assert lines[lines.index("== decisions ==") + 1].split() == DECISION_HEADER
    assert sum(line.startswith("total ") for line in lines) == 2
    assert any(line.startswith("savings: ") and "% against rule-based pushdown (cost " in line for line in lines)
    assert any(line.startswith("savings against the query as written: ") and line.endswith("%") for line in lines)


def test_optimize_json_prints_the_raw_response(request_file: Path, clean_env: dict[str, str]) -> None:
    result = run(["optimize", "--json", str(request_file)], clean_env)
    assert result.returncode == 0, result.stderr
    response = json.loads(result.stdout)
    assert {"request_id", "plan", "decisions", "cost", "explain"} <= set(response)
    assert response["plan"]["op"] == "project"


def test_optimize_reads_stdin(clean_env: dict[str, str]) -> None:
    result = run(["optimize", "--json", "-"], clean_env, stdin=json.dumps(REQUEST))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["plan"]["op"] == "project"


@pytest.mark.parametrize(
    ("content", "message", "path"),
    [
        (
            '{"plan": {"op": "scan", "table": "towns"}, "catalog": {"tables": {}}}',
            "table 'towns' is not in the catalog",
            "$.plan.table",
        ),
        ('{"plan": {"op": "scan",}}', "malformed JSON", "$"),
        ('{"plan": {}, "sql": "SELECT 1"}', "exactly one of plan, sql or substrait is required", "$"),
        ('{"plan": ' + '{"op": "filter", "input": ' * 10_000 + "{}" + "}" * 10_001, "nests 10002 levels", "$"),
    ],
    ids=["plan-error", "malformed", "envelope", "too-deep"],
)
def test_bad_requests_print_message_and_path_and_exit_2(
    tmp_path: Path, clean_env: dict[str, str], content: str, message: str, path: str
) -> None:
    request = tmp_path / "bad.json"
    request.write_text(content)
    result = run(["optimize", str(request)], clean_env)
    assert result.returncode == 2
    assert message in result.stderr
    assert f"at {path}" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_file_exits_2(tmp_path: Path, clean_env: dict[str, str]) -> None:
    result = run(["optimize", str(tmp_path / "absent.json")], clean_env)
    assert result.returncode == 2
    assert "cannot read" in result.stderr


def test_serve_answers_healthz_and_honours_the_environment(clean_env: dict[str, str]) -> None:
    port = free_port()
    env = {**clean_env, "PUSHDOWN_API_TOKEN": "cli-token"}
    proc = subprocess.Popen(
        [*pushdown_command(), "serve", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_health(url, proc, 30, output=lambda: proc.stdout.read() if proc.stdout else "")
        health = httpx.get(f"{url}/healthz", timeout=2)
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert httpx.post(f"{url}/optimize", json=REQUEST).status_code == 401  # PUSHDOWN_API_TOKEN was read
        ok = httpx.post(f"{url}/optimize", json=REQUEST, headers={"Authorization": "Bearer cli-token"})
        assert ok.status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=15)


# ---------------------------------------------------------------- rendering (no subprocess)


def _response() -> dict[str, Any]:
    def table(total: float, rows: list[tuple[str, str, float, float, float]]) -> dict[str, Any]:
        nodes = [
            {"operator": op, "id": i, "rows_in": a, "rows_out": b, "k": k, "cost": k * a} for op, i, a, b, k in rows
        ]
        return {"total": total, "nodes": nodes}

    return {
        "explain": {"before": "Project\n  Filter\n    Scan cities", "after": "Project\n  Scan cities [filters]"},
        "cost": {
            "before": table(84050, [("join", "n3", 20050, 20000, 4), ("scan", "n5", 20000, 20000, 1)]),
            "after": table(24250, [("join", "n3", 2050, 2000, 4)]),
            "savings": 0.7115,
        },
        "decisions": [
            {
                "predicate": "c.name LIKE 'A%'",
                "operator": "n3",
                "action": "pushed",
                "reason": "beneficial",
                "p": 0.9,
                "r": 1.0,
                "r1": 4.0,
                "lhs": 0.0,
                "rhs": 3.6,
            },
            {"predicate": "score(x) > 1", "operator": "n2", "action": "blocked", "reason": "limit"},
        ],
    }


def test_render_shows_tables_totals_savings_and_decisions() -> None:
    lines = render(_response()).splitlines()
    before = lines.index("== cost before ==")
    assert lines[before + 1 : before + 6] == [
        "operator  id  rows received  rows emitted  k   cost",
        "--------  --  -------------  ------------  -  -----",
        "join      n3          20050         20000  4  80200",
        "scan      n5          20000         20000  1  20000",
        "total                                         84050",
    ]
    assert "savings against the query as written: 71.2%" in lines
    decisions = lines.index("== decisions ==")
    assert lines[decisions + 1 :] == [
        "predicate         operator  action   reason        p  r  r1  lhs  rhs",
        "----------------  --------  -------  ----------  ---  -  --  ---  ---",
        "c.name LIKE 'A%'  n3        pushed   beneficial  0.9  1   4    0  3.6",
        "score(x) > 1      n2        blocked  limit         -  -   -    -    -",
    ]
    assert "  Scan cities [filters]" in lines


def test_format_table_right_aligns_numbers_and_left_aligns_text() -> None:
    table = format_table(["name", "n"], [["a", 1], ["bbbb", 1234.5678]])
    assert table.splitlines() == ["name        n", "----  -------", "a           1", "bbbb  1234.57"]
