"""One query through every trip: SQL -> plan -> SQL -> plan, the engine's wire round trip, and DuckDB runs.

``check(sql, con)`` returns what it found wrong (empty when nothing) and the facts of the adapter's plan and of
the optimized plans, which the test adds up for its coverage assertion.

The trips, each compared with the original query run on DuckDB (rows, column names and types; row order too
when the query ends in ORDER BY):

* the adapter's plan rendered for DuckDB, and rendered as Spark SQL (with the source's hints) and transpiled;
* the plan the service answers with in each mode (``always``, ``cost``), rendered for DuckDB and, in the
  default mode (``cost``), as the Spark SQL the service returns.

And, on plans: Spark SQL read back loses no fact and invents none (a wrapping renderer may add projects and
aliases); the engine reads the plan and writes it back (mode ``never``) with the same facts; every hint of the
source is in the Spark SQL.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import duckdb
import sqlglot

from costmodel.optimizer import optimize_wire
from service.sql import plan_to_sql, sql_to_plan
from tests.roundtrip.facts import Fact, lost_and_invented, plan_facts
from tests.roundtrip.schema import CATALOG

_HINT = re.compile(r"/\*\+(.*?)\*/", re.S)
_HINT_NAME = re.compile(r"([A-Z_]+)\s*\(([^)]*)\)")


@dataclass
class Checked:
    sql: str
    problems: list[str] = field(default_factory=list)
    facts: Counter[Fact] = field(default_factory=Counter)
    engine_facts: Counter[Fact] = field(default_factory=Counter)


@dataclass(frozen=True)
class Result:
    names: list[str]
    types: list[str]
    rows: list[tuple[Any, ...]]


def to_duckdb(spark_sql: str) -> str:
    """Spark SQL as DuckDB runs it with Spark's semantics (hints dropped: they change no row)."""
    return sqlglot.transpile(_HINT.sub("", spark_sql), read="spark", write="duckdb")[0]


def _norm(value: Any) -> Any:
    if isinstance(value, (float, Decimal)):
        return round(float(value), 6)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value


def _key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((v is not None, type(v).__name__, v if v is not None else 0) for v in row)


def run(con: duckdb.DuckDBPyConnection, sql: str, ordered: bool) -> Result:
    cursor = con.execute(sql)
    rows = [tuple(_norm(v) for v in row) for row in cursor.fetchall()]
    names = [d[0] for d in cursor.description or []]
    types = [str(d[1]) for d in cursor.description or []]
    return Result(names, types, rows if ordered else sorted(rows, key=_key))


def hints(sql: str) -> Counter[str]:
    """``BROADCAST(b)``-style hints of every hint comment, by name and arguments."""
    return Counter(
        f"{name.upper()}({args.replace(' ', '')})"
        for body in _HINT.findall(sql)
        for name, args in _HINT_NAME.findall(body)
    )


def ends_in_order(plan: dict[str, Any]) -> bool:
    """The rows come out in a defined order: a sort under nothing but projects and limits."""
    node = plan
    while node["op"] in ("project", "limit"):
        node = node["input"]
    return bool(node["op"] == "sort")


def check(sql: str, con: duckdb.DuckDBPyConnection) -> Checked:
    out = Checked(sql)
    problems = out.problems
    plan = sql_to_plan(sql, CATALOG)
    out.facts = plan_facts(plan)
    ordered = ends_in_order(plan)
    expected = run(con, to_duckdb(sql), ordered)

    spark = plan_to_sql(plan, "spark", source=sql)
    lost, invented = lost_and_invented(out.facts, plan_facts(sql_to_plan(spark, CATALOG)))
    if lost or invented:
        problems.append(f"plan -> Spark SQL -> plan: lost {dict(lost)}, invented {dict(invented)}\n  {spark}")
    if hints(sql) - hints(spark):
        problems.append(f"hints lost: {dict(hints(sql) - hints(spark))}\n  {spark}")
    written = optimize_wire(plan, CATALOG, {"mode": "never"})["plan"]
    if plan_facts(written) != out.facts:
        lost, invented = lost_and_invented(out.facts, plan_facts(written))
        problems.append(f"engine wire round trip: lost {dict(lost)}, gained {dict(invented)}")

    trips = {"plan as DuckDB SQL": plan_to_sql(plan, "duckdb"), "plan as Spark SQL": to_duckdb(spark)}
    for mode in ("always", "cost"):
        optimized = optimize_wire(plan, CATALOG, {"mode": mode})["plan"]
        out.engine_facts += plan_facts(optimized)
        trips[f"{mode} as DuckDB SQL"] = plan_to_sql(optimized, "duckdb")
        if mode == "cost":  # the service's default mode, answered as Spark SQL with the source's hints
            trips[f"{mode} as the Spark SQL answered"] = to_duckdb(plan_to_sql(optimized, "spark", source=sql))
    for trip, text in trips.items():
        try:
            got = run(con, text, ordered)
        except duckdb.Error as exc:
            problems.append(f"{trip} fails on DuckDB: {str(exc).splitlines()[0]}\n  {text}")
            continue
        for what in ("names", "types", "rows"):
            if getattr(got, what) != getattr(expected, what):
                problems.append(
                    f"{trip}: {what} differ\n  expected {getattr(expected, what)}\n  got      {getattr(got, what)}"
                    f"\n  {text}"
                )
                break
    return out
