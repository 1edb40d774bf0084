"""A bounded schemathesis run over the OpenAPI schema: generated requests of every documented operation get
an answer that is not a server error (any 5xx but the documented 503s). In process (ASGI), a few examples per
operation: a smoke of the whole surface inside the normal test run, not a fuzzing campaign."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from api.app import create_app
from service.analyze import Analyzer
from tests.conftest import _make_settings


def _no_spark() -> Any:
    raise RuntimeError("no Spark in the schemathesis run")


def _app() -> Any:
    # "testserver" is the Host the in-process ASGI client sends; on loopback only listed names are served.
    settings = _make_settings(data_roots=["/nonexistent-schemathesis-root"], allowed_hosts=["testserver"])
    app = create_app(settings)
    app.state.analyzer = Analyzer(app.state.analyzer.store, _no_spark)  # analyze jobs fail, never start a JVM
    return app


schema = schemathesis.openapi.from_asgi("/openapi.json", _app())


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_no_generated_request_gets_a_server_error(case: schemathesis.Case) -> None:
    response = case.call(headers={"Content-Type": "application/json"} if case.body is not None else None)
    if response.status_code == 503:  # documented: a store that is off, a time limit
        assert response.json()["error"] in {"statistics_unavailable", "history_unavailable", "time_limit"}
        return
    case.validate_response(response, checks=[not_a_server_error])
    assert response.status_code < 500, response.text


def test_the_schema_documents_the_security_errors() -> None:
    raw = schema.raw_schema
    optimize = raw["paths"]["/optimize"]["post"]["responses"]
    assert {"413", "415", "503"} <= set(optimize)
    analyze = raw["paths"]["/tables/{name}/analyze"]["post"]["responses"]
    assert "403" in analyze


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
