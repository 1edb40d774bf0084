"""The optimize use case: what it adds to the engine's answer, and how it drives the SQL adapter."""

from __future__ import annotations

import sys
import types
import uuid
from typing import Any

import pytest

from costmodel import PlanError
from service.errors import InputError
from service.optimize import OptimizeInput, OptimizeService

CATALOG = {"tables": {"t": {"columns": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}]}}}
PLAN = {
    "op": "filter",
    "predicate": {"fn": ">", "args": [{"col": "a"}, {"lit": 1, "type": "int"}]},
    "input": {"op": "scan", "table": "t"},
}


class FakeSqlError(ValueError):
    def __init__(self, code: str, message: str, line: int | None, column: int | None, detail: dict | None = None):
        super().__init__(message)
        self.code, self.message, self.line, self.column, self.detail = code, message, line, column, detail or {}


@pytest.fixture
def fake_sql(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Stands in for service.sql (another engineer's module) and records how it is called."""
    import service.spark_plan  # noqa: F401 - imported for real first, so it never binds the stand-in below

    calls: dict[str, Any] = {}

    def sql_to_plan(sql: str, catalog: dict | None, dialect: str = "spark", parsed: object = None) -> dict:
        calls["sql_to_plan"] = (sql, catalog, dialect)
        if "oops" in sql:
            raise FakeSqlError("parse_error", "unexpected token", 1, 8, {"token": "oops"})
        return PLAN

    def plan_to_sql(plan: dict, dialect: str, source: str | None = None) -> str:
        calls["plan_to_sql"] = (plan, dialect)
        calls["source"] = source
        return "SELECT * FROM t WHERE a > 1"

    sql = types.ModuleType("service.sql")
    sql.sql_to_plan, sql.plan_to_sql = sql_to_plan, plan_to_sql  # type: ignore[attr-defined]
    errors = types.ModuleType("service.sql.errors")
    errors.SqlError = FakeSqlError  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "service.sql", sql)
    monkeypatch.setitem(sys.modules, "service.sql.errors", errors)
    return calls


def test_plan_request_gets_the_engine_answer_plus_id_and_context() -> None:
    context = {"pipeline": "p", "task": "t", "run": "r"}
    out = OptimizeService().optimize(OptimizeInput(plan=PLAN, catalog=CATALOG, context=context))
    assert uuid.UUID(out["request_id"]).version == 4
    assert out["context"] == context
    assert {"plan", "decisions", "estimates", "cost", "explain"} <= set(out)
    assert "sql" not in out


def test_plan_errors_pass_through_with_their_path() -> None:
    with pytest.raises(PlanError) as info:
        OptimizeService().optimize(OptimizeInput(plan={"op": "scan", "table": "nope"}, catalog=CATALOG))
    assert info.value.path == "$.plan.table"


def test_sql_is_converted_optimized_and_rendered_in_the_same_dialect(fake_sql: dict[str, Any]) -> None:
    out = OptimizeService().optimize(
        OptimizeInput(sql="SELECT * FROM t WHERE a > 1", dialect="duckdb", catalog=CATALOG)
    )
    assert fake_sql["sql_to_plan"] == ("SELECT * FROM t WHERE a > 1", CATALOG, "duckdb")
    assert fake_sql["plan_to_sql"] == (out["plan"], "duckdb")
    assert fake_sql["source"] == "SELECT * FROM t WHERE a > 1"  # the renderer puts the source's hints back
    assert out["sql"] == "SELECT * FROM t WHERE a > 1"


def test_sql_errors_become_input_errors_at_sql_with_line_and_column(fake_sql: dict[str, Any]) -> None:
    with pytest.raises(InputError) as info:
        OptimizeService().optimize(OptimizeInput(sql="SELECT oops", catalog=CATALOG))
    assert info.value.to_wire() == {
        "error": "parse_error",
        "message": "unexpected token",
        "path": "$.sql",
        "detail": {"line": 1, "column": 8, "token": "oops", "excerpt": "SELECT oops\n       ^"},
    }


def test_missing_sql_support_is_sql_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "service.sql", None)  # makes `import service.sql` fail
    with pytest.raises(InputError) as info:
        OptimizeService().optimize(OptimizeInput(sql="SELECT 1"))
    assert (info.value.code, info.value.path) == ("sql_unavailable", "$.sql")
