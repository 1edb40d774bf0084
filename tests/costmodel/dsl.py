"""A small DSL that builds wire-format plans, so fixtures read like the plans they are.

plan = filter_(scan("t"), c("a") > 1)
result = run(plan, catalog)
assert after(result) == "TableScan: t filters=[a > 1]"
"""

from __future__ import annotations

import textwrap
from typing import Any

from costmodel import catalog_from_wire, options_from_wire, plan_from_wire
from costmodel.explain import explain
from costmodel.optimizer import OptimizeResult, optimize


def wrap(value: Any) -> dict[str, Any]:
    if isinstance(value, E):
        return value.d
    if isinstance(value, dict):
        return value
    return {"lit": value}


class E:
    """An expression; Python operators build wire calls (``c("a") > 1``)."""

    def __init__(self, d: dict[str, Any]):
        self.d = d

    def _bin(self, op: str, other: Any, flip: bool = False) -> E:
        args = [wrap(other), self.d] if flip else [self.d, wrap(other)]
        return E({"fn": op, "args": args})

    def __gt__(self, o):
        return self._bin(">", o)

    def __ge__(self, o):
        return self._bin(">=", o)

    def __lt__(self, o):
        return self._bin("<", o)

    def __le__(self, o):
        return self._bin("<=", o)

    def __eq__(self, o):
        return self._bin("=", o)  # type: ignore[override]

    def __ne__(self, o):
        return self._bin("!=", o)  # type: ignore[override]

    def __add__(self, o):
        return self._bin("+", o)

    def __sub__(self, o):
        return self._bin("-", o)

    def __mul__(self, o):
        return self._bin("*", o)

    def __truediv__(self, o):
        return self._bin("/", o)

    def __and__(self, o):
        return E({"fn": "and", "args": [self.d, wrap(o)]})

    def __or__(self, o):
        return E({"fn": "or", "args": [self.d, wrap(o)]})

    def __invert__(self):
        return E({"fn": "not", "args": [self.d]})

    __hash__ = None  # type: ignore[assignment]

    def like(self, pattern: str) -> E:
        return self._bin("like", pattern)

    def is_null(self) -> E:
        return E({"fn": "is_null", "args": [self.d]})

    def is_not_null(self) -> E:
        return E({"fn": "is_not_null", "args": [self.d]})

    def isin(self, *values: Any) -> E:
        return E({"fn": "in", "args": [self.d, *map(wrap, values)]})


def c(name: str) -> E:
    return E({"col": name})


def lit(value: Any, type: str | None = None) -> E:
    return E({"lit": value, **({"type": type} if type else {})})


def f(name: str, *args: Any, distinct: bool = False) -> E:
    out: dict[str, Any] = {"fn": name, "args": [wrap(a) for a in args]}
    if distinct:
        out["distinct"] = True
    return E(out)


def udf(name: str, *args: Any, cost: float, deterministic: bool = True) -> E:
    return E({"fn": "udf", "name": name, "args": [wrap(a) for a in args], "cost": cost, "deterministic": deterministic})


def and_(*parts: Any) -> E:
    return E({"fn": "and", "args": [wrap(p) for p in parts]})


def or_(*parts: Any) -> E:
    return E({"fn": "or", "args": [wrap(p) for p in parts]})


def _node(op: str, node_id: str | None, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"op": op}
    if node_id:
        out["id"] = node_id
    out.update(fields)
    return out


def scan(table: str, alias: str | None = None, id: str | None = None) -> dict[str, Any]:
    return _node("scan", id, table=table, **({"alias": alias} if alias else {}))


def filter_(input: dict, predicate: Any, id: str | None = None) -> dict[str, Any]:
    return _node("filter", id, predicate=wrap(predicate), input=input)


def project(input: dict, id: str | None = None, **named: Any) -> dict[str, Any]:
    return _node("project", id, exprs=[{"expr": wrap(e), "as": n} for n, e in named.items()], input=input)


def aggregate(input: dict, group_by: list[Any], id: str | None = None, **aggs: Any) -> dict[str, Any]:
    return _node(
        "aggregate",
        id,
        group_by=[wrap(g) for g in group_by],
        aggregates=[{"expr": wrap(e), "as": n} for n, e in aggs.items()],
        input=input,
    )


def join(
    left: dict, right: dict, on: Any = None, type: str = "inner", id: str | None = None, null_aware: bool = False
) -> dict[str, Any]:
    out = _node("join", id, type=type, on=wrap(on) if on is not None else None, left=left, right=right)
    if null_aware:
        out["null_aware"] = True
    return out


def union(*inputs: dict, all: bool = True, op: str = "union", id: str | None = None) -> dict[str, Any]:
    return _node(op, id, all=all, inputs=list(inputs))


def sort(input: dict, *keys: Any, limit: int | None = None, id: str | None = None) -> dict[str, Any]:
    out = _node("sort", id, keys=[{"expr": wrap(k), "desc": False} for k in keys], input=input)
    if limit is not None:
        out["limit"] = limit
    return out


def limit(input: dict, count: int | None, offset: int = 0, id: str | None = None) -> dict[str, Any]:
    return _node("limit", id, count=count, offset=offset, input=input)


def window(
    input: dict, partition_by: list[Any], order_by: list[Any] = (), id: str | None = None, **functions: Any
) -> dict[str, Any]:
    return _node(
        "window",
        id,
        partition_by=[wrap(p) for p in partition_by],
        order_by=[{"expr": wrap(o), "desc": False} for o in order_by],
        functions=[{"expr": wrap(e), "as": n} for n, e in functions.items()],
        input=input,
    )


def distinct(input: dict, id: str | None = None) -> dict[str, Any]:
    return _node("distinct", id, input=input)


def alias(input: dict, name: str, id: str | None = None) -> dict[str, Any]:
    return _node("alias", id, name=name, input=input)


def table(columns: list[str] | dict[str, str], rows: float | None = None, **stats: dict) -> dict[str, Any]:
    cols = (
        [{"name": n, "type": t} for n, t in columns.items()]
        if isinstance(columns, dict)
        else [{"name": n, "type": "int"} for n in columns]
    )
    out: dict[str, Any] = {"columns": cols}
    if rows is not None:
        out["row_count"] = rows
    if stats:
        out["column_stats"] = stats
    return out


def run(plan: dict, tables: dict[str, dict], **options: Any) -> OptimizeResult:
    catalog = catalog_from_wire({"tables": tables})
    opts = options_from_wire(options or None)
    return optimize(plan_from_wire(plan, catalog, functions=opts.functions), catalog, opts)


def after(result: OptimizeResult) -> str:
    return explain(result.plan)


def before(result: OptimizeResult) -> str:
    return explain(result.original)


def tree(text: str) -> str:
    """An expected plan written as an indented block in a test."""
    return textwrap.dedent(text).strip("\n")


def decision(result: OptimizeResult, predicate: str, operator: str) -> dict[str, Any]:
    found = [d for d in result.decisions if d["predicate"] == predicate and d["operator"] == operator]
    assert found, f"no decision for {predicate!r} at {operator}: {result.decisions}"
    return found[0]
