"""SQL in, SQL out over a real server: design.md's example exchange, and SQL errors with line and column."""

from __future__ import annotations

from typing import Any

import duckdb
import httpx

from tests.api.dolt_data import CITY_NAMES

CITIES_AND_STATES: dict[str, Any] = {
    "tables": {
        "cities": {
            "columns": [
                {"name": "id", "type": "int"},
                {"name": "name", "type": "string"},
                {"name": "state_id", "type": "int"},
                {"name": "first_letter", "type": "string"},
            ],
            "row_count": 20000,
            "column_stats": {"state_id": {"ndv": 50, "min": 1, "max": 50, "null_count": 0}},
        },
        "states": {"columns": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}], "row_count": 50},
    }
}
QUERY = (
    "SELECT c.name, s.name FROM cities c JOIN states s ON c.state_id = s.id WHERE c.name LIKE 'A%' AND s.name LIKE 'A%'"
)


def test_design_example_sql_round_trip(client: httpx.Client) -> None:
    body = {
        "sql": QUERY,
        "dialect": "spark",
        "catalog": CITIES_AND_STATES,
        "options": {"mode": "cost"},
        "context": {"pipeline": "daily_cities", "task": "load", "run": "2026-11-22"},
        "detail": "full",
    }
    response = client.post("/optimize", json=body)
    assert response.status_code == 200, response.text
    out = response.json()
    below_join = {d["predicate"]: d for d in out["decisions"] if d["operator"] == out["plan"]["input"]["id"]}
    for predicate in ("c.name LIKE 'A%'", "s.name LIKE 'A%'"):
        decision = below_join[predicate]
        assert decision["action"] == "pushed" and decision["lhs"] <= decision["rhs"]
    assert out["cost"]["after"]["total"] < out["cost"]["before"]["total"]
    assert 0 < out["cost"]["savings"] < 1
    assert {e["source"] for e in out["estimates"]} <= {"statistics", "default", "constant"}
    assert "sql" in out and "LIKE 'A%'" in out["sql"]

    # the rewritten SQL returns the rows the original returns (Dolt's data)
    con = duckdb.connect()
    con.execute("CREATE TABLE states (id INT, name VARCHAR)")
    con.execute("INSERT INTO states VALUES (1,'Alabama'),(2,'Alaska'),(3,'Arizona'),(4,'California'),(5,'Colorado')")
    con.execute("CREATE TABLE cities (id INT, name VARCHAR, state_id INT, first_letter VARCHAR)")
    names = CITY_NAMES
    con.executemany(
        "INSERT INTO cities VALUES (?, ?, ?, ?)", [(i + 1, n, i // 3 + 1, n[0]) for i, n in enumerate(names)]
    )
    import sqlglot

    rewritten = sqlglot.transpile(out["sql"], read="spark", write="duckdb")[0]
    expected = sorted(con.execute(QUERY).fetchall())
    assert sorted(con.execute(rewritten).fetchall()) == expected
    assert len(expected) == 6


def test_sql_that_does_not_parse_names_line_and_column(client: httpx.Client) -> None:
    response = client.post("/optimize", json={"sql": "SELECT id FROM\ncities WHERE (", "catalog": CITIES_AND_STATES})
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "parse_error" and body["path"] == "$.sql"
    assert body["detail"]["line"] == 2 and body["detail"]["column"] >= 1


def test_sql_naming_an_unknown_table_lists_the_known_ones(client: httpx.Client) -> None:
    response = client.post("/optimize", json={"sql": "SELECT * FROM towns", "catalog": CITIES_AND_STATES})
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "unknown_table"
    assert set(body["detail"]["available"]) >= {"cities", "states"}
    assert client.get("/healthz").status_code == 200


def test_unknown_column_in_sql_keeps_its_position_and_names_the_column(client: httpx.Client) -> None:
    response = client.post(
        "/optimize", json={"sql": "SELECT id FROM cities\nWHERE zzz > 1", "catalog": CITIES_AND_STATES}
    )
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail["name"] == "zzz" and detail["line"] == 2 and isinstance(detail["column"], int)
    assert "cities.name" in detail["available"]
