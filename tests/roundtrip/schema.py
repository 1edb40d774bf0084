"""The round-trip generator's schema: three tables of one shape, data rich in NULLs, duplicates and skew.

Every table has the same columns, so any two can be joined on ``k`` or combined by a set operation. ``id`` is
unique up to exact duplicate rows, so ordering by it (last) makes every ORDER BY, LIMIT and window frame
deterministic: rows that tie on it are identical. Doubles are multiples of 0.25, so sums are exact in any order.

    >>> [name for name, _ in COLUMNS]
    ['id', 'k', 'x', 'n', 's', 'd']
    >>> len(ROWS["t1"]) > len(ROWS["t3"])
    True
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import duckdb

TABLES = ("t1", "t2", "t3")
#: (name, wire type): the join key ``k`` (skewed), an int ``x``, a double ``n``, a string ``s``, a date ``d``
COLUMNS: list[tuple[str, str]] = [
    ("id", "int"),
    ("k", "int"),
    ("x", "int"),
    ("n", "double"),
    ("s", "string"),
    ("d", "date"),
]
TYPE_OF = dict(COLUMNS)
_DUCK_TYPES = {"int": "INTEGER", "double": "DOUBLE", "string": "VARCHAR", "date": "DATE"}
_SIZES = {"t1": 40, "t2": 28, "t3": 12}


def _rows(name: str, size: int, seed: int) -> list[tuple[Any, ...]]:
    """``size`` rows plus exact duplicates of some; ``k`` and ``s`` skewed, every nullable column ~15% NULL."""
    rng = random.Random(f"{name}-{seed}")

    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.15 else value

    out: list[tuple[Any, ...]] = []
    for i in range(1, size + 1):
        k = 1 if rng.random() < 0.55 else rng.randint(2, 7)  # one hot key
        out.append(
            (
                i,
                maybe(k),
                maybe(rng.choice([0, 1, 2, 3, 5, 8, 13, 40, -4])),
                maybe(rng.randint(-8, 40) * 0.25),
                maybe("a" if rng.random() < 0.5 else rng.choice(["b", "c", "dd", ""])),
                maybe(dt.date(2020, 1, 1) + dt.timedelta(days=rng.randint(0, 500))),
            )
        )
    out.extend(rng.sample(out, max(2, size // 6)))  # exact duplicates
    rng.shuffle(out)
    return out


ROWS: dict[str, list[tuple[Any, ...]]] = {name: _rows(name, _SIZES[name], 7) for name in TABLES}


def _stats(rows: list[tuple[Any, ...]], i: int) -> dict[str, Any]:
    values = [row[i] for row in rows if row[i] is not None]
    stats: dict[str, Any] = {"ndv": len(set(values)), "null_count": len(rows) - len(values)}
    if values and not isinstance(values[0], str):
        lo, hi = min(values), max(values)
        stats.update(
            min=lo.isoformat() if isinstance(lo, dt.date) else lo, max=hi.isoformat() if isinstance(hi, dt.date) else hi
        )
    return stats


#: The catalog the adapter and the engine get: columns, row counts and column statistics of the data above.
CATALOG: dict[str, Any] = {
    "tables": {
        name: {
            "columns": [{"name": c, "type": t} for c, t in COLUMNS],
            "row_count": len(ROWS[name]),
            "column_stats": {c: _stats(ROWS[name], i) for i, (c, _) in enumerate(COLUMNS)},
        }
        for name in TABLES
    }
}


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB holding the three tables."""
    con = duckdb.connect()
    columns = ", ".join(f"{c} {_DUCK_TYPES[t]}" for c, t in COLUMNS)
    for name in TABLES:
        con.execute(f"CREATE TABLE {name} ({columns})")
        con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' for _ in COLUMNS)})", ROWS[name])
    return con
