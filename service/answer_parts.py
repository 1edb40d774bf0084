"""Parts of an answer added after the engine ran: the ``spark`` object (what to run on Spark), the savings
against the rule-based baseline the engine costed, and the warning for a cross product in the query as written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from costmodel.result import FullParts


def attach_spark(
    response: dict[str, Any],
    catalog: dict[str, Any] | None,
    as_written: str | None = None,
    texts: Callable[[], dict[str, list[str]] | None] | None = None,
    min_savings: float | None = None,
    expensive_threshold: float = 10.0,
) -> None:
    """Adds the answer's ``spark`` object (``service.spark_plan``); a plan Spark SQL cannot express gets a warning.

    ``as_written``: the request's own Spark SQL. When the answer needs no barrier and no setting, Catalyst's own
    pushdown places every predicate where the answer does (each pushed one as deep as legal, each kept one left to
    Spark): the query then runs as written (``as_written: true``), so Spark analyzes one query instead of two and
    the caller's text, hints and names reach it untouched, and the answer's plan is not rendered a second time.
    ``texts``: the engine's conjunct texts of the plan (``FullParts.conjunct_texts``), which spare reading the
    plan again. ``min_savings`` (``options.min_savings``): when the estimated saving against rule-based pushdown
    (``add_baseline``) is below it, or its interval reaches below zero, a query that would need barriers runs as
    written: do no harm before any gain (None: the caller chose the placement, mode always or never).
    ``expensive_threshold`` (``options.expensive_threshold``): where the answer put a filter's cheap conjuncts
    before one at least this costly, the answer's SQL is sent rather than the query as written, whose order Spark
    would keep (``_reordered_on_spark``)."""
    try:
        from service.spark_plan import SparkTarget, spark_target
        from service.sql.errors import SqlError
    except ImportError as exc:  # SQL support is optional
        if not (exc.name or "").startswith("service."):
            raise
        return
    try:
        target = spark_target(response["plan"], response.get("decisions", []), catalog, as_written, texts)
    except SqlError as exc:
        response.setdefault("warnings", []).append(f"no Spark SQL for this plan: {exc.message}")
        return
    cost = response.get("cost", {})
    if as_written is not None and not target.as_written and min_savings is not None and _immaterial(cost, min_savings):
        response.setdefault("warnings", []).append(
            f"runs as written: against Spark's own placement the answer saves {_share(cost['savings_vs_baseline'])}"
            f"{_interval_text(cost)}, less than options.min_savings ({_share(min_savings)}); a barrier that buys "
            "that little costs Spark what the model does not price"
        )
        target = SparkTarget(sql=as_written, as_written=True)
        response["spark"] = {**target.as_json(), "immaterial": True}
    else:
        reordered = _reordered_on_spark(response, expensive_threshold)
        if as_written is not None and target.as_written and reordered:
            # Spark evaluates a filter's conjuncts left to right as written: the query as written would run the
            # expensive conjunct first, so the answer's own order is rendered (no barrier needed)
            target = spark_target(response["plan"], response.get("decisions", []), catalog, None, texts)
            response["spark"] = {**target.as_json(), "conjunct_order": reordered}
        else:
            response["spark"] = target.as_json()
    if target.unheld:
        response.setdefault("warnings", []).append(
            f"Spark may move {', '.join(target.unheld)}: a kept condition of an outer, semi or anti join cannot "
            "carry a barrier, and settings would cost the query Catalyst's other pushdowns"
        )


def _reordered_on_spark(response: dict[str, Any], expensive_threshold: float) -> list[str]:
    """The operators whose conjuncts the answer reordered so that an expensive conjunct (per-row cost at least
    ``expensive_threshold``, no subquery in it: Spark turns those into joins) now follows a cheaper one. Spark's
    generated code evaluates a conjunction left to right and stops at the first false, so there the order as
    written costs Spark the expensive test on every row.

    >>> scan = {"op": "scan", "id": "n1", "table": "t", "filters": []}
    >>> cheap = {"fn": ">", "args": [{"col": "t.a"}, {"lit": 1, "type": "int"}]}
    >>> regex = {"fn": "rlike", "args": [{"col": "t.b"}, {"lit": "x.*", "type": "string"}]}
    >>> plan = {"op": "filter", "id": "n3", "predicate": {"fn": "and", "args": [cheap, regex]}, "input": scan}
    >>> entry = {"rule": "conjunct_order", "operator": "n3", "order": [{"cost": 1.0}, {"cost": 10.0}]}
    >>> response = {"plan": plan, "rewrites": [entry]}
    >>> _reordered_on_spark(response, 10.0), _reordered_on_spark(response, 50.0)
    (['n3'], [])
    """
    from costmodel.wire.nodes import nodes_in_order
    from service.spark_plan import wire_conjuncts

    entries = [
        r
        for r in response.get("rewrites", [])
        if r.get("rule") == "conjunct_order" and _mixes_costs(r.get("order", []), expensive_threshold)
    ]
    if not entries:  # no reordered operator holds both a cheap and an expensive conjunct: the plan is not read
        return []
    by_id = {str(node.get("id")): node for node in nodes_in_order(response["plan"])}
    found = []
    for entry in entries:
        node = by_id.get(str(entry.get("operator")), {})
        written = [node["predicate"]] if node.get("op") == "filter" else list(node.get("filters") or [])
        parts = [c for expr in written for c in wire_conjuncts(expr)]
        costs = [float(part.get("cost") or 0.0) for part in entry.get("order", [])]
        if len(parts) != len(costs):
            continue
        expensive = [c >= expensive_threshold and not nodes_in_order(p) for p, c in zip(parts, costs, strict=True)]
        if any(expensive) and min(costs) < expensive_threshold:
            found.append(str(entry["operator"]))
    return found


def _mixes_costs(order: list[dict[str, Any]], expensive_threshold: float) -> bool:
    """Whether a ``conjunct_order`` entry's conjuncts include one costing at least ``expensive_threshold`` and one
    costing less: an operator without both cannot have put a cheap conjunct before an expensive one
    (``_reordered_on_spark``), so its conjuncts need not be read from the plan.

    >>> _mixes_costs([{"cost": 1.0}, {"cost": 10.0}], 10.0), _mixes_costs([{"cost": 1.0}, {"cost": 2.0}], 10.0)
    (True, False)
    """
    costs = [float(part.get("cost") or 0.0) for part in order]
    return any(c >= expensive_threshold for c in costs) and min(costs) < expensive_threshold


def _immaterial(cost: dict[str, Any], min_savings: float) -> bool:
    """The answer saves less than ``min_savings`` against rule-based pushdown (Catalyst's own placement), or may
    lose against it: the estimate is below the bar, or the low end of the savings' interval is below zero.

    >>> _immaterial({"savings_vs_baseline": 4e-06, "savings_vs_baseline_interval": [0.0, 4e-06]}, 0.01)
    True
    >>> _immaterial({"savings_vs_baseline": 0.99, "savings_vs_baseline_interval": [0.0, 0.999]}, 0.01)
    False
    >>> _immaterial({"savings_vs_baseline": 0.4, "savings_vs_baseline_interval": [-0.2, 0.9]}, 0.01)
    True
    """
    if "savings_vs_baseline" not in cost:
        return False
    interval = cost.get("savings_vs_baseline_interval")
    return float(cost["savings_vs_baseline"]) < min_savings or (interval is not None and float(interval[0]) < 0)


def _interval_text(cost: dict[str, Any]) -> str:
    interval = cost.get("savings_vs_baseline_interval")
    return f" (from {_share(interval[0])} to {_share(interval[1])})" if interval else ""


def _share(value: float) -> str:
    return f"{value * 100:.3g}%"


def one_to_run(response: dict[str, Any], dialect: str) -> None:
    """The answer's ``sql`` becomes the one query to run: for Spark the ``spark`` object's, which keeps every
    decision on Spark (a kept predicate behind its barrier, the settings aside); the engine-neutral rendering,
    which Spark's own pushdown may undo, moves to ``sql_portable``. For another dialect both are the rendering
    in that dialect (the barriers are Spark's).

    When Spark runs the query as written, the answer adds nothing to rule-based pushdown, so ``sql_portable`` is
    the query as written too: rendered, its CTEs would be inlined and the filters an engine derives for itself
    written out, which an engine that computes a CTE used twice once (DuckDB, PostgreSQL) or keeps derived
    filters optional runs slower (bench/corpus_duckdb.py)."""
    portable = response.get("sql")
    if portable is None:
        return
    response["sql_portable"] = portable
    spark = response.get("spark")
    if dialect == "spark" and isinstance(spark, dict) and isinstance(spark.get("sql"), str):
        response["sql"] = spark["sql"]
        portable_as_written(response, spark)


def portable_as_written(response: dict[str, Any], spark: dict[str, Any]) -> None:
    """``sql_portable`` is the query as written where Spark runs it so (see ``one_to_run``)."""
    if spark.get("as_written"):
        response["sql_portable"] = spark["sql"]


def add_baseline(response: dict[str, Any]) -> None:
    """The answer's ``cost`` gains the savings against its ``baseline``, the headline; ``savings_vs_written``
    labels the old figure. The baseline is the cost of the plan rule-based pushdown runs
    (Catalyst and every peer push each filter as deep as legal), which the engine computes when asked
    (``optimize(baseline=True)``)."""
    cost = response["cost"]
    after = float(cost["after"]["total"])
    baseline = float(cost["baseline"]["total"])
    cost["savings_vs_baseline"] = _savings(baseline, after)
    interval = cost["baseline"].get("savings_interval")
    if interval is not None:  # the range the estimates' intervals allow, and whether a default estimate is in it
        cost["savings_vs_baseline_interval"] = interval
        cost["savings_rest_on_defaults"] = bool(cost["baseline"].get("on_defaults"))
    cost["savings_vs_written"] = cost.get("savings", _savings(float(cost["before"]["total"]), after))


def _savings(before: float, after: float) -> float:
    return 0.0 if before <= 0 or abs(before - after) <= 1e-9 * before else round(1 - after / before, 6)


def warn_cross_products(response: dict[str, Any], parts: FullParts) -> None:
    """A join without a condition in the query as written makes savings against it meaningless: say so.

    ``parts``: the engine's for the plan as written, which lists such joins (``FullParts.cross_products``)."""
    joins = parts.cross_products()
    if joins:
        response.setdefault("warnings", []).append(
            f"the query as written has a cross product (join {', '.join(joins)} has no condition): savings against it "
            "overstate the gain; savings_vs_baseline compares with rule-based pushdown"
        )
