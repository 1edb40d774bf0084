"""One optimization as the history keeps it: summary columns, tallies, and the request and answer as sent.

A record's ``day`` is its UTC date; date filters are inclusive UTC days.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from service.deep_json import dumps_at_any_depth

SOURCE = "source"  # tally kind of estimate sources, beside the three actions
#: What a record costs beside its two bodies (summary columns, tallies, index entries), in bytes: an estimate
#: that keeps tiny records from counting as free in the queue's and the retention's byte limits.
ROW_OVERHEAD = 256
#: zlib level 1: answers shrink ~4.5x (repeated plan trees, cost tables and explain text compress well) for a
#: fifth of level 6's CPU time, which would shrink them only ~15% further (TPC-H answers, bench/history_overhead.py).
COMPRESSION_LEVEL = 1


def compress(text: str) -> bytes:
    """A body as stored: UTF-8, zlib-compressed.

    >>> decompress(compress('{"a": 1}'))
    '{"a": 1}'
    """
    return zlib.compress(text.encode("utf-8"), COMPRESSION_LEVEL)


def decompress(data: bytes | memoryview) -> str:
    return zlib.decompress(data).decode("utf-8")


def _compact(value: Any) -> str:
    """A body the caller did not give as text, as compact JSON at any depth (a deep plan's answer is recorded).

    >>> _compact({"plan": {"op": "scan"}})
    '{"plan":{"op":"scan"}}'
    """
    return dumps_at_any_depth(value, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Record:
    """One optimization as stored: the summary columns, the tallies and the full request and answer (JSON text)."""

    id: str
    created_at: datetime
    pipeline: str | None
    task: str | None
    run: str | None
    input_form: str
    mode: str | None
    cost_before: float
    cost_after: float
    savings: float
    pushed: int
    kept: int
    blocked: int
    sources: dict[str, int]
    model_version: str | None
    statistics_version: Any
    duration_ms: float | None
    request_json: str
    response_json: str
    #: (kind, name, count): kind is an action with a reason as name, or ``source`` with an estimate source.
    tallies: tuple[tuple[str, str, int], ...] = ()
    #: what rule-based pushdown's plan would cost (the answer's ``cost.baseline.total``); None: not in the answer
    cost_baseline: float | None = None

    @property
    def day(self) -> str:
        return self.created_at.astimezone(UTC).date().isoformat()

    @property
    def saved(self) -> float:
        return self.cost_before - self.cost_after

    @property
    def size(self) -> int:
        """Bytes the record holds while it waits to be written (its two bodies and the row overhead)."""
        return len(self.request_json) + len(self.response_json) + ROW_OVERHEAD


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def input_form(request: dict[str, Any]) -> str:
    for form in ("sql", "substrait", "plan"):
        if request.get(form) is not None:
            return form
    return "plan"


def statistics_version(request: dict[str, Any], response: dict[str, Any]) -> Any:
    """The statistics the answer used: what the answer says, else the catalog's ``ref`` tables and versions."""
    for key in ("statistics_version", "statistics"):
        if response.get(key) is not None:
            return response[key]
    catalog = request.get("catalog")
    tables = catalog.get("tables") if isinstance(catalog, dict) else None
    if not isinstance(tables, dict):
        return None
    refs = {
        name: {"ref": entry["ref"], "version": entry.get("version", "current")}
        for name, entry in tables.items()
        if isinstance(entry, dict) and "ref" in entry
    }
    return refs or None


def build_record(
    request: dict[str, Any],
    response: dict[str, Any],
    *,
    request_json: str | None = None,
    response_json: str | None = None,
    duration_ms: float | None = None,
    created_at: datetime | None = None,
) -> Record:
    """The record of one answer. ``request`` is the body as the service read it (plan, sql or substrait, ...);
    ``request_json`` and ``response_json``, when given, are the texts as sent (else ``request`` and ``response``
    are serialized)."""
    context = response.get("context") or request.get("context") or {}
    context = context if isinstance(context, dict) else {}
    options = request.get("options") if isinstance(request.get("options"), dict) else {}
    cost = response.get("cost") or {}
    decisions = [d for d in response.get("decisions") or [] if isinstance(d, dict)]
    actions = Counter(str(d.get("action")) for d in decisions)
    reasons = Counter((str(d.get("action")), str(d.get("reason") or "unspecified")) for d in decisions)
    sources = Counter(str(e.get("source") or "unknown") for e in response.get("estimates") or [] if isinstance(e, dict))
    tallies = tuple((a, r, n) for (a, r), n in sorted(reasons.items())) + tuple(
        (SOURCE, s, n) for s, n in sorted(sources.items())
    )
    return Record(
        id=str(response.get("request_id") or ""),
        created_at=created_at or datetime.now(UTC),
        pipeline=_text(context.get("pipeline")),
        task=_text(context.get("task")),
        run=_text(context.get("run")),
        input_form=input_form(request),
        mode=_text(options.get("mode")) if options else None,
        cost_before=_number((cost.get("before") or {}).get("total")),
        cost_after=_number((cost.get("after") or {}).get("total")),
        savings=_number(cost.get("savings")),
        pushed=actions["pushed"],
        kept=actions["kept"],
        blocked=actions["blocked"],
        sources=dict(sources),
        model_version=_text(response.get("model_version")),
        statistics_version=statistics_version(request, response),
        duration_ms=duration_ms,
        request_json=request_json if request_json is not None else _compact(request),
        response_json=response_json if response_json is not None else _compact(response),
        tallies=tallies,
        cost_baseline=baseline_cost(cost),
    )


def baseline_cost(cost: dict[str, Any]) -> float | None:
    """The answer's rule-based baseline total, or None when the answer has none (answers before baselines).

    >>> baseline_cost({"baseline": {"total": 120.5, "mode": "always"}}), baseline_cost({"savings": 0.5})
    (120.5, None)
    """
    baseline = cost.get("baseline")
    total = baseline.get("total") if isinstance(baseline, dict) else None
    return float(total) if isinstance(total, int | float) and not isinstance(total, bool) else None


def request_dict(request: Any) -> dict[str, Any]:
    """The request as a JSON object: a dataclass (``OptimizeInput``) without its unset fields, or a dict as is."""
    if dataclasses.is_dataclass(request) and not isinstance(request, type):
        values = {f.name: getattr(request, f.name) for f in dataclasses.fields(request)}
        return {name: value for name, value in values.items() if value is not None}
    return dict(request) if isinstance(request, dict) else {"request": repr(request)}
