"""``POST /optimize`` makes the full answer (EXPLAIN trees, per-node cost tables) only when something keeps it.

The history records every full answer, the request cache keeps its entries in full; a summary that neither
keeps is sent without them ever being made. When they are made for the history, it is on the request's worker
thread, never on the event loop (a served process answers ``/healthz`` there).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from api.app import create_app
from costmodel.result import FullParts


@pytest.mark.parametrize(
    ("history", "cache_control", "made"),
    [
        (True, "no-cache", True),  # the history records it
        (False, None, True),  # the request cache keeps it
        (False, "no-cache", False),  # nothing keeps it: a summary only
    ],
    ids=["history", "cache", "neither"],
)
def test_the_full_answer_is_made_only_when_kept_and_off_the_event_loop(
    history: bool,
    cache_control: str | None,
    made: bool,
    serve: Any,
    make_settings: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    small_request: dict[str, Any],
) -> None:
    renders: list[str] = []
    render = FullParts.render

    def counted(self: FullParts) -> Any:
        renders.append(threading.current_thread().name)
        return render(self)

    monkeypatch.setattr(FullParts, "render", counted)
    app = create_app(make_settings(history_enabled=history))
    headers = {"Cache-Control": cache_control} if cache_control else {}
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        response = http.post("/optimize", json=small_request, headers=headers)
        assert response.status_code == 200, response.text
        sent = response.json()
        assert sent["summary"] and "explain" not in sent and "nodes" not in sent["cost"]["before"]
        assert response.headers["pushdown-history"] == ("recorded" if history else "off")
        if history:
            record = http.get(f"/api/optimizations/{sent['request_id']}").json()
            assert record["response"]["explain"]["after"] and record["response"]["cost"]["after"]["nodes"]
    assert len(renders) == (1 if made else 0)
    assert "uvicorn-test" not in renders  # the event loop's thread (tests/conftest.py live_server)
