"""An answer as the caller asked for it, and its JSON, written once.

The engine's answer carries everything: the per-predicate summary, the decision matrix (one row per predicate
and operator), cost tables per node, EXPLAIN trees. Most callers read the summary, the rewritten plan or query
and the totals, so that is what ``detail: "summary"`` (the default) sends; ``detail: "full"`` sends the answer
in its full documented shape. The history always keeps the full answer: the dashboard's drill-down renders its
trees and tables, and feedback maps a run's counts onto its cost table.

    >>> full = {"summary": [], "decisions": [{"action": "pushed"}], "explain": {"before": "", "after": ""},
    ...         "cost": {"before": {"total": 9.0, "nodes": []}, "after": {"total": 3.0, "nodes": []}}}
    >>> for_caller(full, "summary")
    {'summary': [], 'cost': {'before': {'total': 9.0}, 'after': {'total': 3.0}}}
    >>> for_caller(full, "full") is full
    True
"""

from __future__ import annotations

import json
from typing import Any, Literal

import orjson

from costmodel.finite import finite, may_hold_null, nulls_under
from service import deep_json

Detail = Literal["summary", "full"]
DETAILS: tuple[Detail, ...] = ("summary", "full")
DEFAULT_DETAIL: Detail = "summary"

#: Answer keys only ``detail: "full"`` sends.
FULL_ONLY_KEYS = frozenset({"decisions", "explain"})
#: Keys of ``cost.before`` and ``cost.after`` only ``detail: "full"`` sends (the per-node cost tables).
FULL_ONLY_COST_KEYS = frozenset({"nodes"})


def for_caller(answer: dict[str, Any], detail: Detail) -> dict[str, Any]:
    """``answer`` trimmed to ``detail`` (new dicts where trimmed; the full answer is never changed)."""
    if detail == "full":
        return answer
    out = {key: value for key, value in answer.items() if key not in FULL_ONLY_KEYS}
    cost = answer.get("cost")
    if isinstance(cost, dict):
        out["cost"] = {
            key: (
                {k: v for k, v in value.items() if k not in FULL_ONLY_COST_KEYS}
                if key in ("before", "after") and isinstance(value, dict)
                else value
            )
            for key, value in cost.items()
        }
    return out


class NonFiniteNumber(ValueError):
    """The answer holds a NaN or an infinity, which JSON cannot carry: a computation overflowed."""


def _other(value: Any) -> Any:
    """What orjson cannot write itself: numpy scalars (the sample estimator's numbers) become Python numbers."""
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def to_json(answer: Any, not_numbers: tuple[bytes, ...] = ()) -> bytes:
    """Compact UTF-8 JSON (orjson); raises ``NonFiniteNumber`` instead of writing a NaN or infinity.

    orjson writes a non-finite float as ``null``, so an answer whose JSON holds no ``null`` value is finite as
    written, and only one that does is walked; nor is one whose every ``null`` stands under a key of
    ``not_numbers`` (spelled with quotes), keys that never hold a number (``nulls_under``).

    >>> to_json({"a": 1, "b": "é"})
    b'{"a":1,"b":"\\xc3\\xa9"}'
    """
    try:  # keys that are not strings are rare, and allowing them costs orjson a sixth of its time
        payload = orjson.dumps(answer, default=_other)
    except TypeError:
        try:
            payload = orjson.dumps(answer, default=_other, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:  # nested deeper than orjson goes (254 levels; older orjson raise a plain TypeError)
            return _slow_json(answer)
    if may_hold_null(payload) and not nulls_under(payload, not_numbers) and not finite(answer):
        raise NonFiniteNumber("the answer holds a number JSON cannot carry")
    return payload


def to_json_details(answer: dict[str, Any]) -> tuple[bytes, bytes]:
    """The answer's JSON at ``detail: "full"`` and at ``"summary"``: the bytes of ``to_json(answer)`` and of
    ``to_json(for_caller(answer, "summary"))``, each top-level value written once for both.

    A value is walked for non-finite numbers only when its own JSON holds a ``null``: the summary's
    ``inferred`` and ``decided_by`` are often None, and the plan, decisions and trees then need no walk.

    >>> answer = {"summary": [], "decisions": [], "cost": {"before": {"total": 1.0, "nodes": []}}}
    >>> full, summary = to_json_details(answer)
    >>> full
    b'{"summary":[],"decisions":[],"cost":{"before":{"total":1.0,"nodes":[]}}}'
    >>> summary
    b'{"summary":[],"cost":{"before":{"total":1.0}}}'
    """
    full: list[bytes] = []
    summary: list[bytes] = []
    for key, value in answer.items():
        item = _member(key, value)
        full.append(item)
        if key == "cost" and isinstance(value, dict):
            summary.append(_member(key, for_caller({key: value}, "summary")[key]))
        elif key not in FULL_ONLY_KEYS:
            summary.append(item)
    return b"{" + b",".join(full) + b"}", b"{" + b",".join(summary) + b"}"


def to_json_by_member(answer: dict[str, Any]) -> bytes:
    """``to_json(answer)``, written as ``to_json_details`` writes it: a top-level value is walked for non-finite
    numbers only when its own JSON holds a ``null`` (a summary's ``null`` does not walk the plan and the trees).

    >>> to_json_by_member({"summary": [{"inferred": None}], "plan": {"op": "scan"}})
    b'{"summary":[{"inferred":null}],"plan":{"op":"scan"}}'
    """
    return b"{" + b",".join(_member(key, value) for key, value in answer.items()) + b"}"


#: Per top-level key, the keys inside it whose ``null`` is never a number (``to_json``'s ``not_numbers``): the
#: summary's is a text or an object left out (``costmodel.summary``'s ``inferred``, a step's ``path`` and
#: ``decided_by``, ``service.verdicts``' ``verdict``), so its JSON, which nearly always holds one of them, is
#: walked for a NaN only when a ``null`` stands anywhere else.
_NOT_NUMBERS: dict[str, tuple[bytes, ...]] = {"summary": (b'"inferred"', b'"path"', b'"decided_by"', b'"verdict"')}


def _member(key: str, value: Any) -> bytes:
    """``"key":value`` as ``to_json`` writes it inside an object."""
    return orjson.dumps(key) + b":" + to_json(value, _NOT_NUMBERS.get(key, ()))


def _slow_json(value: Any, sort_keys: bool = False) -> bytes:
    try:
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), sort_keys=sort_keys)
        except RecursionError:  # deeper than json goes at the default recursion limit: written without recursion
            text = deep_json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=sort_keys)
    except ValueError:
        raise NonFiniteNumber("the answer holds a number JSON cannot carry") from None
    return text.encode("utf-8")


def canonical_json(value: Any) -> bytes:
    """``value`` as JSON with sorted keys: equal values, equal bytes (a cache key).

    >>> canonical_json({"b": 1, "a": [2, {"d": 3, "c": 4}]})
    b'{"a":[2,{"c":4,"d":3}],"b":1}'
    """
    try:
        return orjson.dumps(value, default=_other, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except TypeError:  # deeper than orjson goes (JSONEncodeError is a TypeError)
        return _slow_json(value, sort_keys=True)
