"""``pushdown optimize`` on SQL (a .sql file or --sql), run as a user runs it: a subprocess.

The command builds the same request body ``POST /optimize`` takes, so everything about
the answer is tested elsewhere; here: the flags, the output sections, the SQL after,
and errors that point at the line and column and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlglot

from tests.service.test_cli import REQUEST, run

CATALOG: dict[str, Any] = {
    "tables": {
        "cities": {
            "columns": [
                {"name": "id", "type": "int"},
                {"name": "name", "type": "string"},
                {"name": "state_id", "type": "int"},
            ],
            "row_count": 20000,
            "column_stats": {"state_id": {"ndv": 50, "min": 1, "max": 50, "null_count": 0}},
        },
        "states": {"columns": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}], "row_count": 50},
    }
}
QUERY = """\
SELECT c.name AS city, s.name AS state
FROM cities c JOIN states s ON c.state_id = s.id
WHERE c.name LIKE 'A%' AND s.name LIKE 'A%'
"""
SECTIONS = (
    "== explain before ==",
    "== explain after ==",
    "== cost before ==",
    "== cost after ==",
    "== decisions ==",
    "== sql to run ==",
)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "catalog.json").write_text(json.dumps(CATALOG))
    (tmp_path / "query.sql").write_text(QUERY)
    return {"catalog": tmp_path / "catalog.json", "query": tmp_path / "query.sql", "dir": tmp_path}


def _sql_after(stdout: str) -> str:
    """The rewritten query: the portable section when the one to run (Spark's) differs from it."""
    marker = "== sql portable (no barriers; Spark may move kept predicates) ==\n"
    section = marker if marker in stdout else "== sql to run ==\n"
    return stdout.split(section, 1)[1].split("\n== spark ==", 1)[0]


def test_a_sql_file_prints_explain_costs_decisions_and_the_rewritten_sql(
    files: dict[str, Path], clean_env: dict[str, str]
) -> None:
    result = run(["optimize", str(files["query"]), "--catalog", str(files["catalog"])], clean_env)
    assert result.returncode == 0, result.stderr
    positions = [result.stdout.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    assert "savings: " in result.stdout
    # Both LIKEs went below the join, where Spark's own pushdown puts them: the plan after shows it, and the
    # query to run is the query as written (nothing to add to the engine's pushdown, so no portable rewrite)
    explained = result.stdout.split("== explain after ==", 1)[1].split("== cost before ==", 1)[0]
    assert explained.index("Join") < explained.index("LIKE"), explained
    after = _sql_after(result.stdout)
    assert after.strip() == QUERY.strip(), after
    assert "== sql portable" not in result.stdout
    sqlglot.parse_one(after, read="spark")


def test_sql_flag_with_dialect_and_mode(files: dict[str, Path], clean_env: dict[str, str]) -> None:
    args = [
        "optimize",
        "--sql",
        QUERY,
        "--catalog",
        str(files["catalog"]),
        "--dialect",
        "duckdb",
        "--mode",
        "always",
        "--json",
    ]
    result = run(args, clean_env)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert {d["reason"] for d in answer["decisions"]} == {"mode_always"}
    assert isinstance(answer["warnings"], list)
    sqlglot.parse_one(answer["sql"], read="duckdb")


def test_mode_never_gives_back_the_query_unchanged(files: dict[str, Path], clean_env: dict[str, str]) -> None:
    args = ["optimize", str(files["query"]), "--catalog", str(files["catalog"]), "--mode", "never", "--json"]
    answer = json.loads(run(args, clean_env).stdout)
    assert {d["action"] for d in answer["decisions"]} == {"kept"}
    where = sqlglot.parse_one(answer["sql"], read="spark").args["where"]
    assert where is not None and where.sql().count("LIKE") == 2  # both still above the join


def test_a_json_request_still_works_and_may_carry_sql(files: dict[str, Path], clean_env: dict[str, str]) -> None:
    plan_request = files["dir"] / "plan.json"
    plan_request.write_text(json.dumps(REQUEST))
    assert run(["optimize", str(plan_request)], clean_env).returncode == 0
    sql_request = files["dir"] / "sql.json"
    sql_request.write_text(json.dumps({"sql": QUERY, "catalog": CATALOG}))
    result = run(["optimize", str(sql_request)], clean_env)
    assert result.returncode == 0, result.stderr
    assert "== sql to run ==" in result.stdout


@pytest.mark.parametrize(
    ("query", "message", "at", "caret_column"),
    [
        ("SELECT c.name\nFROM cities c\nWHERE (c.id > 3\n", "expected ')' near '3'", "line 3, column 15", 15),
        ("SELECT c.nam FROM cities c", "column nam does not exist", "line 1, column 10", 10),
        ("SELECT c.name FROM towns c", "table towns is neither in the request's catalog", "line 1, column 20", 20),
        (
            "SELECT c.id FROM cities c LATERAL VIEW posexplode(array(c.id)) e AS p, x",
            "LATERAL VIEW",
            "line 1, column",
            None,
        ),
    ],
    ids=["parse-error", "unknown-column", "unknown-table", "unsupported"],
)
def test_sql_errors_point_at_line_and_column_and_exit_2(
    files: dict[str, Path], clean_env: dict[str, str], query: str, message: str, at: str, caret_column: int | None
) -> None:
    bad = files["dir"] / "bad.sql"
    bad.write_text(query)
    result = run(["optimize", str(bad), "--catalog", str(files["catalog"])], clean_env)
    assert result.returncode == 2
    assert message in result.stderr
    assert f"at {at}" in result.stderr and str(bad) in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    if caret_column is not None:
        source, caret = result.stderr.splitlines()[-2:]
        assert caret.index("|") == source.index("|")
        assert caret.index("^") - (source.index("|") + 2) == caret_column - 1  # under the column-th character


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sql", "SELECT * FROM cities"], "SELECT * without a catalog"),  # nor an analyzed table
        (["QUERY", "--sql", "SELECT 1 FROM cities", "--catalog", "CATALOG"], "not both"),
        (["REQUEST", "--catalog", "CATALOG"], "apply to SQL input"),
        (["QUERY", "--catalog", "BROKEN"], "is not valid JSON"),
        (["QUERY", "--catalog", "MISSING"], "cannot read"),
        (["--sql", "SELECT 1 FROM cities", "--catalog", "CATALOG", "--mode", "fast"], "mode must be one of"),
        ([], "give a request file, a .sql file or --sql"),
    ],
    ids=["no-catalog", "file-and-flag", "flags-on-json", "broken-catalog", "missing-catalog", "bad-mode", "nothing"],
)
def test_bad_invocations_exit_2(
    files: dict[str, Path], clean_env: dict[str, str], args: list[str], message: str
) -> None:
    (files["dir"] / "broken.json").write_text("{")
    (files["dir"] / "request.json").write_text(json.dumps(REQUEST))
    names = {
        "QUERY": files["query"],
        "CATALOG": files["catalog"],
        "BROKEN": files["dir"] / "broken.json",
        "MISSING": files["dir"] / "absent.json",
        "REQUEST": files["dir"] / "request.json",
    }
    result = run(["optimize", *(str(names.get(a, a)) for a in args)], clean_env)
    assert result.returncode == 2, result.stdout
    assert message in result.stderr
    assert "Traceback" not in result.stderr
