"""The command line's help reads cleanly (no raw markup), ``--functions`` declares a query's functions, and the
log format follows the terminal unless asked."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest

from service.logs import resolve_log_format
from tests.service.test_cli import REPO, pushdown_command

COMMANDS = ["", "serve", "analyze", "optimize", "explain", "savings"]
CATALOG = {
    "tables": {
        "orders": {
            "columns": [{"name": "id", "type": "int"}, {"name": "status", "type": "string"}],
            "row_count": 100000,
        }
    }
}
SQL = "SELECT id FROM orders WHERE my_udf(status)"


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*pushdown_command(), *args], capture_output=True, text=True, timeout=60, cwd=REPO, env=env)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_raw_markup(command: str, clean_env: dict[str, str]) -> None:
    result = run([*([command] if command else []), "--help"], {**clean_env, "COLUMNS": "120", "TERM": "dumb"})
    assert result.returncode == 0, result.stderr
    for markup in ("``", "[bold", "[/", "[dim", "[green", "[red", ":class:", ">>>"):
        assert markup not in result.stdout, (command, markup, result.stdout)


def test_explain_takes_functions_as_json_or_a_file(tmp_path: Path, clean_env: dict[str, str]) -> None:
    (tmp_path / "catalog.json").write_text(json.dumps(CATALOG))
    (tmp_path / "functions.json").write_text(json.dumps({"my_udf": {"cost": 5000}}))
    base = ["explain", "--sql", SQL, "--catalog", str(tmp_path / "catalog.json")]
    undeclared = run(base, clean_env)
    assert undeclared.returncode == 0, undeclared.stderr
    assert "unknown_function" in undeclared.stdout
    for given in ('{"my_udf": {"cost": 5000}}', str(tmp_path / "functions.json")):
        declared = run([*base, "--functions", given], clean_env)
        assert declared.returncode == 0, declared.stderr
        assert "unknown_function" not in declared.stdout and "my_udf(orders.status)" in declared.stdout
    typo = run([*base, "--functions", '{"my_udf": {"cots": 5000}}'], clean_env)
    assert typo.returncode == 2
    assert "unknown key 'cots'; did you mean 'cost'?" in typo.stderr and "$.functions.my_udf.cots" in typo.stderr
    broken = run([*base, "--functions", "{"], clean_env)
    assert broken.returncode == 2 and "--functions is not valid JSON" in broken.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_logs_are_text_on_a_terminal_and_json_otherwise_or_when_asked() -> None:
    assert resolve_log_format("auto", _Terminal()) == "text"
    assert resolve_log_format("auto", io.StringIO()) == "json"
    assert resolve_log_format("json", _Terminal()) == "json"
    assert resolve_log_format("text", io.StringIO()) == "text"
