"""Bearer-token auth, and the last-resort handler for bugs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from api.app import create_app
from api.deps import get_optimizer

TOKEN = "s3cret-token"
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def guarded(serve: Callable[..., Any], make_settings: Callable[..., Any]) -> Iterator[httpx.Client]:
    with serve(create_app(make_settings(api_token=TOKEN))) as url, httpx.Client(base_url=url, timeout=30) as http:
        yield http


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_optimize_without_a_token_is_401(guarded: httpx.Client, small_request: dict[str, Any]) -> None:
    response = guarded.post("/optimize", json=small_request)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json() == {"error": "unauthorized", "message": "missing or wrong bearer token", "path": "$"}


@pytest.mark.parametrize("header", [f"Bearer {TOKEN}x", "Bearer", f"Basic {TOKEN}", TOKEN, f"Bearer {TOKEN[:-1]}"])
def test_optimize_with_a_wrong_token_is_401(guarded: httpx.Client, small_request: dict[str, Any], header: str) -> None:
    response = guarded.post("/optimize", json=small_request, headers={"Authorization": header})
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"


def test_optimize_with_the_token_is_200(guarded: httpx.Client, small_request: dict[str, Any]) -> None:
    response = guarded.post("/optimize", json=small_request, headers=_auth(TOKEN))
    assert response.status_code == 200, response.text
    assert response.json()["context"] == small_request["context"]


def test_token_is_checked_before_the_body_is_read(guarded: httpx.Client) -> None:
    assert guarded.post("/optimize", content=b"{not json", headers=JSON).status_code == 401


def test_healthz_needs_no_token(guarded: httpx.Client) -> None:
    response = guarded.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


@pytest.mark.parametrize("path", ["/docs", "/openapi.json"])
def test_docs_need_the_token_too(guarded: httpx.Client, path: str) -> None:
    assert guarded.get(path).status_code == 401
    assert guarded.get(path, headers=_auth(TOKEN)).status_code == 200


def test_without_a_configured_token_no_header_is_needed(client: httpx.Client, small_request: dict[str, Any]) -> None:
    assert client.post("/optimize", json=small_request).status_code == 200


class _Broken:
    def optimize(self, request: Any) -> dict[str, Any]:
        raise RuntimeError("secret internal state /etc/passwd")


def test_a_bug_is_a_500_without_details_and_the_server_lives_on(
    serve: Callable[..., Any],
    make_settings: Callable[..., Any],
    small_request: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = create_app(make_settings())
    app.dependency_overrides[get_optimizer] = _Broken
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        response = http.post("/optimize", json=small_request)
        assert response.status_code == 500
        assert response.json() == {"error": "internal", "message": "internal error", "path": "$"}
        assert "secret" not in response.text and "Traceback" not in response.text
        assert http.get("/healthz").status_code == 200
    assert any(r.name == "api.errors" and r.exc_info for r in caplog.records)  # logged for the operator
