"""What Spark did: read a DataFrame's executed physical plan (the final one, after adaptive execution)."""

from __future__ import annotations

from typing import Any

JOINS = frozenset(
    {"BroadcastHashJoinExec", "SortMergeJoinExec", "ShuffledHashJoinExec", "BroadcastNestedLoopJoinExec"}
    | {"CartesianProductExec"}
)
AGGREGATES = frozenset({"HashAggregateExec", "SortAggregateExec", "ObjectHashAggregateExec"})
WINDOWS = frozenset({"WindowExec", "WindowGroupLimitExec"})
PYTHON_UDFS = frozenset({"BatchEvalPythonExec", "ArrowEvalPythonExec"})
BARRIER = "SPARK_PARTITION_ID()"


def name(node: Any) -> str:
    return node.getClass().getSimpleName()


def children(node: Any) -> list[Any]:
    """Children, looking through adaptive execution's wrappers to the plan that ran."""
    kind = name(node)
    if kind == "AdaptiveSparkPlanExec":
        return [node.executedPlan()]
    if kind.endswith("QueryStageExec"):
        return [node.plan()]
    kids = node.children()
    return [kids.apply(i) for i in range(kids.size())]


def executed(df: Any) -> Any:
    return df._jdf.queryExecution().executedPlan()


def walk(node: Any) -> list[Any]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(children(current))
    return out


def below(node: Any) -> set[str]:
    """Class names of every operator under ``node``."""
    return {name(n) for n in walk(node)[1:]}


def filters_with(df: Any, text: str) -> list[Any]:
    """The FilterExec nodes whose condition mentions ``text``."""
    return [n for n in walk(executed(df)) if name(n) == "FilterExec" and text in n.condition().toString()]


def python_evals(df: Any) -> list[Any]:
    return [n for n in walk(executed(df)) if name(n) in PYTHON_UDFS]


def scan_filters(df: Any) -> list[str]:
    """Conditions of filters sitting directly on a scan (where Catalyst pushed them)."""
    out = []
    for n in walk(executed(df)):
        if name(n) == "FilterExec" and any(name(k).endswith("ScanExec") or "Scan" in name(k) for k in children(n)):
            out.append(n.condition().toString())
    return out
