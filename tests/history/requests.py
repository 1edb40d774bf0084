"""Optimize requests for the history tests: several pipelines, all three input forms, pushed, kept and blocked."""

from __future__ import annotations

import copy
from typing import Any

CATALOG: dict[str, Any] = {
    "tables": {
        "cities": {
            "columns": [
                {"name": "id", "type": "int"},
                {"name": "name", "type": "string"},
                {"name": "state_id", "type": "int"},
            ],
            "row_count": 20000,
            "column_stats": {"state_id": {"ndv": 50, "min": 1, "max": 50, "null_count": 0}},
        },
        "states": {
            "columns": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}],
            "row_count": 50,
        },
    }
}


def _col(name: str) -> dict[str, Any]:
    return {"col": name}


def _cmp(op: str, column: str, value: Any, type_: str = "int") -> dict[str, Any]:
    return {"fn": op, "args": [_col(column), {"lit": value, "type": type_}]}


def _like(column: str, pattern: str) -> dict[str, Any]:
    return {"fn": "like", "args": [_col(column), {"lit": pattern}]}


JOIN_PLAN: dict[str, Any] = {
    "op": "project",
    "exprs": [{"expr": _col("c.name"), "as": "city"}],
    "input": {
        "op": "filter",
        "predicate": {"fn": "and", "args": [_like("c.name", "A%"), _like("s.name", "A%")]},
        "input": {
            "op": "join",
            "type": "inner",
            "on": {"fn": "=", "args": [_col("c.state_id"), _col("s.id")]},
            "left": {"op": "scan", "table": "cities", "alias": "c"},
            "right": {"op": "scan", "table": "states", "alias": "s"},
        },
    },
}

HAVING_SQL = (
    "SELECT c.name, count(*) AS n FROM cities c JOIN cities d ON c.id = d.state_id "
    "WHERE c.name LIKE 'A%' AND d.state_id > 3 GROUP BY c.name HAVING count(*) > 2 LIMIT 10"
)

LIMIT_PLAN: dict[str, Any] = {
    "op": "filter",
    "predicate": _cmp(">", "state_id", 10),
    "input": {"op": "limit", "count": 100, "input": {"op": "scan", "table": "cities"}},
}

UDF_PLAN: dict[str, Any] = {
    "op": "filter",
    "predicate": {"fn": "udf", "name": "score", "args": [_col("state_id")], "cost": 1000, "deterministic": True},
    "input": {
        "op": "aggregate",
        "group_by": [_col("state_id")],
        "aggregates": [{"expr": {"fn": "count", "args": [_col("id")]}, "as": "n"}],
        "input": {"op": "scan", "table": "cities"},
    },
}


def request(kind: str, pipeline: str | None, task: str | None = None, run: str | None = None) -> dict[str, Any]:
    """A request of one ``kind`` (join, having, limit, udf) with the given context."""
    body: dict[str, Any] = {"catalog": copy.deepcopy(CATALOG), "options": {"mode": "cost"}}
    if kind == "having":
        body.update(sql=HAVING_SQL, dialect="spark")
    else:
        body["plan"] = copy.deepcopy({"join": JOIN_PLAN, "limit": LIMIT_PLAN, "udf": UDF_PLAN}[kind])
    context = {k: v for k, v in (("pipeline", pipeline), ("task", task), ("run", run)) if v is not None}
    if context:
        body["context"] = context
    return body


#: (kind, pipeline, task): what the seeded history holds, repeated over several days.
MIX: list[tuple[str, str, str]] = [
    ("join", "daily_cities", "load"),
    ("having", "daily_cities", "report"),
    ("limit", "web_sessions", "sample"),
    ("udf", "fraud_scores", "score"),
    ("join", "fraud_scores", "enrich"),
    ("having", "web_sessions", "rollup"),
]
