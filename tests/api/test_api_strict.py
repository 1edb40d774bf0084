"""Unknown keys anywhere in a request get a 422 naming the JSON path and the nearest known key."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.test_api_optimize import assert_error

SCAN = {"op": "scan", "table": "cities"}


@pytest.mark.parametrize(
    ("body", "code", "path", "suggestion"),
    [
        ({"plan": SCAN, "catalgo": {}}, "invalid_request", "$.catalgo", "catalog"),
        ({"plan": SCAN, "context": {"pipelin": "p"}}, "invalid_request", "$.context.pipelin", "pipeline"),
        ({"plan": {**SCAN, "filtres": []}}, "unknown_key", "$.plan.filtres", "filters"),
        ({"plan": SCAN, "options": {"moed": "cost"}}, "invalid_options", "$.options.moed", "mode"),
        ({"plan": SCAN, "catalog": {"tables": {"cities": {"row_cnt": 1}}}}, "unknown_key", None, "row_count"),
    ],
    ids=["envelope", "context", "plan-node", "options", "catalog-table"],
)
def test_unknown_key_names_path_and_suggestion(
    client: httpx.Client, catalog: dict[str, Any], body: dict[str, Any], code: str, path: str | None, suggestion: str
) -> None:
    body = {"catalog": catalog, **body}
    answer = assert_error(client.post("/optimize", json=body), 422, code, path)
    assert f"did you mean {suggestion!r}?" in answer["message"]


def test_one_error_hierarchy_mapped_in_one_handler() -> None:
    """Engine and service errors share ``ServiceError``; the app maps that class once, by code."""
    from fastapi import FastAPI

    from api.errors import install_error_handling
    from costmodel.errors import PlanError, ServiceError
    from service.errors import InputError

    assert issubclass(PlanError, ServiceError) and issubclass(InputError, ServiceError)
    app = FastAPI()
    install_error_handling(app)
    assert ServiceError in app.exception_handlers
    assert PlanError not in app.exception_handlers and InputError not in app.exception_handlers
