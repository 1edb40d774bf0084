"""What each Python UDF cost per call in a run, read from Spark's metrics of its Python evaluation node.

Spark evaluates Python UDFs in a node of their own (``BatchEvalPython``, ``ArrowEvalPython``), whose metrics hold
"time to execute Python code" (the workers' time in the functions, all tasks summed) and "number of output rows"
(one row per call). A node evaluating one UDF gives that UDF's seconds per call; a node evaluating several is
skipped (its time cannot be split between them). The figure sent (``per_call_s``) adds the session's measured
transfer of a row to a Python worker (``pushdown_client.functions.calibrate``), so it prices the same thing the
driver's measurement does; ``unit_s`` converts it to comparisons. Timing metrics print with 2-3 significant digits
("2.4 s"): enough for a cost.

A node's Python time also counts what each of its tasks spends starting the function in a worker, whatever its
rows (``Calibration.python_fixed_s`` estimates it for one calibration job; a node of more tasks spends more, and
on a loaded machine much more). On a few hundred calls that start-up is most of the time and would price a UDF
tens of times too dear, so a UDF is reported only from at least ``MIN_CALLS`` calls whose time is at least
``TRUST_FACTOR`` times the fixed part: otherwise the driver's measurement stands.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PYTHON_NODES = ("BatchEvalPython", "ArrowEvalPython")
EXEC_METRIC = "time to execute Python code"
ROWS_METRIC = "number of output rows"
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_TIME = re.compile(r"([0-9][0-9,]*(?:\.[0-9]+)?)\s*(ns|us|µs|ms|s|min|m|h)\b")
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(")
#: the fewest calls a per-call cost is learned from, and how many times the fixed part their time must be
MIN_CALLS = 2000
TRUST_FACTOR = 4.0
#: how many times the driver's measurement of a call a run's time per call may be and still be the function's
MEASURED_FACTOR = 3.0


@dataclass(frozen=True)
class PythonEvaluation:
    """One Python evaluation node of a run: the UDFs it calls, its rows and its Python execution time."""

    names: tuple[str, ...]
    rows: int
    exec_s: float


def seconds(value: str | None) -> float | None:
    """A timing metric's total as the status store prints it.

    >>> seconds("total (min, med, max (stageId: taskId))\\n2.4 s (1.2 s, 1.2 s, 1.2 s (stage 1.0: task 2))")
    2.4
    >>> seconds("840 ms"), seconds("1.5 min"), seconds(None)
    (0.84, 90.0, None)
    """
    if not value:
        return None
    text = value.split("\n", 1)[1] if value.startswith("total") and "\n" in value else value
    match = _TIME.search(text)
    if match is None:
        return None
    return float(match.group(1).replace(",", "")) * _UNITS[match.group(2)]


def _count(value: str | None) -> int | None:
    if value is None:
        return None
    digits = value.replace(",", "").strip()
    return int(digits) if digits.isdigit() else None


def udf_names(desc: str) -> tuple[str, ...]:
    """The functions a Python evaluation node calls, from its description's first bracket.

    >>> udf_names("BatchEvalPython [slow_check(o_comment#2)#8], [pythonUDF0#12]")
    ('slow_check',)
    >>> udf_names("ArrowEvalPython [f(a#1)#5, g(upper(b#2))#6], [pythonUDF0#7, pythonUDF1#8], 200")
    ('f', 'g', 'upper')
    """
    start, end = desc.find("["), desc.find("]")
    if start < 0 or end < start:
        return ()
    return tuple(dict.fromkeys(m.group(1) for m in _CALL.finditer(desc[start + 1 : end])))


def python_evaluations(executions: Iterable[tuple[Mapping[str, Any], Mapping[str, str]]]) -> list[PythonEvaluation]:
    """Every Python evaluation node of a run's captured executions (``CapturedRun.executions``) with its figures."""
    out = []
    for graph, values in executions:
        stack = list(graph.get("nodes") or [])
        while stack:
            node = stack.pop()
            if "nodes" in node:
                stack.extend(node["nodes"] or [])
            if not str(node.get("name", "")).startswith(PYTHON_NODES):
                continue
            metrics = {m.get("name"): values.get(str(m.get("accumulatorId"))) for m in node.get("metrics") or []}
            rows, exec_s = _count(metrics.get(ROWS_METRIC)), seconds(metrics.get(EXEC_METRIC))
            if rows and exec_s is not None:
                out.append(PythonEvaluation(udf_names(str(node.get("desc", ""))), rows, exec_s))
    return out


def function_observations(
    evaluations: Iterable[PythonEvaluation],
    unit_s: float,
    python_row_s: float,
    wanted: Iterable[str] | None = None,
    fixed_s: float = 0.0,
    aliases: Mapping[str, str] | None = None,
    measured_s: Mapping[str, float] | None = None,
) -> list[dict[str, Any]]:
    """The feedback body's ``functions``: per UDF evaluated alone in a node, its calls and seconds per call (summed
    over the nodes that call it). ``wanted``: only these names (the request's functions), lower case. ``fixed_s``:
    what a node's Python time counts whatever its rows (``Calibration.python_fixed_s``), taken off each node's
    time first. A UDF seen on fewer than ``MIN_CALLS`` calls, or whose time is under ``TRUST_FACTOR`` times the
    fixed part of its nodes, is left out. ``aliases``: the name a node calls a UDF by -> the request's name for
    it (a DataFrame's UDF runs under its own name when the caller's DataFrame runs as written). ``measured_s``:
    per name, the seconds a call cost as this request priced it when measured (in the driver) or learned (from
    earlier runs); a run whose time per call is more than ``MEASURED_FACTOR`` times that is left out
    (``plausible``).

    >>> evals = [PythonEvaluation(("Slow",), 4000, 2.0), PythonEvaluation(("f", "g"), 10, 1.0)]
    >>> function_observations(evals, 1e-8, 2e-6, fixed_s=0.05)
    [{'name': 'slow', 'calls': 4000, 'per_call_s': 0.0004895, 'unit_s': 1e-08}]
    >>> function_observations([PythonEvaluation(("slow",), 520, 0.47)], 1e-8, 2e-6, fixed_s=0.05)
    []
    """
    keep = None if wanted is None else {w.lower() for w in wanted}
    renamed = {k.lower(): v.lower() for k, v in (aliases or {}).items()}
    calls: dict[str, int] = {}
    spent: dict[str, float] = {}
    nodes: dict[str, int] = {}
    for ev in evaluations:
        if len(ev.names) != 1:
            continue
        name = renamed.get(ev.names[0].lower(), ev.names[0].lower())
        if keep is not None and name not in keep:
            continue
        calls[name] = calls.get(name, 0) + ev.rows
        spent[name] = spent.get(name, 0.0) + max(ev.exec_s - fixed_s, 0.0)
        nodes[name] = nodes.get(name, 0) + 1
    measured = {k.lower(): v for k, v in (measured_s or {}).items()}
    return [
        {"name": n, "calls": c, "per_call_s": float(f"{spent[n] / c + python_row_s:.6g}"), "unit_s": unit_s}
        for n, c in calls.items()
        if trusted(c, spent[n], fixed_s * nodes[n]) and plausible(spent[n] / c + python_row_s, measured.get(n))
    ]


def plausible(per_call_s: float, measured_s: float | None) -> bool:
    """Whether a run's time per call can be the function's own, against the driver's measurement of a call.

    A Python node's time is an upper bound of its function's: it also counts the worker's wait for its input
    (the joins and scans below it in the same stage), the first batch's imports and an Arrow batch's set-up. On
    a few thousand calls above a join those dwarf the calls (the DataFrame workload's ``d01``: 2,296 calls at 1.1
    ms, then 0.22 ms, where a call costs 0.05-0.1 ms), and a cost learned from them would price the function
    tens of times too dear. What the executors' contention adds stays well within ``MEASURED_FACTOR``.

    >>> plausible(3e-4, 1e-4), plausible(1.1e-3, 5e-5), plausible(1e-3, None)
    (True, False, True)
    """
    return measured_s is None or per_call_s <= MEASURED_FACTOR * measured_s


def trusted(calls: int, spent_s: float, fixed_s: float) -> bool:
    """Whether ``calls`` calls that took ``spent_s`` beyond a fixed part of ``fixed_s`` price a call well.

    >>> trusted(75_000, 1.5, 0.05), trusted(520, 0.4, 0.05), trusted(5000, 0.1, 0.05)
    (True, False, False)
    """
    return calls >= MIN_CALLS and spent_s >= (TRUST_FACTOR - 1) * fixed_s
