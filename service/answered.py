"""One request's answer as the service hands it over: the JSON sent, the full answer the history records (made
when first read if it was computed brief), and what the cache did."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from costmodel.result import FullParts
from service.answer import for_caller, to_json, to_json_by_member
from service.request_cache import Entry

if TYPE_CHECKING:
    from service.optimize import OptimizeInput


class Answered:
    """One request's answer: the full answer (what the history records), the JSON sent to the caller (at its
    detail), the full JSON, and what the cache did (``hit``, ``miss``, ``bypass`` or ``off``).

    An answer computed brief (a summary for a caller, and no cache or history to keep the full one) makes its
    full answer and full JSON when first read (``finish``); ``brief`` is there at once: the decisions, the
    summary, the totals.
    """

    __slots__ = ("_finish", "_full", "_record", "brief", "cache", "payload")

    def __init__(
        self,
        answer: dict[str, Any],
        payload: bytes,
        record: bytes | None,
        cache: str,
        finish: Callable[[], tuple[dict[str, Any], bytes]] | None = None,
    ) -> None:
        """``finish``: makes (the full answer, its JSON) when ``answer`` is brief; None when it is full."""
        self.brief = answer
        self.payload = payload
        self.cache = cache
        self._full = answer if finish is None else None
        self._record = record
        self._finish = finish

    @property
    def answer(self) -> dict[str, Any]:
        """The full answer (made now if it was not)."""
        self._complete()
        assert self._full is not None
        return self._full

    @property
    def record(self) -> bytes:
        """The full answer's JSON (made now if it was not)."""
        self._complete()
        assert self._record is not None
        return self._record

    @property
    def full_made(self) -> bool:
        """Whether the full answer is made (it is once read, or when computed full)."""
        return self._finish is None

    def _complete(self) -> None:
        finish = self._finish
        if finish is not None:
            self._full, self._record = finish()
            self._finish = None


def answered(
    request: OptimizeInput, entry: Entry, status: str, request_id: str | None, client_request_id: str | None
) -> Answered:
    """The head (ids, context, cache) written before the entry's JSON: the body is not serialized again."""
    hit = status == "hit"
    cache = {"hit": True, "age_s": round(time.time() - entry.created, 3)} if hit else {"hit": False}
    head, prefix = _head_and_prefix(request, request_id, client_request_id, cache)
    record = prefix + entry.full
    payload = record if request.detail == "full" else prefix + entry.summary
    return Answered({**head, **entry.answer}, payload, record, status)


def brief_answered(
    request: OptimizeInput,
    brief: dict[str, Any],
    parts: FullParts,
    status: str,
    request_id: str | None,
    client_request_id: str | None,
) -> Answered:
    """A summary answer computed brief: its JSON now, the full answer and its JSON when read (``Answered``)."""
    head, prefix = _head_and_prefix(request, request_id, client_request_id, {"hit": False})
    # member by member: the summary's own ``null`` values (``inferred``, a step's ``decided_by``) walk the summary alone
    # for a non-finite number, not the plan and the cost tables with it
    payload = prefix + to_json_by_member(for_caller(brief, "summary"))[1:]

    def finish() -> tuple[dict[str, Any], bytes]:
        rest = parts.completed(brief)
        return {**head, **rest}, prefix + to_json_by_member(rest)[1:]

    return Answered({**head, **brief}, payload, None, status, finish)


def answer_head(request: OptimizeInput, request_id: str | None, client_request_id: str | None) -> dict[str, Any]:
    """What an answer says about its own request: ids and the context echo."""
    head: dict[str, Any] = {"request_id": request_id or str(uuid.uuid4())}
    if client_request_id is not None:
        head["client_request_id"] = client_request_id
    head["context"] = request.context
    return head


def _head_and_prefix(
    request: OptimizeInput, request_id: str | None, client_request_id: str | None, cache: dict[str, Any]
) -> tuple[dict[str, Any], bytes]:
    """The head with what the cache did, and its JSON as the start of the answer's (the rest's follows it)."""
    head = answer_head(request, request_id, client_request_id)
    head["cache"] = cache
    return head, to_json(head)[:-1] + b","
