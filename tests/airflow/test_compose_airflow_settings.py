"""docker-compose.yml's Airflow settings, read by the Airflow the images install (3.3.2, in .venv-airflow).

Airflow ignores an ``AIRFLOW__SECTION__KEY`` it does not know, so a misspelt or moved option would pass every
static check and silently leave a default in place: here each one must be an option Airflow documents. The auth
manager must import, and the ``pushdown_default`` connection must parse, with Airflow's own parser, into the
provider's connection type, the service's compose name and port, and the service's token.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.airflow.conftest import clean_env
from tests.deploy.compose import resolved

_CHECK = """
import importlib, json, sys
from airflow.configuration import conf
from airflow.models.connection import Connection
from airflow.providers_manager import ProvidersManager

env = json.load(sys.stdin)
known = conf.configuration_description
unknown = [
    key for key in env
    if key.startswith("AIRFLOW__")
    and key.split("__")[2].lower() not in known.get(key.split("__")[1].lower(), {}).get("options", {})
]
module, _, name = env["AIRFLOW__CORE__AUTH_MANAGER"].rpartition(".")
getattr(importlib.import_module(module), name)
connection = Connection(conn_id="pushdown_default", uri=env["AIRFLOW_CONN_PUSHDOWN_DEFAULT"])
hook = ProvidersManager().hooks[connection.conn_type]
print(json.dumps({
    "unknown": unknown,
    "connection": [connection.conn_type, connection.host, connection.port, connection.password],
    "hook": hook.hook_class_name if hook else None,
}))
"""


@pytest.mark.slow  # builds .venv-airflow on first use
def test_compose_airflow_options_are_airflows_and_the_connection_is_the_providers(airflow_python: Path, tmp_path):
    stack = resolved(PUSHDOWN_API_TOKEN="tok-from-env")
    service = stack["services"]["pushdown"]["environment"]
    for name in ("airflow-scheduler", "airflow-triggerer", "airflow-apiserver"):
        env = stack["services"][name]["environment"]
        done = subprocess.run(
            [str(airflow_python), "-c", _CHECK],
            input=json.dumps(env),
            env=clean_env(AIRFLOW_HOME=str(tmp_path / "home")),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["unknown"] == [], f"{name}: options Airflow does not have: {report['unknown']}"
        port = int(service["PUSHDOWN_PORT"])
        assert report["connection"] == ["pushdown", "pushdown", port, service["PUSHDOWN_API_TOKEN"]], name
        assert report["hook"] == "pushdown_airflow.hooks.PushdownHook"
