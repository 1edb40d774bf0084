"""Shared test data: a tiny catalog and DuckDB tables full of NULLs and duplicates.

Round-trip tests compare row multisets, so every helper here is about running
SQL on DuckDB and normalising results into sortable tuples.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import duckdb
import sqlglot

COLUMNS: dict[str, list[tuple[str, str]]] = {
    "t": [("a", "int"), ("b", "string"), ("c", "int"), ("d", "date"), ("e", "double")],
    "u": [("a", "int"), ("c", "int"), ("f", "string")],
    "v": [("k", "int"), ("w", "string")],
}

ROWS: dict[str, list[tuple[Any, ...]]] = {
    "t": [
        (1, "x", 10, "2020-01-01", 1.5),
        (1, "x", 10, "2020-01-01", 1.5),
        (2, "y", None, "2020-02-15", 2.5),
        (3, None, 30, None, None),
        (None, "z", 40, "2021-03-31", -1.0),
        (4, "y", 20, "2020-12-31", 0.0),
        (5, "x", None, "2019-06-30", 3.25),
    ],
    "u": [
        (1, 100, "p"),
        (1, 100, "p"),
        (2, None, "q"),
        (None, 300, "r"),
        (6, 600, None),
        (4, 400, "q"),
    ],
    "v": [(10, "ten"), (20, "twenty"), (None, "none"), (30, None), (10, "ten")],
}

CATALOG: dict[str, Any] = {
    "tables": {
        name: {"columns": [{"name": c, "type": t} for c, t in cols], "row_count": len(ROWS[name])}
        for name, cols in COLUMNS.items()
    }
}

_DUCK_TYPES = {"int": "INTEGER", "string": "VARCHAR", "date": "DATE", "double": "DOUBLE"}


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with t, u and v loaded."""
    con = duckdb.connect()
    for name, cols in COLUMNS.items():
        con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {_DUCK_TYPES[t]}' for c, t in cols)})")
        marks = ", ".join("?" for _ in cols)
        for row in ROWS[name]:
            con.execute(f"INSERT INTO {name} VALUES ({marks})", list(row))
    return con


def _norm(value: Any) -> Any:
    if isinstance(value, (float, Decimal)):
        return round(float(value), 6)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """None-safe sort key: NULLs first, then by type name, then value."""
    return tuple((v is not None, type(v).__name__, v if v is not None else 0) for v in row)


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    """The query's rows as a sorted multiset."""
    got = [tuple(_norm(v) for v in row) for row in con.execute(sql).fetchall()]
    return sorted(got, key=_key)


def spark_to_duckdb(sql: str) -> str:
    """Run Spark-dialect fixture SQL on DuckDB with Spark's semantics (sqlglot transpiles)."""
    return sqlglot.transpile(sql, read="spark", write="duckdb")[0]
