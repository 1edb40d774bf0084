"""PushdownOptimizeTrigger on its own: it survives serialization and reports answers and errors as events."""

from __future__ import annotations

import asyncio

from airflow.triggers.base import TriggerEvent
from pushdown_airflow.triggers import PushdownOptimizeTrigger
from pushdown_test_dags import CATALOG, SQL


def _first_event(trigger: PushdownOptimizeTrigger) -> TriggerEvent:
    async def first() -> TriggerEvent:
        return await trigger.run().__anext__()

    return asyncio.run(first())


def _roundtrip(trigger: PushdownOptimizeTrigger) -> PushdownOptimizeTrigger:
    """What the triggerer does: import the class path and rebuild the trigger from its kwargs."""
    import importlib

    path, kwargs = trigger.serialize()
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)(**kwargs)


def test_success_event_carries_the_summary(service_url):
    trigger = _roundtrip(PushdownOptimizeTrigger("pushdown_default", {"sql": SQL, "catalog": CATALOG}, 30))
    event = _first_event(trigger)
    assert event.payload["status"] == "success"
    assert event.payload["summary"]["cost_after"] < event.payload["summary"]["cost_before"]
    assert "answer" not in event.payload  # events are stored in Airflow's database: keep them small


def test_error_event_carries_status_code_message_and_path(service_url):
    event = _first_event(PushdownOptimizeTrigger("pushdown_default", {"sql": "SELECT FROM WHERE"}, 30))
    assert event.payload["status"] == "error"
    error = event.payload["error"]
    assert error["status"] == 422 and error["path"] == "$.sql" and error["message"]


def test_unreachable_service_is_an_error_event_not_a_crash(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_PUSHDOWN_NOWHERE", "pushdown://127.0.0.1:9")
    event = _first_event(PushdownOptimizeTrigger("pushdown_nowhere", {"sql": SQL}, 5))
    assert event.payload["status"] == "error"
    assert event.payload["error"]["code"] == "unreachable"
