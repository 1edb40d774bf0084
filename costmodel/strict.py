"""Strict reading: a key nobody reads is an error, never silently dropped.

A misspelt ``filtres`` would otherwise vanish and the plan run without its
filters. The error names the JSON path of the key and the nearest known key.

Example::

    >>> try:
    ...     check_keys({"op": "scan", "filtres": []}, {"op", "table", "filters"}, "$.plan")
    ... except PlanError as err:
    ...     print(err.path, err.message)
    $.plan.filtres unknown key 'filtres'; did you mean 'filters'?
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import Any

from costmodel.errors import PlanError


def nearest(key: str, known: Collection[str]) -> str | None:
    """The known key closest to ``key`` in spelling, if any is close enough (difflib's ratio >= 0.6)."""
    lowered = {k.lower(): k for k in known}
    if key.lower() in lowered:
        return lowered[key.lower()]
    hits = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[hits[0]] if hits else None


def unknown_key_error(key: str, known: Collection[str], path: str, code: str = "unknown_key") -> PlanError:
    """The error for ``key`` found at ``path`` where only ``known`` keys are read."""
    suggestion = nearest(key, known)
    message = f"unknown key {key!r}" + (f"; did you mean {suggestion!r}?" if suggestion else "")
    detail: dict[str, Any] = {"key": key, "known": sorted(known)}
    if suggestion:
        detail["did_you_mean"] = suggestion
    return PlanError(code, message, f"{path}.{key}", detail)


def check_keys(raw: Mapping[str, Any], known: Collection[str], path: str, code: str = "unknown_key") -> None:
    """Raise ``PlanError`` for the first key of ``raw`` not in ``known``."""
    for key in raw:
        if key not in known:
            raise unknown_key_error(str(key), known, path, code)
