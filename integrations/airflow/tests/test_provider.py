"""The provider as Airflow sees it: `airflow providers list`, its connection type and hook."""

from __future__ import annotations

import json

from conftest import _airflow


def test_airflow_providers_list_shows_the_provider():
    done = _airflow("providers", "list", "--output", "json")
    assert done.returncode == 0, done.stderr
    providers = {p["package_name"]: p for p in json.loads(done.stdout)}
    assert "airflow-provider-pushdown" in providers, sorted(providers)
    assert providers["airflow-provider-pushdown"]["version"] == "0.1.0"


def test_pushdown_connection_type_resolves_to_the_hook():
    from airflow.providers_manager import ProvidersManager

    hook = ProvidersManager().hooks["pushdown"]
    assert hook is not None, "connection type 'pushdown' is not registered"
    assert hook.hook_class_name == "pushdown_airflow.hooks.PushdownHook"
    assert hook.connection_id_attribute_name == "pushdown_conn_id"
