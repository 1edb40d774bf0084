"""What a web page the operator visits could make a browser do to the service on 127.0.0.1, and what a token
in a URL would leave behind: form posts (415), DNS rebinding (foreign Host, 400), CORS (none unless
configured), the dashboard's cookie login, tokens kept out of URLs and logs, and no token-less exposure."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from api.app import create_app
from tests.conftest import _make_settings, live_server
from tests.deploy.compose import compose, resolved
from tests.security.conftest import TOKEN, ServiceProcess, running_service, service_env
from tests.serving import free_port

BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_server(create_app(_make_settings(api_token=TOKEN))) as base:
        yield base


def small_json() -> bytes:
    return b'{"sql": "SELECT a FROM t WHERE a > 1", "catalog": {"tables": {"t": {"columns": [{"name": "a"}]}}}}'


@pytest.mark.parametrize(
    "content_type",
    [
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "text/plain",
        "text/plain; charset=utf-8",
        None,
        "application/json-patch+json",
    ],
)
@pytest.mark.parametrize("path", ["/optimize", "/tables/t/analyze", "/dashboard/login"])
def test_a_post_that_is_not_json_is_415(url: str, content_type: str | None, path: str) -> None:
    headers = {**BEARER, **({"Content-Type": content_type} if content_type else {})}
    response = httpx.post(url + path, content=small_json(), headers=headers)
    assert response.status_code == 415, response.text
    assert response.json()["error"] == "unsupported_media_type"


def test_json_with_parameters_is_fine(url: str) -> None:
    headers = {**BEARER, "Content-Type": "Application/JSON; charset=utf-8"}
    assert httpx.post(url + "/optimize", content=small_json(), headers=headers).status_code == 200


def test_a_browser_form_post_cannot_reach_the_engine_even_without_a_token() -> None:
    """The classic CSRF: <form method=post action=http://127.0.0.1:8000/optimize enctype=text/plain>."""
    with live_server(create_app(_make_settings())) as base:
        form = httpx.post(
            base + "/optimize",
            content=b'{"sql": "SELECT 1", "x": "=ignored"}',
            headers={"Content-Type": "text/plain", "Origin": "https://evil.example"},
        )
        assert form.status_code == 415


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.nip.io", "localhost.evil.example"])
def test_a_foreign_host_is_refused_on_loopback(url: str, host: str) -> None:
    for method, path in (("GET", "/healthz"), ("GET", "/api/savings"), ("POST", "/optimize")):
        response = httpx.request(method, url + path, headers={**BEARER, "Host": host}, json={})
        assert response.status_code == 400, (host, path)
        assert response.json()["error"] == "invalid_host"


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:1234", "[::1]:8000"])
def test_loopback_names_are_served(url: str, host: str) -> None:
    assert httpx.get(url + "/healthz", headers={"Host": host}).status_code == 200


def test_configured_host_names_are_served_too() -> None:
    app = create_app(_make_settings(allowed_hosts=["pushdown.internal"]))
    with live_server(app) as base:
        assert httpx.get(base + "/healthz", headers={"Host": "pushdown.internal:8000"}).status_code == 200
        assert httpx.get(base + "/healthz", headers={"Host": "other.internal"}).status_code == 400


def test_no_cors_by_default(url: str) -> None:
    preflight = httpx.options(
        url + "/optimize",
        headers={
            "Origin": "https://evil.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,authorization",
        },
    )
    assert "access-control-allow-origin" not in preflight.headers
    simple = httpx.get(url + "/healthz", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in simple.headers


def test_cors_for_configured_origins_only() -> None:
    app = create_app(_make_settings(cors_origins=["https://app.example"]))
    with live_server(app) as base:
        request_headers = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
        ok = httpx.options(base + "/optimize", headers={"Origin": "https://app.example", **request_headers})
        assert ok.headers.get("access-control-allow-origin") == "https://app.example"
        other = httpx.options(base + "/optimize", headers={"Origin": "https://evil.example", **request_headers})
        assert other.headers.get("access-control-allow-origin") is None


# ---------------------------------------------------------------- the dashboard's login


def test_dashboard_login_sets_an_http_only_strict_cookie_that_is_not_the_token(url: str) -> None:
    with httpx.Client(base_url=url) as browser:
        assert browser.get("/api/savings").status_code == 401
        assert browser.get("/dashboard/session").json() == {"auth_required": True, "signed_in": False}
        refused = browser.post("/dashboard/login", json={"token": "wrong"})
        assert refused.status_code == 401 and "set-cookie" not in refused.headers
        login = browser.post("/dashboard/login", json={"token": TOKEN})
        assert login.status_code == 204
        cookie = login.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
        assert TOKEN.lower() not in cookie
        assert browser.get("/api/savings").status_code == 200
        assert browser.get("/dashboard/session").json() == {"auth_required": True, "signed_in": True}
        # the cookie authenticates reads only: a write needs the bearer header
        assert (
            browser.post("/optimize", content=small_json(), headers={"Content-Type": "application/json"}).status_code
            == 401
        )
        browser.post("/dashboard/logout", json={})
        assert browser.get("/api/savings").status_code == 401


def test_a_cookie_from_another_token_is_refused() -> None:
    with live_server(create_app(_make_settings(api_token="first-token"))) as first, httpx.Client(base_url=first) as b:
        b.post("/dashboard/login", json={"token": "first-token"})
        cookies = dict(b.cookies)
    with live_server(create_app(_make_settings(api_token="second-token"))) as second:
        assert httpx.get(second + "/api/savings", cookies=cookies).status_code == 401


@pytest.mark.parametrize("query", ["token=x", "access_token=x", "api_token=x", "a=1&TOKEN=x"])
def test_a_token_in_a_url_is_refused(url: str, query: str) -> None:
    for path in ("/dashboard", "/api/savings", "/healthz"):
        response = httpx.get(f"{url}{path}?{query}")
        assert (response.status_code, response.json()["error"]) == (400, "token_in_url")


def test_the_token_never_reaches_the_access_log(tmp_path: Path) -> None:
    with running_service(tmp_path, api_token=TOKEN) as service:
        httpx.get(f"{service.url}/dashboard?token={TOKEN}")
        httpx.get(f"{service.url}/api/savings?access_token={TOKEN}&x=1")
        httpx.get(f"{service.url}/api/savings", headers=BEARER)
        with httpx.Client(base_url=service.url) as browser:
            browser.post("/dashboard/login", json={"token": TOKEN})
            browser.get("/api/savings")
        log = service.log_text()
    assert '"path": "/api/savings"' in log and '"path": "/dashboard"' in log, "no access log to check"
    assert TOKEN not in log


# ---------------------------------------------------------------- exposure


def _serve(tmp_path: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """Start ``serve`` and give it 20 s: a refusal exits at once; a start is then stopped by the timeout."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(free_port()), *args],
            cwd=tmp_path,
            env=service_env(tmp_path, **settings),
            capture_output=True,
            text=True,
            timeout=20,
        )
    except subprocess.TimeoutExpired as started:
        out = (started.stdout or b"").decode() if isinstance(started.stdout, bytes) else started.stdout or ""
        err = (started.stderr or b"").decode() if isinstance(started.stderr, bytes) else started.stderr or ""
        return subprocess.CompletedProcess(started.cmd, -1, out, err)


def test_serving_beyond_loopback_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    done = _serve(tmp_path, "--host", "0.0.0.0")
    assert done.returncode == 2, done.stderr
    assert "without a token" in done.stderr and "PUSHDOWN_API_TOKEN" in done.stderr
    by_setting = _serve(tmp_path, host="0.0.0.0")
    assert by_setting.returncode == 2, by_setting.stderr


@pytest.mark.parametrize(("args", "settings"), [(("--allow-no-token",), {}), ((), {"allow_no_token": "true"})])
def test_the_operator_can_say_so_explicitly(tmp_path: Path, args: tuple[str, ...], settings: dict[str, str]) -> None:
    done = _serve(tmp_path, "--host", "0.0.0.0", *args, **settings)
    assert done.returncode == -1, done.stderr  # still serving when the test stopped it
    assert "Uvicorn running on http://0.0.0.0" in done.stderr


def test_loopback_without_a_token_starts(tmp_path: Path) -> None:
    with running_service(tmp_path) as service:
        assert isinstance(service, ServiceProcess)
        assert httpx.get(service.url + "/healthz").status_code == 200


# ---------------------------------------------------------------- docker-compose.yml


@pytest.mark.parametrize("env", [{}, {"PUSHDOWN_API_TOKEN": ""}], ids=["unset", "empty"])
def test_compose_refuses_to_start_without_a_token(env: dict[str, str]) -> None:
    # This compose build reports interpolation errors with exit status 0, so the check reads what it says
    # and that it resolves nothing (docker compose proper exits 1 with the same message).
    done = compose("config", "--format", "json", **env)
    assert "required variable PUSHDOWN_API_TOKEN is missing a value" in done.stderr
    assert done.stdout.strip() == ""


def test_compose_publishes_every_port_on_loopback_only() -> None:
    stack = resolved(PUSHDOWN_API_TOKEN="t0ken")
    published = [(name, port) for name, svc in stack["services"].items() for port in svc.get("ports", [])]
    assert published, "nothing published: the check would be empty"
    for name, port in published:
        assert port.get("host_ip") == "127.0.0.1", (name, port)
    assert "${PUSHDOWN_API_TOKEN:-" not in (Path(__file__).parents[2] / "docker-compose.yml").read_text()


def test_uvicorn_s_own_access_log_is_redacted_when_the_app_is_served_directly() -> None:
    """``uvicorn --factory api.app:create_app`` logs with uvicorn's access logger, query string included."""
    import logging

    from api.guard import RedactTokens

    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", f"/dashboard?pipeline=p&token={TOKEN}", "1.1", 400),
        None,
    )
    assert RedactTokens().filter(record)
    assert TOKEN not in record.getMessage() and "token=[redacted]" in record.getMessage()
    assert "pipeline=p" in record.getMessage()
