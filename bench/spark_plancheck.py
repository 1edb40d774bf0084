"""Where the filters sit in Spark's physical plans, and whether each configuration does what it claims."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from bench.spark_measure import Measured

CONFIGS = ("A", "B", "C")
JOINS = (
    "BroadcastHashJoinExec",
    "SortMergeJoinExec",
    "ShuffledHashJoinExec",
    "BroadcastNestedLoopJoinExec",
    "CartesianProductExec",
)
NESTED_LOOP = ("BroadcastNestedLoopJoinExec", "CartesianProductExec")


def _seq(scala_seq: Any) -> list[Any]:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def _conjuncts(expr: Any) -> list[Any]:
    if expr.getClass().getSimpleName() == "And":
        return _conjuncts(expr.left()) + _conjuncts(expr.right())
    return [expr]


def _kids(node: Any) -> list[Any]:
    """Children, looking through adaptive wrappers and into subquery plans."""
    name = node.getClass().getSimpleName()
    if name == "AdaptiveSparkPlanExec":
        return [node.inputPlan()]
    if name.endswith("QueryStageExec"):
        return [node.plan()]
    kids = _seq(node.children())
    with contextlib.suppress(Exception):  # a node without expressions
        kids += _seq(node.subqueries())
    return kids


def inspect_plan(root: Any) -> dict[str, Any]:
    """Where the filters sit in a physical plan.

    ``scans``: per Parquet scan, its table, PushedFilters (handed to the Parquet reader) and DataFilters
    (evaluated on the scan's rows); ``above_joins``: filter conjuncts with a join below them (a Python UDF's
    evaluation counts as one); ``join_conditions``: conjuncts a join evaluates besides its equi-keys;
    ``nested_loop``: Cartesian or nested-loop joins; ``udf_evals``: Python UDF evaluations, "above" or "below"
    a join.
    """
    out: dict[str, Any] = {"scans": [], "above_joins": 0, "join_conditions": 0, "nested_loop": 0, "udf_evals": []}

    def walk(node: Any) -> bool:
        """Visit ``node``; True when its subtree holds a join."""
        name = node.getClass().getSimpleName()
        has_join = False
        for kid in _kids(node):
            has_join = walk(kid) or has_join
        if name == "FileSourceScanExec":
            paths = _seq(node.relation().location().rootPaths())
            try:
                pushed = [f.toString() for f in _seq(node.pushedDownFilters())]
            except Exception:  # translating a filter with a scalar subquery needs the subquery's value
                pushed = [f.toString() for f in _seq(node.dataFilters()) if "subquery" not in f.toString()]
            out["scans"].append(
                {
                    "table": paths[0].getName() if paths else "?",
                    "pushed": pushed,
                    "data_filters": len(_seq(node.dataFilters())),
                }
            )
        elif name == "FilterExec" and has_join:
            out["above_joins"] += len(_conjuncts(node.condition()))
        elif name in ("BatchEvalPythonExec", "ArrowEvalPythonExec"):
            out["udf_evals"].append("above" if has_join else "below")
        elif name in JOINS:
            if name in NESTED_LOOP:
                out["nested_loop"] += 1
            condition = node.condition()
            if condition.isDefined():
                out["join_conditions"] += len(_conjuncts(condition.get()))
        return has_join or name in JOINS

    walk(root)
    out["scans"].sort(key=lambda s: (s["table"], -len(s["pushed"])))
    return out


def plan_shape(plan: dict[str, Any]) -> dict[str, Any]:
    """The same facts read off a wire plan: each table's scan filters, and the conjuncts evaluated on joined
    rows (in filters above joins, or in a join's condition besides its column = column keys)."""
    tables: dict[str, int] = {}
    above = 0

    def count(expr: Any) -> int:
        if isinstance(expr, dict) and expr.get("fn") == "and":
            return sum(count(a) for a in expr["args"])
        return 1

    def non_equi(expr: Any) -> int:
        """Conjuncts of a join's ``on`` that are not column = column (Spark evaluates those on joined rows)."""
        if not isinstance(expr, dict):
            return 0
        if expr.get("fn") == "and":
            return sum(non_equi(a) for a in expr["args"])
        args = expr.get("args") or []
        return 0 if expr.get("fn") == "=" and len(args) == 2 and all("col" in a for a in args) else 1

    def walk(node: dict[str, Any]) -> tuple[bool, str | None]:
        """(subtree holds a join, the table when the subtree is a scan under projects/filters)."""
        nonlocal above
        kids = [node[k] for k in ("input", "left", "right") if isinstance(node.get(k), dict)]
        kids += [k for k in node.get("inputs", []) if isinstance(k, dict)]
        results = [walk(k) for k in kids]
        for key, value in node.items():  # subquery plans inside the node's expressions
            if key not in ("input", "left", "right", "inputs"):
                for sub in _plans_in(value):
                    walk(sub)
        has_join = any(r[0] for r in results)
        op = node.get("op")
        if op == "scan":
            table = node.get("table")
            plain = [f for f in node.get("filters") or [] if not any(True for _ in _plans_in(f))]
            tables[table] = tables.get(table, 0) + sum(count(f) for f in plain)
            return False, table
        if op == "filter":
            n = count(node.get("predicate"))
            if has_join:
                above += n
            elif len(results) == 1 and results[0][1]:
                tables[results[0][1]] = tables.get(results[0][1], 0) + n
            return has_join, results[0][1] if len(results) == 1 else None
        if op == "project":
            return has_join, results[0][1] if results else None
        if op == "join":
            above += non_equi(node.get("on"))
        return has_join or op == "join", None

    walk(plan)
    return {"scan_filters": tables, "above_joins": above}


def _plans_in(value: Any) -> Iterable[dict[str, Any]]:
    """The plan nodes nested in an expression (subqueries), outermost first."""
    if isinstance(value, dict):
        if "op" in value:
            yield value
            return
        for v in value.values():
            yield from _plans_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from _plans_in(v)


def _pushed_by_table(plan: dict[str, Any]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for scan in plan.get("scans", []):
        out.setdefault(scan["table"], []).append(len(scan["pushed"]))
    return out


def check_plans(name: str, m: dict[str, Measured], original: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """Anomalies: a configuration whose physical plan does not do what the configuration claims."""
    issues: list[str] = []
    a, b, c = (m[k].plan for k in CONFIGS)
    if not all(p and "error" not in p for p in (a, b, c)):
        return [
            f"{k}: plan not checked ({m[k].error or m[k].plan.get('error')})"
            for k in CONFIGS
            if not m[k].plan or "error" in m[k].plan
        ]
    own = {t for t, n in plan_shape(original)["scan_filters"].items() if n}
    stray = sorted({s["table"] for s in a["scans"] if s["data_filters"]} - own)
    if stray:
        issues.append(f"A: scans of {stray} carry filters the original does not put on them")
    if a["nested_loop"] > c["nested_loop"]:
        issues.append(
            f"A: {a['nested_loop'] - c['nested_loop']} nested-loop/Cartesian join(s) C does not have "
            "(a comma join's equi-predicate stays above the join without PushPredicateThroughJoin)"
        )
    if b["nested_loop"] > c["nested_loop"]:
        issues.append("B: nested-loop/Cartesian join(s) C does not have")
    shape = plan_shape(ours)
    wanted = {t for t, n in shape["scan_filters"].items() if n}
    got = {s["table"] for s in b["scans"] if s["data_filters"]}
    if wanted - got:
        issues.append(f"B: our plan filters {sorted(wanted - got)} at the scan, Spark's scans do not")
    if got - wanted:
        issues.append(f"B: Spark filters {sorted(got - wanted)} at the scan, our plan does not")
    on_joined = b["above_joins"] + b["join_conditions"]
    if on_joined > shape["above_joins"]:
        issues.append(f"B: {on_joined} conjuncts evaluated on joined rows, our plan has {shape['above_joins']}")
    total = {k: sum(len(s["pushed"]) for s in p["scans"]) for k, p in zip(CONFIGS, (a, b, c), strict=True)}
    if total["C"] < total["A"]:
        issues.append(f"C: fewer PushedFilters ({total['C']}) than A ({total['A']})")
    joined = {k: p["above_joins"] + p["join_conditions"] for k, p in zip(CONFIGS, (a, b, c), strict=True)}
    if joined["C"] > joined["A"]:
        issues.append(f"C: more conjuncts evaluated on joined rows ({joined['C']}) than A ({joined['A']})")
    return issues
