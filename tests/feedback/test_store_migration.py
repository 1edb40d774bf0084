"""Migration 5 (feedback tables) on a database that already holds history: rows kept, feedback usable."""

from __future__ import annotations

from service.database import MIGRATIONS, apply_migrations, backend_from_url, schema_version
from service.feedback.store import FeedbackStore, Observation
from service.history import HistoryStore, build_record
from tests.history.test_store import write_as_version_1


def test_an_older_history_gets_the_feedback_tables_and_keeps_its_records(store_url: str) -> None:
    apply_migrations(backend_from_url(store_url), MIGRATIONS, upto=4)
    answer = {"request_id": "r1", "plan": {"op": "scan", "id": "n1", "table": "t"}, "cost": {}}
    write_as_version_1(store_url, [build_record({"plan": answer["plan"]}, answer)])  # the row an old release wrote

    store = HistoryStore.from_url(store_url)
    feedback = FeedbackStore(store)
    assert store.get("r1") is not None
    feedback.replace("r1", [{"id": "n1", "rows_out": 3}], [Observation("n1", "t", "a > 1", "a > '?'", 10.0, 3.0)])
    assert schema_version(backend_from_url(store_url)) == MIGRATIONS[-1].version >= 5
    assert feedback.get("r1")["nodes"] == [{"id": "n1", "rows_out": 3}]
    (observation,) = feedback.observations(["T"])
    assert observation.selectivity == 0.3
    store.close()
