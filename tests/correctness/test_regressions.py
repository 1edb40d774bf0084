"""Every plan whose rewrite once changed results, replayed: original and rewritten must agree."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from costmodel import optimize_wire
from service.sql import plan_to_sql
from tests.correctness.plangen import TABLES, catalog

FIXTURES = sorted((Path(__file__).parent / "regressions").glob("*.json"))


def _run(con, plan, cat):
    return Counter(con.execute(plan_to_sql(plan, "duckdb", catalog=cat)).fetchall())


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_regression(fixture: Path):
    case = json.loads(fixture.read_text())
    rows = {name: [tuple(r) for r in table_rows] for name, table_rows in case["world"]["rows"].items()}
    con = duckdb.connect()
    con.execute("PRAGMA disable_optimizer")  # run each plan as written (see test_rewrites_preserve_results)
    for name, columns in TABLES.items():
        cols = ", ".join(f"{c} {'INTEGER' if t == 'int' else 'VARCHAR'}" for c, t in columns)
        con.execute(f"CREATE TABLE {name} ({cols})")
        if rows[name]:
            con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' for _ in columns)})", rows[name])
    cat = catalog(rows)
    expected = _run(con, case["plan"], cat)
    for mode in ("always", "cost"):
        assert _run(con, optimize_wire(case["plan"], cat, {"mode": mode})["plan"], cat) == expected, case["note"]
