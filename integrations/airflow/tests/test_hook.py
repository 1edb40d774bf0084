"""PushdownHook against a real service: connections from AIRFLOW_CONN_* variables, bearer token, errors."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlparse

import pytest
from conftest import TOKEN
from pushdown_airflow.hooks import PushdownHook, PushdownServiceError
from pushdown_test_dags import CATALOG, SQL


def _conn_json(service_url: str, **fields) -> str:
    parsed = urlparse(service_url)
    return json.dumps({"conn_type": "pushdown", "host": parsed.hostname, "port": parsed.port, **fields})


def test_optimize_through_the_default_uri_connection(service_url):
    answer = PushdownHook().optimize({"sql": SQL, "catalog": CATALOG})
    assert answer["request_id"]
    assert answer["cost"]["after"]["total"] < answer["cost"]["before"]["total"]
    # The filter on orders goes under the join, inside the orders side, where Catalyst's own pushdown puts it too:
    # the summary says so, and the query to run (and its engine-neutral form) is the query as written.
    actions = {entry["predicate"]: [step["action"] for step in entry["steps"]] for entry in answer["summary"]}
    assert "pushed" in actions["o.amount > 100"], actions
    assert answer["spark"]["as_written"]
    assert answer["sql"] == answer["sql_portable"] == answer["spark"]["sql"] == SQL


def test_json_connection_with_token_reports_healthy(service_url, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_PUSHDOWN_JSON", _conn_json(service_url, password=TOKEN))
    hook = PushdownHook("pushdown_json")
    assert hook.health()["status"] == "ok"
    ok, message = hook.test_connection()
    assert ok, message
    assert "accepts the token" in message


def test_wrong_token_is_a_401_with_the_services_message(service_url, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_PUSHDOWN_WRONG", _conn_json(service_url, password="not-the-token"))
    hook = PushdownHook("pushdown_wrong")
    with pytest.raises(PushdownServiceError) as caught:
        hook.optimize({"sql": SQL, "catalog": CATALOG})
    assert caught.value.status == 401 and caught.value.code == "unauthorized"
    assert caught.value.is_client_error
    ok, message = hook.test_connection()
    assert not ok and "401" in message


def test_bad_sql_is_a_422_pointing_at_the_sql(service_url):
    with pytest.raises(PushdownServiceError) as caught:
        PushdownHook().optimize({"sql": "SELECT FROM WHERE", "catalog": CATALOG})
    assert caught.value.status == 422
    assert caught.value.path == "$.sql"
    assert "$.sql" in str(caught.value) and "422" in str(caught.value)


def test_unreachable_service_is_not_a_client_error(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_PUSHDOWN_NOWHERE", "pushdown://127.0.0.1:9")
    with pytest.raises(PushdownServiceError) as caught:
        PushdownHook("pushdown_nowhere", timeout=5).optimize({"sql": SQL, "catalog": CATALOG})
    assert caught.value.status == 503 and caught.value.code == "unreachable"
    assert not caught.value.is_client_error  # so the operator lets Airflow retry


def test_the_hook_is_the_services_own_client(service_url):
    """No HTTP code of the provider's own: the hook hands out the client that the service's package ships."""
    import pushdown_airflow.hooks as hooks

    from pushdown_client import PushdownClient, PushdownError

    client = PushdownHook().get_conn()
    assert type(client) is PushdownClient and client.url == service_url and client.token == TOKEN
    assert PushdownServiceError is PushdownError
    assert not any(name in vars(hooks) for name in ("requests", "aiohttp", "urllib", "HttpHook"))


def test_async_optimize_matches_the_sync_call(service_url):
    request = {"sql": SQL, "catalog": CATALOG}
    answer = asyncio.run(PushdownHook.optimize_async("pushdown_default", request))
    assert answer["sql"] == PushdownHook().optimize(request)["sql"]
    with pytest.raises(PushdownServiceError) as caught:
        asyncio.run(PushdownHook.optimize_async("pushdown_default", {"sql": "SELECT FROM WHERE", "catalog": CATALOG}))
    assert caught.value.status == 422 and caught.value.path == "$.sql"


def test_the_client_alone_says_it_needs_a_url_here():
    """Airflow's environment has the client, not the service: a client without a URL says so instead of failing
    on an import deep inside."""
    import importlib.util

    from pushdown_client import PushdownClient

    assert importlib.util.find_spec("service") is None, "this environment must not have the service (run with -P)"
    with pytest.raises(PushdownServiceError) as caught:
        PushdownClient().optimize("SELECT 1")
    assert caught.value.status == 501 and caught.value.code == "in_process_unavailable"
    assert "URL" in caught.value.message
