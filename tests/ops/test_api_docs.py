"""docs/api.md cannot drift: every route the app serves, each status it declares and every error code the code
can raise is documented there, and nothing documented there is gone from the code."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.routing import Mount

from api.app import create_app
from api.errors import STATUS_BY_CODE
from service.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "api.md").read_text()
#: Calls whose first string argument is an error code (``_refuse``: the guard's refusals before any route).
ERROR_CALLS = frozenset({"InputError", "PlanError", "SqlError", "SubstraitError", "_refuse"})
STATUS_FIRST: frozenset[str] = frozenset()
#: Codes made by the error handlers themselves rather than raised by name.
HANDLER_CODES = frozenset({"internal", "http_error"})


def sections() -> dict[tuple[str, str], str]:
    """``### `METHOD /path``` sections of the Routes part, by (method, path)."""
    routes = DOC.split("## Routes", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^### `([A-Z]+) (\S+)`\s*$", routes, flags=re.M)
    return {(parts[i], parts[i + 1]): parts[i + 2] for i in range(1, len(parts) - 2, 3)}


def documented_codes() -> set[str]:
    table = DOC.split("## Errors", 1)[1].split("\n## ", 1)[0]
    return {
        code
        for line in table.splitlines()
        if line.startswith("| `")
        for code in re.findall(r"`([a-z_]+)`", line.split("|")[1])
    }


def raised_codes() -> dict[str, set[str]]:
    """Every error code a call in api/, service/ or costmodel/ raises by name, with the files raising it."""
    found: dict[str, set[str]] = {}
    for folder in ("api", "service", "costmodel"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):  # def f(..., code: str = "unknown_key")
                    args = node.args.args + node.args.kwonlyargs
                    defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + node.args.defaults
                    for arg, default in zip(args, defaults + node.args.kw_defaults, strict=True):
                        if arg.arg == "code" and isinstance(default, ast.Constant) and isinstance(default.value, str):
                            found.setdefault(default.value, set()).add(str(path.relative_to(ROOT)))
                    continue
                if not isinstance(node, ast.Call):
                    continue
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name not in ERROR_CALLS:
                    continue
                args = node.args[1:] if name in STATUS_FIRST else node.args
                if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
                    found.setdefault(args[0].value, set()).add(str(path.relative_to(ROOT)))
    return found


@pytest.fixture(scope="module")
def app(make_settings: Callable[..., Settings]) -> FastAPI:
    return create_app(make_settings())


def served(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of every route, hidden ones included; a mount of static files as ``GET <path>/{file}``."""
    out: set[tuple[str, str]] = set()

    def visit(routes: list[Any], prefix: str) -> None:
        for route in routes:
            if isinstance(route, APIRoute):
                out.update((method, prefix + route.path) for method in route.methods if method != "HEAD")
            elif isinstance(route, Mount):
                out.add(("GET", prefix + route.path + "/{file}"))
            elif hasattr(route, "original_router"):  # a router included in another (FastAPI keeps them nested)
                visit(route.original_router.routes, prefix + route.include_context.prefix)

    visit(app.routes, "")
    return out


def test_every_route_is_documented_and_every_documented_route_exists(app: FastAPI) -> None:
    documented = set(sections())
    missing = served(app) - documented - {("GET", "/dashboard/"), ("GET", "/dashboard/assets/{file}")}
    assert not missing, f"routes the app serves that docs/api.md does not document: {sorted(missing)}"
    gone = documented - served(app)
    assert not gone, f"docs/api.md documents routes the app does not serve: {sorted(gone)}"


def test_each_route_s_statuses_are_in_its_section(app: FastAPI) -> None:
    docs = sections()
    for path, operations in app.openapi()["paths"].items():
        for method, operation in operations.items():
            text = docs[(method.upper(), path)]
            missing = [status for status in operation["responses"] if not re.search(rf"\b{status}\b", text)]
            assert not missing, f"{method.upper()} {path}: statuses {missing} are not in its section of docs/api.md"


def test_every_error_code_is_documented_and_every_documented_code_exists() -> None:
    raised = raised_codes()
    assert len(raised) > 20  # the collection works: the code raises dozens of codes by name
    expected = set(raised) | set(STATUS_BY_CODE) | HANDLER_CODES
    documented = documented_codes()
    missing = {code: sorted(raised.get(code, ["api/errors.py"])) for code in expected - documented}
    assert not missing, f"error codes raised but not in docs/api.md's Errors table: {missing}"
    assert not documented - expected, f"docs/api.md lists codes nothing raises: {sorted(documented - expected)}"


def _optimize_section() -> str:
    return sections()[("POST", "/optimize")]


def test_every_request_field_is_in_the_request_table() -> None:
    from service.request import OptimizeRequest

    rows = {m for m in re.findall(r"^\| `([a-z_]+)` \|", _optimize_section(), flags=re.M)}
    assert rows == set(OptimizeRequest.model_fields)


def test_every_answer_field_is_documented_and_full_only_ones_are_marked() -> None:
    from api.responses import OptimizeResponse
    from service.answer import FULL_ONLY_KEYS

    answer = _optimize_section().split("Answer (200)", 1)[1]
    bullets = [line for line in answer.splitlines() if line.startswith("- ")]
    named = {name for line in bullets for name in re.findall(r"`([a-z_]+)`", line.split(":", 1)[0])}
    assert set(OptimizeResponse.model_fields) <= named
    for key in FULL_ONLY_KEYS:
        assert any(line.startswith(f"- `{key}` (*full*)") for line in bullets), key
