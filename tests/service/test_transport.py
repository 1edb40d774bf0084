"""The client without a URL calls a ``Transport``: ``pushdown_client`` knows none of its own, the service provides
the in-process one (``service.in_process_client``), and ``service.client`` makes it the default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import pushdown_client
from service.client import PushdownClient, PushdownError, in_process_client
from service.in_process_client import InProcessService

BODY = {
    "sql": "SELECT a FROM t WHERE b > 3",
    "catalog": {"tables": {"t": {"columns": [{"name": "a", "type": "int"}, {"name": "b", "type": "int"}]}}},
}


class Recorded:
    """A transport that answers from a dict and remembers the calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def optimize(self, body: dict[str, Any]) -> Any:
        self.calls.append(("optimize", body))
        return {"request_id": "r1"}

    def analyze(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("analyze", (name, body)))
        return {"table": name}

    def tables(self) -> list[dict[str, Any]]:
        return []

    def history(self, pipeline: str | None, task: str | None, limit: int) -> list[dict[str, Any]]:
        self.calls.append(("history", (pipeline, task, limit)))
        return []

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "version": "x"}


def test_the_client_alone_has_no_transport() -> None:
    with pytest.raises(pushdown_client.PushdownError) as caught:
        pushdown_client.PushdownClient().optimize("SELECT 1")
    assert caught.value.status == 501 and caught.value.code == "in_process_unavailable"


def test_any_transport_answers_a_client_without_a_url() -> None:
    transport = Recorded()
    client = pushdown_client.PushdownClient(transport=transport)
    assert client.optimize("SELECT 1", mode="always") == {"request_id": "r1"}
    assert client.analyze("t", path="/data/t.parquet") == {"table": "t"}
    client.history(pipeline="p", limit=5)
    assert [name for name, _ in transport.calls] == ["optimize", "analyze", "history"]
    assert transport.calls[0][1]["options"] == {"mode": "always"}
    assert transport.calls[2][1] == ("p", None, 5)
    with pytest.raises(ValueError):
        pushdown_client.PushdownClient("http://pushdown:8000", transport=transport)


def test_the_services_client_runs_the_service_in_this_process(make_settings: Any, tmp_path: Path) -> None:
    settings = make_settings(data_dir=tmp_path)
    default = PushdownClient(settings=settings)
    made = in_process_client(settings)
    assert isinstance(default, pushdown_client.PushdownClient)
    assert isinstance(default.transport, InProcessService) and isinstance(made.transport, InProcessService)
    answers = [client.optimize_body(BODY) for client in (default, made)]
    assert answers[0]["plan"] == answers[1]["plan"] and answers[0]["sql"]
    assert made.health()["status"] == "ok"
    with pytest.raises(PushdownError) as caught:
        made.optimize_body({**BODY, "sqll": "x"})
    assert caught.value.status == 422 and caught.value.path == "$.sqll"
    assert PushdownClient("http://pushdown:8000").transport is None
