"""Function costs learned from runs: what a Spark runner measured per call on the executors, and what it teaches.

A runner's feedback may carry, beside the rows per node, ``functions``: per Python UDF that Spark evaluated in a
node of its own (``BatchEvalPython``/``ArrowEvalPython``), the calls (the node's rows), the seconds per call
(Spark's "time to execute Python code" over the calls, plus the session's measured transfer of a row to a
Python worker) and the seconds of one cost unit on that session. ``function_cost_observations`` (migration 10)
keeps one row per request and function; the next ``/optimize`` that sends the function as detected or measured
(not declared) prices it from the newest ``LEARN_FROM`` observations of that name: their median cost, the
interval from the lowest to the highest (a single observation: a factor ``SINGLE_SPREAD`` either way).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from service.errors import InputError
from service.history import HistoryStore

#: observations of one name the learned cost is made of (newest first)
LEARN_FROM = 10
#: the interval of a cost seen once: this factor below and above it
SINGLE_SPREAD = 2.0
#: fields of one ``functions`` item of a feedback body
FUNCTION_FIELDS = frozenset({"name", "calls", "per_call_s", "unit_s"})


def check_functions(items: Any) -> list[dict[str, Any]]:
    """A feedback body's ``functions``, checked (422 with the JSON path otherwise), names lower-cased.

    >>> check_functions([{"name": "Score", "calls": 10, "per_call_s": 2e-3, "unit_s": 1e-8}])
    [{'name': 'score', 'calls': 10.0, 'per_call_s': 0.002, 'unit_s': 1e-08}]
    """
    if items is None:
        return []
    if not isinstance(items, list) or len(items) > 1000:
        raise InputError("invalid_request", "functions must be a list of at most 1000 items", "$.functions")
    out = []
    for i, item in enumerate(items):
        path = f"$.functions[{i}]"
        if not isinstance(item, dict) or set(item) != FUNCTION_FIELDS:
            raise InputError("invalid_request", f"an item is {{{', '.join(sorted(FUNCTION_FIELDS))}}}", path)
        name = item["name"]
        if not isinstance(name, str) or not 0 < len(name) <= 200:
            raise InputError("invalid_request", "name must be a function name", f"{path}.name")
        for key in ("calls", "per_call_s", "unit_s"):
            value = item[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
                raise InputError("invalid_request", f"{key} must be a non-negative number", f"{path}.{key}")
        if item["calls"] <= 0 or item["unit_s"] <= 0:
            raise InputError("invalid_request", "calls and unit_s must be positive", path)
        out.append({"name": name.lower(), **{k: float(item[k]) for k in ("calls", "per_call_s", "unit_s")}})
    return out


def learned_cost(costs: Sequence[float]) -> dict[str, Any]:
    """The learned figure of a name from its observed costs, newest first.

    >>> learned_cost([900.0, 1100.0, 700.0])
    {'cost': 900.0, 'interval': [700.0, 1100.0], 'observations': 3}
    >>> learned_cost([500.0])
    {'cost': 500.0, 'interval': [250.0, 1000.0], 'observations': 1}
    """
    cost = float(statistics.median(costs))
    if len(costs) == 1:
        interval = [cost / SINGLE_SPREAD, cost * SINGLE_SPREAD]
    else:
        interval = [float(min(costs)), float(max(costs))]
    return {"cost": round(cost, 3), "interval": [round(v, 3) for v in interval], "observations": len(costs)}


class FunctionCostStore:
    """Function cost observations in the history's database; safe from any thread."""

    def __init__(self, history: HistoryStore) -> None:
        self.history = history

    def replace(
        self, request_id: str, items: Sequence[Mapping[str, Any]], pipeline: str | None, task: str | None
    ) -> int:
        """Store a request's function observations (replacing an earlier post's); the number stored."""
        backend = self.history._backend
        now = backend.timestamp(datetime.now(UTC))
        rows = [
            (
                request_id,
                item["name"],
                item["calls"],
                item["per_call_s"],
                item["unit_s"],
                item["per_call_s"] / item["unit_s"],
                pipeline,
                task,
                now,
            )
            for item in items
        ]
        with self.history._connect() as con:
            cur = con.cursor()
            cur.execute(backend.sql("DELETE FROM function_cost_observations WHERE optimization_id = ?"), (request_id,))
            if rows:
                cur.executemany(
                    backend.sql(
                        "INSERT INTO function_cost_observations (optimization_id, name, calls, per_call_s, unit_s,"
                        " cost, pipeline, task, observed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    ),
                    rows,
                )
        return len(rows)

    def observations(self, name: str, limit: int = LEARN_FROM) -> list[dict[str, Any]]:
        """The newest observations of ``name``: ``{"cost", "calls", "per_call_s", "unit_s"}``, newest first."""
        with self.history._connect() as con:
            cur = con.cursor()
            cur.execute(
                self.history._backend.sql(
                    "SELECT cost, calls, per_call_s, unit_s FROM function_cost_observations WHERE name = ?"
                    " ORDER BY observed_at DESC LIMIT ?"
                ),
                (name.lower(), limit),
            )
            rows = cur.fetchall()
        return [{"cost": r[0], "calls": r[1], "per_call_s": r[2], "unit_s": r[3]} for r in rows]

    def learned(self, names: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Per name with observations, the learned ``{"cost", "interval", "observations"}``."""
        out = {}
        for name in dict.fromkeys(n.lower() for n in names):
            costs = [float(o["cost"]) for o in self.observations(name)]
            if costs:
                out[name] = learned_cost(costs)
        return out
