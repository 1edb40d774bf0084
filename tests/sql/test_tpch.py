"""The 22 TPC-H queries convert, render back, and run on DuckDB.

The schema is created empty from bench/tpch/catalog.json, so this proves the
regenerated SQL binds and type-checks; a second test fills the tables with a
small deterministic data set and compares the original query's rows with the
round trip's.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

import duckdb
import pytest

from service.sql import plan_to_sql, sql_to_plan
from tests.sql.helpers import rows, spark_to_duckdb

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
CATALOG: dict[str, Any] = json.loads((TPCH / "catalog.json").read_text())
QUERIES = sorted((TPCH / "queries").glob("q*.sql"))
NAMES = [q.stem for q in QUERIES]


def _schema(con: duckdb.DuckDBPyConnection) -> None:
    for name, table in CATALOG["tables"].items():
        cols = ", ".join(f"{c['name']} {c['type'].replace('string', 'varchar')}" for c in table["columns"])
        con.execute(f"CREATE TABLE {name} ({cols})")


def test_there_are_22_queries_and_plans() -> None:
    assert [f"q{i:02d}" for i in range(1, 23)] == NAMES
    assert sorted(p.stem for p in (TPCH / "plans").glob("q*.json")) == NAMES


@pytest.mark.parametrize("path", QUERIES, ids=NAMES)
def test_converts_and_runs_on_empty_schema(path: Path) -> None:
    plan = sql_to_plan(path.read_text(), CATALOG, "spark")
    con = duckdb.connect()
    _schema(con)
    con.execute(plan_to_sql(plan, "duckdb")).fetchall()
    # The Spark rendering must read back as Spark SQL into an equivalent plan.
    sql_to_plan(plan_to_sql(plan, "spark"), CATALOG, "spark")


@pytest.mark.parametrize("path", QUERIES, ids=NAMES)
def test_stored_plan_is_current(path: Path) -> None:
    stored = json.loads((TPCH / "plans" / f"{path.stem}.json").read_text())
    assert stored == sql_to_plan(path.read_text(), CATALOG, "spark"), "re-run bench/tpch/make_plans.py"


def _fill(con: duckdb.DuckDBPyConnection) -> None:
    """A few hundred deterministic rows whose values hit the queries' literals."""
    rnd = random.Random(7)
    nations = ["ALGERIA", "BRAZIL", "CANADA", "FRANCE", "GERMANY", "SAUDI ARABIA", "JAPAN", "CHINA"]
    regions = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
    region_of = [0, 1, 1, 3, 3, 4, 2, 2]
    con.executemany("INSERT INTO region VALUES (?, ?, 'c')", [(i, r) for i, r in enumerate(regions)])
    con.executemany("INSERT INTO nation VALUES (?, ?, ?, 'c')", [(i, n, region_of[i]) for i, n in enumerate(nations)])
    types = ["ECONOMY ANODIZED STEEL", "MEDIUM POLISHED TIN", "PROMO BRUSHED BRASS", "SMALL PLATED BRASS"]
    containers = ["SM CASE", "MED BOX", "LG PACK", "MED BAG", "SM PKG", "LG BOX"]
    brands = ["Brand#12", "Brand#23", "Brand#34", "Brand#45"]
    parts = 40
    con.executemany(
        "INSERT INTO part VALUES (?, ?, 'Manufacturer#1', ?, ?, ?, ?, 100.00, 'c')",
        [
            (
                p,
                rnd.choice(["forest green", "green lime", "red", "forest plum"]),
                rnd.choice(brands),
                rnd.choice(types),
                rnd.choice([15, 3, 9, 14, 5, 10]),
                rnd.choice(containers),
            )
            for p in range(1, parts + 1)
        ],
    )
    supps = 12
    con.executemany(
        "INSERT INTO supplier VALUES (?, ?, 'addr', ?, 'phone', ?, ?)",
        [
            (
                s,
                f"Supplier#{s:03d}",
                rnd.randrange(len(nations)),
                round(rnd.uniform(-100, 9000), 2),
                rnd.choice(["ok", "Customer Complaints here"]),
            )
            for s in range(1, supps + 1)
        ],
    )
    con.executemany(
        "INSERT INTO partsupp VALUES (?, ?, ?, ?, 'c')",
        [
            (p, s, rnd.randrange(1, 50), round(rnd.uniform(1, 100), 2))
            for p in range(1, parts + 1)
            for s in rnd.sample(range(1, supps + 1), 3)
        ],
    )
    custs = 30
    con.executemany(
        "INSERT INTO customer VALUES (?, ?, 'addr', ?, ?, ?, ?, 'c')",
        [
            (
                c,
                f"Customer#{c:03d}",
                rnd.randrange(len(nations)),
                f"{rnd.choice([13, 31, 23, 40, 17])}-555",
                round(rnd.uniform(-50, 9000), 2),
                rnd.choice(["BUILDING", "MACHINERY"]),
            )
            for c in range(1, custs + 1)
        ],
    )
    orders = []
    lines = []
    for o in range(1, 401):
        day = f"199{rnd.randrange(2, 9)}-{rnd.randrange(1, 13):02d}-{rnd.randrange(1, 29):02d}"
        orders.append(
            (
                o,
                rnd.randrange(1, custs - 5),
                rnd.choice("FOP"),
                round(rnd.uniform(100, 9000), 2),
                day,
                rnd.choice(["1-URGENT", "2-HIGH", "3-MEDIUM"]),
                "clerk",
                0,
                rnd.choice(["plain", "special requests"]),
            )
        )
        for ln in range(1, rnd.randrange(2, 6)):
            p = rnd.randrange(1, parts + 1)
            ship = dt.date(1992, 1, 1) + dt.timedelta(days=rnd.randrange(0, 2500))
            commit = ship + dt.timedelta(days=rnd.randrange(-15, 15))
            receipt = ship + dt.timedelta(days=rnd.randrange(1, 30))
            lines.append(
                (
                    o,
                    p,
                    rnd.randrange(1, supps + 1),
                    ln,
                    rnd.choice([1, 5, 10, 15, 20, 25, 50, 150]),
                    round(rnd.uniform(100, 5000), 2),
                    rnd.choice([0.05, 0.06, 0.07, 0.0]),
                    0.02,
                    rnd.choice("ANR"),
                    rnd.choice("FO"),
                    ship,
                    commit,
                    receipt,
                    rnd.choice(["DELIVER IN PERSON", "NONE"]),
                    rnd.choice(["AIR", "MAIL", "SHIP"]),
                    "c",
                )
            )
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", orders)
    con.executemany("INSERT INTO lineitem VALUES (" + ", ".join("?" * 16) + ")", lines)


@pytest.fixture(scope="module")
def filled() -> Any:
    con = duckdb.connect()
    _schema(con)
    _fill(con)
    yield con
    con.close()


@pytest.mark.parametrize("path", QUERIES, ids=NAMES)
def test_round_trip_rows_match(filled: Any, path: Path) -> None:
    sql = path.read_text()
    expected = rows(filled, spark_to_duckdb(sql))
    got = rows(filled, plan_to_sql(sql_to_plan(sql, CATALOG, "spark"), "duckdb"))
    assert got == expected
