"""What the TPC-H checks share: the queries, the SF1 catalog, the service call and row normalisation.

The service is called exactly as ``POST /optimize`` calls it (SQL in, Spark dialect), and
its answers are cached per (query, mode) because the engine is deterministic and several
tests read the same answer.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Iterable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import sqlglot

from service.optimize import OptimizeInput, OptimizeService

REPO = Path(__file__).resolve().parents[2]
TPCH = REPO / "bench" / "tpch"
CATALOG: dict[str, Any] = json.loads((TPCH / "catalog.json").read_text())
TABLES: list[str] = list(CATALOG["tables"])
QUERY_FILES: list[Path] = sorted((TPCH / "queries").glob("q*.sql"))
NAMES: list[str] = [q.stem for q in QUERY_FILES]

#: Data is generated at this scale factor; the catalog keeps SF1 statistics on purpose, so
#: decisions are the ones a production-sized run gets, while the rows stay small to compare.
SCALE_FACTOR = 0.01


def query_sql(name: str) -> str:
    return (TPCH / "queries" / f"{name}.sql").read_text()


@functools.cache
def _optimized(name: str, mode: str) -> str:
    answer = OptimizeService().optimize(
        OptimizeInput(sql=query_sql(name), catalog=CATALOG, dialect="spark", options={"mode": mode})
    )
    return json.dumps(answer)


def optimized(name: str, mode: str) -> dict[str, Any]:
    """The service's answer for one query; a fresh copy, so a test cannot spoil the cache."""
    return json.loads(_optimized(name, mode))


def spark_to_duckdb(sql: str) -> str:
    """The original Spark SQL for DuckDB, transpiled by sqlglot (independent of our adapter)."""
    return sqlglot.transpile(sql, read="spark", write="duckdb")[0]


def _norm(value: Any) -> Any:
    if isinstance(value, float | Decimal):
        return round(float(value), 2) + 0.0  # + 0.0 turns -0.0 into 0.0
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value


def _key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """None-safe sort key: NULLs first, then by type name, then value."""
    return tuple((v is not None, type(v).__name__, v if v is not None else 0) for v in row)


def multiset(rows: Iterable[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Rows as a sorted list (a multiset that pytest can diff), numbers rounded to 2 places."""
    return sorted((tuple(_norm(v) for v in row) for row in rows), key=_key)


def predicate_summary(answer: dict[str, Any]) -> dict[str, list[str]]:
    """Each predicate once, by what finally happened to it on its way down.

    ``pushed``: it moved past at least one operator or into a scan/join; ``kept``: the
    cost model stopped it somewhere; ``blocked``: a legality rule stopped it somewhere.
    A predicate can be both pushed and then kept or blocked lower down.
    """
    out: dict[str, list[str]] = {"pushed": [], "kept": [], "blocked": []}
    for d in answer["decisions"]:
        bucket = out[d["action"]]
        if d["predicate"] not in bucket:
            bucket.append(d["predicate"])
    return out
