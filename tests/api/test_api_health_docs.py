"""The service's open surfaces: liveness, the interactive docs, the OpenAPI schema, unknown routes."""

from __future__ import annotations

import httpx

from service import __version__


def test_healthz_answers_ok_with_the_version(client: httpx.Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": __version__}


def test_docs_serve_swagger_ui_pointing_at_the_schema(client: httpx.Client) -> None:
    response = client.get("/docs")
    assert response.status_code == 200
    assert "text/html" in response.headers["content-type"]
    assert "swagger-ui" in response.text
    assert "/openapi.json" in response.text


def test_openapi_documents_optimize_with_request_and_response_schemas(client: httpx.Client) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    post = schema["paths"]["/optimize"]["post"]
    schemas = schema["components"]["schemas"]

    request_ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert request_ref == "#/components/schemas/OptimizeRequest"
    request_schema = schemas["OptimizeRequest"]
    assert {"plan", "sql", "dialect", "catalog", "options", "context"} <= set(request_schema["properties"])
    assert "$defs" not in request_schema  # every reference resolves inside components

    ok = post["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert ok == "#/components/schemas/OptimizeResponse"
    for status in ("400", "401", "413", "422", "501"):
        error_ref = post["responses"][status]["content"]["application/json"]["schema"]["$ref"]
        assert error_ref == "#/components/schemas/ErrorResponse"
    assert "/healthz" in schema["paths"]


def test_every_schema_reference_resolves(client: httpx.Client) -> None:
    schema = client.get("/openapi.json").json()
    refs: list[str] = []
    stack: list[object] = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("$ref"), str):
                refs.append(item["$ref"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    names = set(schema["components"]["schemas"])
    assert refs
    assert {ref.removeprefix("#/components/schemas/") for ref in refs} <= names


def test_unknown_route_is_a_json_404(client: httpx.Client) -> None:
    response = client.get("/nope")
    assert response.status_code == 404
    assert response.json() == {
        "error": "not_found",
        "message": "no endpoint at /nope (see /docs for the API)",
        "path": "$",
    }


def test_wrong_method_is_a_json_405(client: httpx.Client) -> None:
    response = client.get("/optimize")
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"
