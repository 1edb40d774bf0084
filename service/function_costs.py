"""What each function of a request costs, where that figure came from, and the time the answer saves.

A request's ``functions`` entries carry a ``cost`` and, from a Spark runner, a ``source`` (``detected: ...``,
``measured: ...``) and an ``interval`` (``pushdown_client.functions``); an entry without ``source`` is the caller's
own declaration. Before the engine runs, ``with_learned`` replaces the cost of every entry that is *not* declared
by what earlier runs measured on Spark's executors (``source: "learned"``, ``service.feedback.functions``): a
caller's declaration always wins, and a measurement in the driver yields to what the executors saw.

The answer gains:

- ``function_costs``: ``[{"name", "cost", "interval", "source"}]`` for every function the request describes and
  every undeclared one the query calls (``source: "default"``: never moved);
- ``cost.time_saved_vs_baseline_s``: ``{"estimate", "interval", "unit_s", "unit_source"}``, the executor time
  the answer saves against rule-based pushdown: the cost units saved times the seconds of one unit
  (``options.calibration.unit_s``, measured by the runner on the session; else ``DEFAULT_UNIT_S``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from costmodel.functions import KNOWN_FUNCTIONS
from costmodel.options import DEFAULT_PREDICATE_COSTS
from service.errors import InputError

#: seconds of one cost unit (a comparison) when the runner measured none: local Spark's order of magnitude
#: (``pushdown_client.functions.calibrate`` measures 5-15 ns on a 2-core machine), with a wide interval
DEFAULT_UNIT_S = 1e-8
DEFAULT_UNIT_INTERVAL = (2e-9, 5e-8)
DECLARED = "declared"
#: the interval of a default cost (nobody measured or declared it): this factor below and above it
GUESS_SPREAD = 10.0
LEARNED = "learned"


def calibration_option(options: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The options without ``calibration`` (the service's, not the engine's), and the calibration checked.

    >>> calibration_option({"mode": "cost", "calibration": {"unit_s": 1e-8, "interval": [5e-9, 2e-8]}})
    ({'mode': 'cost'}, {'unit_s': 1e-08, 'interval': [5e-09, 2e-08], 'source': 'measured'})
    """
    if not options or "calibration" not in options:
        return options, None
    raw = options["calibration"]
    rest = {k: v for k, v in options.items() if k != "calibration"}
    path = "$.options.calibration"
    if not isinstance(raw, dict):
        raise InputError("invalid_options", "calibration must be an object", path)
    unit: Any = raw.get("unit_s")
    if not _positive(unit):
        raise InputError("invalid_options", "unit_s must be a positive number of seconds", f"{path}.unit_s")
    interval = raw.get("interval") or [unit, unit]
    if not (isinstance(interval, list) and len(interval) == 2 and all(map(_positive, interval))):
        raise InputError("invalid_options", "interval must be [low, high] seconds", f"{path}.interval")
    if interval[0] > interval[1]:
        raise InputError("invalid_options", "interval must be [low, high] seconds", f"{path}.interval")
    source = raw.get("source", "measured")
    return rest, {"unit_s": float(unit), "interval": [float(v) for v in interval], "source": str(source)[:200]}


def _positive(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value > 0 and value < float("inf")


def _is_declared(entry: Mapping[str, Any]) -> bool:
    source = entry.get("source")
    return source is None or str(source).startswith(DECLARED)


def with_learned(
    options: dict[str, Any] | None, learned: Callable[[list[str]], Mapping[str, Mapping[str, Any]]] | None
) -> dict[str, Any] | None:
    """``options`` with every function that is not declared priced from earlier runs when any were learned.

    ``learned(names)``: per name, ``{"cost", "interval", "observations"}`` (``FunctionCostStore.learned``).

    >>> opts = {"functions": {"f": {"cost": 200, "source": "detected: python_udf default"}, "g": {"cost": 5}}}
    >>> f = with_learned(opts, lambda names: {n: {"cost": 900.0, "interval": [700.0, 1100.0], "observations": 3}
    ...                                       for n in names})["functions"]["f"]
    >>> f["cost"], f["source"], f["interval"], f["replaced"]
    (900.0, 'learned', [700.0, 1100.0], 'detected: python_udf default')
    """
    functions = (options or {}).get("functions")
    if learned is None or not isinstance(functions, dict):
        return options
    names = [n for n, e in functions.items() if isinstance(e, dict) and not _is_declared(e)]
    if not names:
        return options
    found = learned([n.lower() for n in names])
    if not found:
        return options
    changed = dict(functions)
    for name in names:
        hit = found.get(name.lower())
        if hit is None:
            continue
        entry = {k: v for k, v in functions[name].items() if k not in ("cost", "source", "interval")}
        changed[name] = {
            **entry,
            "cost": float(hit["cost"]),
            "source": LEARNED,
            "interval": [float(v) for v in hit["interval"]],
            "observations": int(hit["observations"]),
            "replaced": functions[name].get("source"),
        }
    return {**(options or {}), "functions": changed}


def engine_functions(options: dict[str, Any] | None) -> dict[str, Any] | None:
    """The options as the engine reads them: the report-only keys of a learned entry dropped."""
    functions = (options or {}).get("functions")
    if not isinstance(functions, dict) or not any(
        isinstance(e, dict) and ("observations" in e or "replaced" in e) for e in functions.values()
    ):
        return options
    trimmed = {
        n: ({k: v for k, v in e.items() if k not in ("observations", "replaced")} if isinstance(e, dict) else e)
        for n, e in functions.items()
    }
    return {**(options or {}), "functions": trimmed}


def function_costs(options: Mapping[str, Any] | None, plan: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Every function the request describes, and every undeclared one the answer's plan calls, priced.

    >>> for row in function_costs({"functions": {"F": {"cost": 5}}}, {"op": "filter", "predicate": {"fn": "g"}}):
    ...     print(row)
    {'name': 'f', 'cost': 5.0, 'interval': [5.0, 5.0], 'source': 'declared'}
    {'name': 'g', 'cost': 100.0, 'interval': [10.0, 1000.0], 'source': 'default'}
    """
    udf_default = float(((options or {}).get("predicate_costs") or {}).get("udf", DEFAULT_PREDICATE_COSTS["udf"]))
    out: dict[str, dict[str, Any]] = {}
    for name, entry in ((options or {}).get("functions") or {}).items():
        if not isinstance(entry, dict):
            continue
        cost = entry.get("cost")
        row: dict[str, Any] = {
            "name": name.lower(),
            "cost": udf_default if cost is None else float(cost),
            "interval": entry.get("interval")
            or ([float(cost)] * 2 if cost is not None else [udf_default / GUESS_SPREAD, udf_default * GUESS_SPREAD]),
            "source": "default" if cost is None else str(entry.get("source") or DECLARED),
        }
        if "observations" in entry:
            row["observations"] = entry["observations"]
        if entry.get("replaced"):
            row["replaced"] = entry["replaced"]
        out[row["name"]] = row
    guess = [udf_default / GUESS_SPREAD, udf_default * GUESS_SPREAD]
    for name in sorted(_called(plan) - set(out) - KNOWN_FUNCTIONS):
        out[name] = {"name": name, "cost": udf_default, "interval": guess, "source": "default"}
    return list(out.values())


def _called(plan: Any) -> set[str]:
    names: set[str] = set()
    stack = [plan]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            fn = item.get("fn")
            if isinstance(fn, str):
                names.add(fn.lower())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return names


def add_time_saved(
    response: dict[str, Any], calibration: Mapping[str, Any] | None, costs: list[dict[str, Any]]
) -> None:
    """``cost.time_saved_vs_baseline_s``: cost units saved against the baseline, in executor seconds.

    The interval multiplies the units saved by the calibration's low and high seconds per unit, and by how far the
    priced functions' intervals reach below and above their costs (the savings of holding an expensive function
    above a join scale with its cost; a conservative spread when several are priced).
    """
    cost = response.get("cost") or {}
    if "baseline" not in cost:
        return
    saved = float(cost["baseline"]["total"]) - float(cost["after"]["total"])
    if calibration is None:
        unit, (unit_lo, unit_hi), unit_source = DEFAULT_UNIT_S, DEFAULT_UNIT_INTERVAL, "default"
    else:
        unit, (unit_lo, unit_hi) = calibration["unit_s"], calibration["interval"]
        unit_source = calibration.get("source", "measured")
    lows = [c["interval"][0] / c["cost"] for c in costs if c.get("interval") and c["cost"] > 0]
    highs = [c["interval"][1] / c["cost"] for c in costs if c.get("interval") and c["cost"] > 0]
    f_lo, f_hi = min([1.0, *lows]), max([1.0, *highs])
    ends = sorted([saved * unit_lo * f_lo, saved * unit_hi * f_hi])
    cost["time_saved_vs_baseline_s"] = {
        "estimate": _round(saved * unit),
        "interval": [_round(ends[0]), _round(ends[1])],
        "unit_s": unit,
        "unit_source": unit_source,
    }


def _round(value: float) -> float:
    return float(f"{value:.4g}")
