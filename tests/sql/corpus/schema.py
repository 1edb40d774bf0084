"""The corpus schema: a small retail star schema rich in NULLs, duplicates and skew.

Rows are generated from a fixed seed, so every run sees the same data; a third
of the sales go to one store (skew), a fifth of the values are NULL where the
column allows it, and some rows repeat exactly (duplicates).
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from typing import Any

import duckdb

COLUMNS: dict[str, list[tuple[str, str]]] = {
    "sales": [
        ("sale_id", "int"),
        ("store_id", "int"),
        ("item_id", "int"),
        ("sold_on", "date"),
        ("qty", "int"),
        ("price", "decimal(10,2)"),
        ("channel", "string"),
    ],
    "stores": [("store_id", "int"), ("StateName", "string"), ("region", "string"), ("opened", "date")],
    "items": [("item_id", "int"), ("category", "string"), ("brand", "string"), ("list_price", "double")],
    "returns": [("sale_id", "int"), ("item_id", "int"), ("qty", "int"), ("reason", "string")],
}

_DUCK_TYPES = {
    "int": "INTEGER",
    "string": "VARCHAR",
    "date": "DATE",
    "double": "DOUBLE",
    "decimal(10,2)": "DECIMAL(10,2)",
}


def _maybe(rng: random.Random, value: Any, p: float = 0.2) -> Any:
    return None if rng.random() < p else value


def make_rows(seed: int = 16) -> dict[str, list[tuple[Any, ...]]]:
    """Deterministic rows for every table."""
    rng = random.Random(seed)
    states = ["CA", "NY", "TX", "ca", None]
    stores = [
        (
            i,
            _maybe(rng, rng.choice(states[:4]), 0.15),
            rng.choice(["west", "east", None]),
            dt.date(2015 + i % 6, 1 + i % 12, 1),
        )
        for i in range(1, 9)
    ]
    stores.append((None, "CA", "west", None))
    items = [
        (
            i,
            _maybe(rng, rng.choice(["food", "toys", "tools"])),
            _maybe(rng, rng.choice(["acme", "zen", "Acme"])),
            _maybe(rng, round(rng.uniform(1, 50), 2)),
        )
        for i in range(1, 13)
    ]
    sales = []
    for i in range(1, 121):
        store = 1 if rng.random() < 0.33 else _maybe(rng, rng.randint(1, 10), 0.1)
        sales.append(
            (
                i,
                store,
                _maybe(rng, rng.randint(1, 14), 0.1),
                _maybe(rng, dt.date(2020, 1, 1) + dt.timedelta(days=rng.randint(0, 800)), 0.1),
                _maybe(rng, rng.choice([1, 1, 2, 3, 5, 10, 0, -1])),
                _maybe(rng, Decimal(f"{rng.uniform(0.5, 99.99):.2f}")),
                _maybe(rng, rng.choice(["web", "store", "catalog"]), 0.15),
            )
        )
    sales.extend(rng.sample(sales, 15))  # exact duplicates
    returns = [
        (
            _maybe(rng, rng.randint(1, 130), 0.1),
            _maybe(rng, rng.randint(1, 12)),
            _maybe(rng, rng.randint(1, 3)),
            _maybe(rng, rng.choice(["broken", "late"])),
        )
        for _ in range(40)
    ]
    return {"sales": sales, "stores": stores, "items": items, "returns": returns}


def catalog(rows: dict[str, list[tuple[Any, ...]]]) -> dict[str, Any]:
    """The wire catalog: columns with types and row counts."""
    return {
        "tables": {
            name: {"columns": [{"name": c, "type": t} for c, t in cols], "row_count": len(rows[name])}
            for name, cols in COLUMNS.items()
        }
    }


def load_duckdb(rows: dict[str, list[tuple[Any, ...]]]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB holding the corpus tables."""
    con = duckdb.connect()
    for name, cols in COLUMNS.items():
        con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {_DUCK_TYPES[t]}' for c, t in cols)})")
        con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' for _ in cols)})", rows[name])
    return con


def spark_schema(name: str) -> str:
    """The Spark DDL schema string of one table."""
    return ", ".join(f"`{c}` {t}" for c, t in COLUMNS[name])
