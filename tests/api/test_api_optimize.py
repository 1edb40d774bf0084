"""POST /optimize over real HTTP: the happy path, and every kind of bad input answered with a 4xx JSON body."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from api.app import create_app
from api.responses import OptimizeResponse
from service import deep_json

#: What a client sends with a raw body; anything else is 415.
JSON = {"content-type": "application/json"}

#: What a client sends with a raw body; anything else is 415.
JSON = {"content-type": "application/json"}
RESPONSE_KEYS = {"request_id", "context", "plan", "decisions", "estimates", "rewrites", "warnings", "cost", "explain"}


def assert_still_serving(client: httpx.Client) -> None:
    assert client.get("/healthz").json()["status"] == "ok"


def assert_error(response: httpx.Response, status: int, code: str, path: str | None = None) -> dict[str, Any]:
    """A 4xx in the service's shape: code, message, JSON path; never a stack trace."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["error"] == code, body
    assert isinstance(body["message"], str) and body["message"]
    assert body["path"].startswith("$")
    if path is not None:
        assert body["path"] == path, body
    assert "Traceback" not in response.text
    return body


# ---------------------------------------------------------------- success


def test_small_plan_is_optimized(client: httpx.Client, small_request: dict[str, Any]) -> None:
    response = client.post("/optimize", json={**small_request, "detail": "full"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) >= RESPONSE_KEYS | {"spark"}
    assert set(body["cost"]) >= {"before", "after", "savings"}
    assert body["cost"]["before"]["nodes"] and body["cost"]["after"]["nodes"]
    assert set(body["explain"]) == {"before", "after"}
    assert body["plan"]["op"] == "project"
    OptimizeResponse.model_validate(body)  # the documented response model matches what is served


def test_the_default_answer_is_the_summary_and_full_adds_the_matrix_tables_and_trees(
    client: httpx.Client, small_request: dict[str, Any]
) -> None:
    summary = client.post("/optimize", json=small_request).json()
    full = client.post("/optimize", json={**small_request, "detail": "full"}).json()
    assert set(full) - set(summary) == {"decisions", "explain", "spark"}  # spark: plan input, full only
    assert set(summary) - set(full) == set()
    for side in ("before", "after"):
        assert summary["cost"][side] == {"total": full["cost"][side]["total"]}
    same = {key for key in summary if key not in ("request_id", "cost", "cache")}
    assert {key: summary[key] for key in same} == {key: full[key] for key in same}
    assert summary["summary"] and summary["summary"][0]["predicate"]
    OptimizeResponse.model_validate(summary)


def test_an_unknown_detail_is_a_422_naming_it(client: httpx.Client, small_request: dict[str, Any]) -> None:
    response = client.post("/optimize", json={**small_request, "detail": "everything"})
    assert response.status_code == 422
    assert response.json()["path"] == "$.detail"


def test_response_echoes_context_and_carries_a_fresh_request_id(
    client: httpx.Client, small_request: dict[str, Any]
) -> None:
    first = client.post("/optimize", json=small_request).json()
    second = client.post("/optimize", json=small_request).json()
    assert first["context"] == small_request["context"]
    assert uuid.UUID(first["request_id"]).version == 4
    assert first["request_id"] != second["request_id"]


def test_nodes_without_ids_get_ids(client: httpx.Client, small_request: dict[str, Any]) -> None:
    plan = client.post("/optimize", json=small_request).json()["plan"]
    ids = []
    node: dict[str, Any] | None = plan
    while node is not None:
        ids.append(node["id"])
        node = node.get("input")
    assert all(isinstance(i, str) and i for i in ids)
    assert len(set(ids)) == len(ids)


def test_900_nested_filters_over_one_scan_are_accepted(
    client: httpx.Client, catalog: dict[str, Any], nested_filters: Callable[[int], dict[str, Any]]
) -> None:
    response = client.post("/optimize", json={"plan": nested_filters(900), "catalog": catalog, "detail": "full"})
    assert response.status_code == 200, response.text[:500]
    assert set(response.json()) >= RESPONSE_KEYS


# ---------------------------------------------------------------- bad input


def test_malformed_json_is_a_400_with_line_and_column(client: httpx.Client) -> None:
    body = b'{\n  "plan": {"op": "scan",,}\n}'
    response = client.post("/optimize", content=body, headers={"content-type": "application/json"})
    detail = assert_error(response, 400, "malformed_json", "$")["detail"]
    assert (detail["line"], detail["column"]) == (2, 25)  # the second comma
    assert_still_serving(client)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"", "malformed_json"),
        (b'{"plan": NaN}', "malformed_json"),
        (b"\xff\xfe{}", "malformed_json"),
    ],
    ids=["empty", "nan", "not-utf8"],
)
def test_bodies_that_are_not_json_are_400(client: httpx.Client, body: bytes, code: str) -> None:
    assert_error(client.post("/optimize", content=body, headers=JSON), 400, code, "$")
    assert_still_serving(client)


def test_numbers_json_allows_but_python_cannot_hold_are_422(client: httpx.Client) -> None:
    # 1e999 would be written back as Infinity, which is not JSON; a 5000-digit integer does not convert.
    assert_error(client.post("/optimize", content=b'{"plan": {"lit": 1e999}}', headers=JSON), 422, "invalid_number")
    assert_error(
        client.post("/optimize", content=b'{"plan": {"lit": 1' + b"0" * 5000 + b"}}", headers=JSON),
        422,
        "invalid_number",
    )
    assert_still_serving(client)


def test_unknown_op_names_the_op_path(client: httpx.Client, catalog: dict[str, Any]) -> None:
    plan = {"op": "project", "exprs": [], "input": {"op": "frobnicate", "input": {"op": "scan", "table": "cities"}}}
    body = assert_error(client.post("/optimize", json={"plan": plan, "catalog": catalog}), 422, "unknown_op")
    assert body["path"] == "$.plan.input.op"
    assert "filter" in body["detail"]["known"]
    assert_error(client.post("/optimize", json={"plan": {"op": "nope"}}), 422, "unknown_op", "$.plan.op")
    assert_still_serving(client)


def test_unknown_column_lists_the_columns_that_exist(client: httpx.Client, catalog: dict[str, Any]) -> None:
    plan = {
        "op": "filter",
        "predicate": {"fn": "=", "args": [{"col": "population"}, {"lit": 1}]},
        "input": {"op": "scan", "table": "cities"},
    }
    body = assert_error(client.post("/optimize", json={"plan": plan, "catalog": catalog}), 422, "unknown_column")
    assert body["path"] == "$.plan.predicate.args[0].col"
    assert body["detail"]["column"] == "population"
    assert {"cities.id", "cities.name", "cities.state_id"} <= set(body["detail"]["available"])
    assert_still_serving(client)


@pytest.mark.parametrize(
    ("request_body", "path", "error_type"),
    [
        ({"plan": "scan cities"}, "$.plan", "dict_type"),
        ({"plan": {"op": "scan", "table": "cities"}, "catalog": ["cities"]}, "$.catalog", "dict_type"),
        ({"plan": {"op": "scan", "table": "cities"}, "context": {"run": 20261122}}, "$.context.run", "string_type"),
        ({"sql": 42}, "$.sql", "string_type"),
        ({"plan": {"op": "scan", "table": "cities"}, "plna": {}}, "$.plna", "extra_forbidden"),
        ({}, "$", "plan_or_sql"),
        ({"plan": {"op": "scan", "table": "cities"}, "sql": "SELECT 1"}, "$", "plan_or_sql"),
        ([{"op": "scan"}], "$", "model_type"),
    ],
    ids=["plan-string", "catalog-list", "run-int", "sql-int", "typo", "neither", "both", "array"],
)
def test_envelope_of_wrong_types_is_a_422_with_the_path(
    client: httpx.Client, request_body: Any, path: str, error_type: str
) -> None:
    body = assert_error(client.post("/optimize", json=request_body), 422, "invalid_request", path)
    assert error_type in {e["type"] for e in body["detail"]["errors"]}
    assert_still_serving(client)


@pytest.mark.parametrize(
    ("plan", "code", "path"),
    [
        ({"op": "limit", "count": "ten", "input": {"op": "scan", "table": "cities"}}, "invalid_node", "$.plan.count"),
        (
            {"op": "filter", "predicate": 7, "input": {"op": "scan", "table": "cities"}},
            "invalid_expression",
            "$.plan.predicate",
        ),
        ({"op": "filter", "input": {"op": "scan", "table": "cities"}}, "missing_field", "$.plan.predicate"),
        ({"op": "scan", "table": "towns"}, "unknown_table", "$.plan.table"),
    ],
    ids=["count-string", "predicate-int", "no-predicate", "unknown-table"],
)
def test_plan_errors_are_422_with_the_engine_code_and_path(
    client: httpx.Client, catalog: dict[str, Any], plan: dict[str, Any], code: str, path: str
) -> None:
    assert_error(client.post("/optimize", json={"plan": plan, "catalog": catalog}), 422, code, path)
    assert_still_serving(client)


def test_bad_options_are_422(client: httpx.Client, small_request: dict[str, Any]) -> None:
    small_request["options"] = {"mode": "sometimes"}
    assert_error(client.post("/optimize", json=small_request), 422, "invalid_options", "$.options.mode")
    assert_still_serving(client)


# ---------------------------------------------------------------- depth and size limits


def test_10000_level_plan_is_refused_before_parsing_and_the_server_lives(client: httpx.Client) -> None:
    levels = 10_000
    raw = '{"plan": ' + '{"op": "filter", "input": ' * levels + '{"op": "scan", "table": "cities"}' + "}" * levels + "}"
    body = assert_error(client.post("/optimize", content=raw.encode(), headers=JSON), 422, "too_deep", "$")
    assert body["detail"]["limit"] == 2500
    assert body["detail"]["depth"] == levels + 2
    assert_still_serving(client)


def test_10000_nested_arrays_inside_a_string_are_not_depth(client: httpx.Client, small_request: dict[str, Any]) -> None:
    small_request["context"]["run"] = "[" * 10_000
    response = client.post("/optimize", json=small_request)
    assert response.status_code == 200, response.text[:500]
    assert response.json()["context"]["run"] == "[" * 10_000


def test_a_plan_deeper_than_the_json_module_reaches_is_answered(client: httpx.Client, catalog: dict[str, Any]) -> None:
    # 1,500 levels, past the C json module's reach at the default recursion limit: read, optimized and
    # written back without recursion (service.deep_json, costmodel.trampoline). The engine takes 10,000
    # (tests/costmodel/test_deep_inputs.py); the answer's summary names each operator by its whole path
    # from the root, which is quadratic in depth, so this stays smaller.
    levels = 1_500
    plan: dict[str, Any] = {"op": "scan", "table": "cities"}
    for _ in range(levels):
        plan = {"op": "project", "exprs": [{"expr": {"col": "state_id"}, "as": "state_id"}], "input": plan}
    plan = {"op": "filter", "predicate": {"fn": ">", "args": [{"col": "state_id"}, {"lit": 40}]}, "input": plan}
    raw = deep_json.dumps({"plan": plan, "catalog": catalog, "detail": "full"}).encode()
    response = client.post("/optimize", content=raw, headers=JSON)
    assert response.status_code == 200, response.text[:500]
    answer = deep_json.loads(response.text)
    scan = answer["plan"]
    while scan["op"] != "scan":
        scan = scan["input"]
    assert scan["filters"] == [{"fn": ">", "args": [{"col": "state_id"}, {"lit": 40, "type": "int"}]}]
    assert sum(d["action"] == "pushed" for d in answer["decisions"]) == levels + 1
    assert_still_serving(client)


@pytest.fixture(scope="module")
def small_limits(serve: Callable[..., Any], make_settings: Callable[..., Any]) -> Any:
    with (
        serve(create_app(make_settings(max_body_bytes=4096, max_json_depth=20))) as url,
        httpx.Client(base_url=url, timeout=30) as http,
    ):
        yield http


def test_body_over_the_limit_by_content_length_is_413(small_limits: httpx.Client) -> None:
    payload = json.dumps({"plan": {"op": "scan", "table": "t", "pad": "x" * 5000}}).encode()
    body = assert_error(small_limits.post("/optimize", content=payload, headers=JSON), 413, "body_too_large", "$")
    assert body["detail"]["limit"] == 4096
    assert_still_serving(small_limits)


def test_body_over_the_limit_without_content_length_is_413_while_streaming(small_limits: httpx.Client) -> None:
    def chunks() -> Any:
        yield b'{"plan": {"op": "scan", "table": "t", "pad": "'
        for _ in range(20):
            yield b"x" * 1000
        yield b'"}}'

    response = small_limits.post("/optimize", content=chunks(), headers=JSON)
    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert "content-length" not in response.request.headers
    assert_error(response, 413, "body_too_large", "$")
    assert_still_serving(small_limits)


def test_body_at_the_limit_is_read(small_limits: httpx.Client) -> None:
    prefix, suffix = b'{"plan": {"op": "scan", "table": "t"}, "context": {"run": "', b'"}}'
    payload = prefix + b"x" * (4096 - len(prefix) - len(suffix)) + suffix
    assert len(payload) == 4096
    # It gets past the size check and fails later, on the empty catalog.
    assert_error(small_limits.post("/optimize", content=payload, headers=JSON), 422, "unknown_table", "$.plan.table")


def test_json_depth_limit_is_the_configured_one(small_limits: httpx.Client) -> None:
    def nested(depth: int) -> bytes:  # {"plan": {...}} with `depth` objects in all
        return b'{"plan": ' + b'{"a": ' * (depth - 2) + b"{}" + b"}" * (depth - 2) + b"}"

    assert_error(small_limits.post("/optimize", content=nested(21), headers=JSON), 422, "too_deep", "$")
    # At the limit it reaches the engine, which names what is wrong with the plan.
    assert_error(small_limits.post("/optimize", content=nested(20), headers=JSON), 422, "unknown_op", "$.plan.op")


def test_sql_without_the_sql_module_is_501(client: httpx.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "service.sql", None)  # the server runs in this process
    assert_error(client.post("/optimize", json={"sql": "SELECT 1"}), 501, "sql_unavailable", "$.sql")
    assert_still_serving(client)
