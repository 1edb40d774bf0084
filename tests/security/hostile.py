"""The hostile requests of issue 15, as bodies: each a small or plain JSON document that used to hurt."""

from __future__ import annotations

import json
from typing import Any

CITIES: dict[str, Any] = {
    "tables": {
        "cities": {
            "columns": [
                {"name": "id", "type": "int"},
                {"name": "name", "type": "string"},
                {"name": "state_id", "type": "int"},
            ],
            "row_count": 20000,
            "column_stats": {"state_id": {"ndv": 50, "min": 1, "max": 50, "null_count": 0}},
        }
    }
}
ONE_COLUMN = {"tables": {"t": {"columns": [{"name": "a", "type": "int"}]}}}


def greater(value: int) -> dict[str, Any]:
    return {"fn": ">", "args": [{"col": "state_id"}, {"lit": value, "type": "int"}]}


def small_plan() -> dict[str, Any]:
    return {
        "op": "project",
        "exprs": [{"expr": {"col": "name"}, "as": "name"}],
        "input": {"op": "filter", "predicate": greater(40), "input": {"op": "scan", "table": "cities"}},
    }


def small_request() -> dict[str, Any]:
    return {"plan": small_plan(), "catalog": CITIES}


def dumps(body: Any) -> bytes:
    return json.dumps(body).encode()


def or_terms(n: int) -> bytes:
    where = " OR ".join(f"a = {i}" for i in range(n))
    return dumps({"sql": f"SELECT a FROM t WHERE {where}", "catalog": ONE_COLUMN})


def joins(n: int) -> bytes:
    chain = " ".join(f"JOIN t{i} ON t{i}.a = t0.a" for i in range(1, n + 1))
    tables = {f"t{i}": {"columns": [{"name": "a", "type": "int"}], "row_count": 1000} for i in range(n + 1)}
    return dumps({"sql": f"SELECT t0.a FROM t0 {chain} WHERE t0.a > 5", "catalog": {"tables": tables}})


def union_branches(n: int) -> bytes:
    branches = [
        {"op": "filter", "predicate": greater(i % 50), "input": {"op": "scan", "table": "cities"}} for i in range(n)
    ]
    plan = {"op": "filter", "predicate": greater(40), "input": {"op": "union", "all": True, "inputs": branches}}
    return dumps({"plan": plan, "catalog": CITIES})


def sql_of_size(size: int) -> bytes:
    where, i = [], 0
    length = 0
    while length < size:
        term = f"a = {i}"
        where.append(term)
        length += len(term) + 4
        i += 1
    return dumps({"sql": "SELECT a FROM t WHERE " + " OR ".join(where), "catalog": ONE_COLUMN})


def with_costs(value: float) -> bytes:
    return dumps({**small_request(), "options": {"operator_costs": {"filter": value, "scan": value}}})


def literal(text: str) -> bytes:
    """The small request with the filter's literal 40 written as ``text`` (any JSON number)."""
    return dumps(small_request()).replace(b'"lit": 40', b'"lit": ' + text.encode())


def row_count(text: str) -> bytes:
    return dumps(small_request()).replace(b'"row_count": 20000', b'"row_count": ' + text.encode())


def lone_surrogate_value() -> bytes:
    return dumps({**small_request(), "context": {"pipeline": "\ud800"}})


def lone_surrogate_key() -> bytes:
    return dumps(small_request()).replace(b'"state_id": {"ndv"', b'"\\udc00": {"ndv"')


def deep(levels: int) -> bytes:
    node = b'{"op": "filter", "predicate": {"col": "state_id"}, "input": '
    return (
        b'{"plan": '
        + node * levels
        + b'{"op": "scan", "table": "cities"}'
        + b"}" * levels
        + b', "catalog": '
        + dumps(CITIES)
        + b"}"
    )


def wide_options(n: int) -> bytes:
    return dumps({**small_request(), "options": {"operator_costs": {f"k{i}": 1 for i in range(n)}}})


def wide_context(n: int) -> bytes:
    return dumps({**small_request(), "context": {"pipeline": "x" * n}})
