"""The optimization history: every ``/optimize`` answer kept, summarized for the dashboard, in full for drill-down.

- ``record``: what one optimization keeps (``Record``, ``build_record``).
- ``store``: ``HistoryStore`` writes and reads records in SQLite or PostgreSQL (``service.database``).
- ``recorder``: ``HistoryRecorder`` takes answers from the route and hands them to one writer thread.
- ``trees``: the drill-down's plan trees, derived from a stored answer.
"""

from service.database.schema import MIGRATIONS
from service.history.record import SOURCE, Record, build_record, input_form, request_dict, statistics_version
from service.history.recorder import HEADER as HISTORY_HEADER
from service.history.recorder import Durability, HistoryRecorder, Outcome, Retention
from service.history.store import Filters, HistoryStore
from service.history.trees import explain_tree

__all__ = [
    "HISTORY_HEADER",
    "MIGRATIONS",
    "SOURCE",
    "Durability",
    "Filters",
    "HistoryRecorder",
    "HistoryStore",
    "Outcome",
    "Record",
    "Retention",
    "build_record",
    "explain_tree",
    "input_form",
    "request_dict",
    "statistics_version",
]
