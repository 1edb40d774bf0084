"""Bad inputs and the exact errors a user sees, over real HTTP: SQL errors as good as JSON errors.

Each case says what is wrong in the user's terms (no library internals), where (the path the user sent, the
line and column with a caret excerpt for SQL), and what they may have meant. The service has analyzed one
table, ``orders``, so an unknown table lists it and says how to analyze another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.settings import Settings
from service.statistics import StatisticsStore

Serve = Callable[[FastAPI], AbstractContextManager[str]]

ORDERS_COLUMNS = [
    {"name": "id", "type": "int"},
    {"name": "status", "type": "string"},
    {"name": "total", "type": "double"},
]
CATALOG = {"tables": {"orders": {"columns": ORDERS_COLUMNS, "row_count": 1000}}}
HINT = (
    "describe it under catalog.tables, or analyze it: pushdown analyze <path> --name ordrs "
    "(or POST /tables/ordrs/analyze)"
)
UNKNOWN_ORDRS = (
    f"table ordrs is neither in the request's catalog nor among the analyzed tables; did you mean orders? ({HINT})"
)


@pytest.fixture(scope="module")
def http(
    serve: Serve, make_settings: Callable[..., Settings], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[httpx.Client]:
    """A service that has analyzed ``orders`` (stored statistics, no Spark needed)."""
    data = Path(tmp_path_factory.mktemp("errors-data"))
    settings = make_settings(data_dir=data)
    store = StatisticsStore.from_settings(settings)
    store.commit("orders", {"columns": ORDERS_COLUMNS, "row_count": 1234}, store.stage_sample("orders", None))
    with serve(create_app(settings)) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


# (name, request body, status, error code, path, message, detail entries that must be there)
CASES: list[tuple[str, dict[str, Any], int, str, str, str, dict[str, Any]]] = [
    (
        "unknown table, no catalog sent",
        {"sql": "SELECT id, total FROM ordrs WHERE status = 'returned'"},
        422,
        "unknown_table",
        "$.sql",
        UNKNOWN_ORDRS,
        {"table": "ordrs", "available": ["orders"], "did_you_mean": ["orders"], "hint": HINT, "line": 1, "column": 23},
    ),
    (
        "unknown table under SELECT * (the quickstart's query with a typo)",
        {"sql": "SELECT id, total FROM (SELECT * FROM ordrs) o WHERE status = 'returned'"},
        422,
        "unknown_table",
        "$.sql",
        UNKNOWN_ORDRS,
        {"available": ["orders"], "line": 1, "column": 38},
    ),
    (
        "unknown table beside a catalog",
        {"sql": "SELECT id FROM ordrs", "catalog": {"tables": {"items": {"columns": ["id"]}}}},
        422,
        "unknown_table",
        "$.sql",
        UNKNOWN_ORDRS,
        {
            "available": ["items", "orders"],
            "did_you_mean": ["orders"],
            "excerpt": "SELECT id FROM ordrs\n               ^",
        },
    ),
    (
        "unknown dialect",
        {"sql": "SELECT id FROM orders", "dialect": "sparkk"},
        422,
        "unknown_dialect",
        "$.dialect",
        "unknown SQL dialect 'sparkk'; did you mean spark or spark2?",
        {"dialect": "sparkk", "did_you_mean": ["spark", "spark2"]},
    ),
    (
        "comparison without its right-hand side",
        {"sql": "SELECT id FROM orders WHERE status = ", "catalog": CATALOG},
        422,
        "parse_error",
        "$.sql",
        "incomplete comparison: '=' has nothing on its right-hand side",
        {
            "line": 1,
            "column": 36,
            "excerpt": "SELECT id FROM orders WHERE status = \n                                   ^",
        },
    ),
    (
        "unbalanced parenthesis",
        {"sql": "SELECT id FROM orders\nWHERE (status = 'x'", "catalog": CATALOG},
        422,
        "parse_error",
        "$.sql",
        "expected ')' near \"'x'\"",
        {"line": 2},
    ),
    (
        "misspelled keyword",
        {"sql": "SELEC id FROM orders", "catalog": CATALOG},
        422,
        "parse_error",
        "$.sql",
        "unexpected 'FROM'",
        {"line": 1, "column": 10, "excerpt": "SELEC id FROM orders\n         ^"},
    ),
    (
        "unterminated string",
        {"sql": "SELECT id FROM orders WHERE status = 'open", "catalog": CATALOG},
        422,
        "parse_error",
        "$.sql",
        "the SQL cannot be split into tokens: an unterminated string literal or quoted name?",
        {},
    ),
    (
        "a built-in called in a way the parser cannot take",
        {"sql": "SELECT MAP(status) FROM orders", "catalog": CATALOG},
        422,
        "parse_error",
        "$.sql",
        "the query cannot be read: a function called with the wrong number or kind of arguments, or an "
        "unfinished construct?",
        {},
    ),
    (
        "unknown column",
        {"sql": "SELECT id FROM orders WHERE statsu = 'x'", "catalog": CATALOG},
        422,
        "unknown_column",
        "$.sql",
        "column statsu does not exist in orders; did you mean status?",
        {"name": "statsu", "did_you_mean": ["status"], "line": 1, "column": 29},
    ),
    (
        "unknown column of an analyzed table",
        {"sql": "SELECT id FROM orders WHERE totl > 3"},
        422,
        "unknown_column",
        "$.sql",
        "column totl does not exist in orders; did you mean total?",
        {"did_you_mean": ["total"]},
    ),
    (
        "typo in a top-level function declaration",
        {"sql": "SELECT id FROM orders WHERE my_udf(status)", "catalog": CATALOG, "functions": {"my_udf": {"cots": 5}}},
        422,
        "invalid_options",
        "$.functions.my_udf.cots",
        "unknown key 'cots'; did you mean 'cost'?",
        {"did_you_mean": "cost"},
    ),
    (
        "typo in a function declared under options",
        {"sql": "SELECT id FROM orders", "catalog": CATALOG, "options": {"functions": {"f": {"cots": 5}}}},
        422,
        "invalid_options",
        "$.options.functions.f.cots",
        "unknown key 'cots'; did you mean 'cost'?",
        {},
    ),
]


@pytest.mark.parametrize(
    ("body", "status", "code", "path", "message", "detail"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_gets_its_exact_error(
    http: httpx.Client, body: dict[str, Any], status: int, code: str, path: str, message: str, detail: dict[str, Any]
) -> None:
    response = http.post("/optimize", json=body)
    assert response.status_code == status, response.text
    got = response.json()
    assert (got["error"], got["path"], got["message"]) == (code, path, message)
    assert "sqlglot" not in response.text and "<class" not in response.text
    for key, value in detail.items():
        assert got["detail"][key] == value, (key, got["detail"])


def test_unknown_dialect_lists_the_accepted_ones(http: httpx.Client) -> None:
    got = http.post("/optimize", json={"sql": "SELECT 1", "dialect": "nope"}).json()
    assert got["path"] == "$.dialect" and {"spark", "duckdb", "postgres"} <= set(got["detail"]["available"])


def test_a_misspelled_function_is_warned_about(http: httpx.Client) -> None:
    response = http.post("/optimize", json={"sql": "SELECT id FROM orders WHERE lenght(status) = 4"})
    assert response.status_code == 200, response.text
    assert (
        "function lenght is not one the engine knows, so predicates calling it stay where they are; "
        "did you mean length or len or bit_length? (or declare it under functions)"
    ) in response.json()["warnings"]


def test_get_on_optimize_is_a_json_405_with_the_allowed_methods(http: httpx.Client) -> None:
    response = http.get("/optimize")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json() == {
        "error": "method_not_allowed",
        "message": "GET is not allowed on /optimize; use POST",
        "path": "$",
        "detail": {"method": "GET", "allowed": ["POST"]},
    }
