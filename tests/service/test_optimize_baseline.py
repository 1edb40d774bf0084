"""The answer's savings are stated against rule-based pushdown (the plan ``always`` mode makes), and a cross
product in the query as written is a warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.optimize import OptimizeInput, OptimizeService

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
CATALOG = json.loads((TPCH / "catalog.json").read_text())
UDF_SQL = (
    "SELECT count(*) AS n FROM orders JOIN customer ON orders.o_custkey = customer.c_custkey "
    "WHERE customer.c_mktsegment = 'BUILDING' AND customer.c_nationkey = 7 AND score(orders.o_comment)"
)


def optimize(sql: str, mode: str = "cost", functions: dict | None = None) -> dict:
    """``functions``: declarations, as a request's top-level ``functions`` reach the engine (options.functions)."""
    options = {"mode": mode, **({"functions": functions} if functions else {})}
    return OptimizeService().optimize(OptimizeInput(sql=sql, catalog=CATALOG, options=options))


@pytest.mark.parametrize("query", ["q03", "q05", "q09", "q16", "q21"])
def test_baseline_is_what_always_mode_costs(query: str) -> None:
    sql = (TPCH / "queries" / f"{query}.sql").read_text()
    cost, always = optimize(sql)["cost"], optimize(sql, "always")["cost"]
    assert cost["baseline"]["total"] == pytest.approx(always["after"]["total"])
    assert cost["savings_vs_baseline"] == pytest.approx(1 - cost["after"]["total"] / always["after"]["total"], abs=1e-6)
    assert cost["savings_vs_written"] == cost["savings"]


def test_a_kept_expensive_udf_saves_against_the_baseline() -> None:
    answer = optimize(UDF_SQL, functions={"score": {"cost": 5000}})
    cost = answer["cost"]
    assert cost["baseline"]["total"] == pytest.approx(
        optimize(UDF_SQL, "always", functions={"score": {"cost": 5000}})["cost"]["after"]["total"]
    )
    assert cost["savings_vs_baseline"] > 0.9
    assert answer["spark"]["barriers"] == ["score(orders.o_comment)"]


def test_a_declared_cost_counts_in_the_baseline() -> None:
    declared = optimize(UDF_SQL, functions={"score": {"cost": 5000}})
    plain = optimize(UDF_SQL)
    assert declared["cost"]["baseline"]["total"] > plain["cost"]["baseline"]["total"]


def test_a_cross_product_as_written_is_a_warning() -> None:
    comma = (TPCH / "queries" / "q03.sql").read_text()
    assert " join " not in comma.lower()  # q03 is written with commas
    answer = optimize(comma)
    assert any("cross product" in w for w in answer["warnings"])
    assert answer["cost"]["savings_vs_written"] > 0.99 and answer["cost"]["savings_vs_baseline"] < 0.5
    explicit = optimize(UDF_SQL)
    assert not any("cross product" in w for w in explicit["warnings"])


def test_a_cross_product_inside_a_subquery_is_a_warning_too() -> None:
    """The engine's plan as read tells whether to look for one: a subquery's joins count."""
    inner = (
        "SELECT o_orderkey FROM orders WHERE o_custkey IN "
        "(SELECT c_custkey FROM customer, nation WHERE c_nationkey = n_nationkey AND n_name = 'FRANCE')"
    )
    assert any("cross product" in w for w in optimize(inner)["warnings"])
    joined = inner.replace("customer, nation WHERE", "customer JOIN nation ON c_nationkey = n_nationkey WHERE")
    assert not any("cross product" in w for w in optimize(joined)["warnings"])


def test_the_warning_names_each_join_without_a_condition_by_the_id_the_answer_uses() -> None:
    """Ids as the answer's plan has them (minted where the request gave none), a join's type in any case, and a
    join with a condition, or an outer one, left out."""

    def scan(table: str, alias: str) -> dict:
        return {"op": "scan", "table": table, "alias": alias}

    keys = {"fn": "=", "args": [{"col": "o.o_custkey"}, {"col": "c.c_custkey"}]}
    plan = {
        "op": "join",
        "type": "CROSS",
        "left": {
            "op": "join",
            "id": "j2",
            "type": "inner",
            "left": scan("orders", "o"),
            "right": scan("customer", "c"),
        },
        "right": {
            "op": "join",
            "id": "j3",
            "type": "left",
            "left": {"op": "join", "id": "j4", "on": keys, "left": scan("orders", "o"), "right": scan("customer", "c")},
            "right": scan("nation", "n"),
        },
    }
    answer = OptimizeService().optimize(OptimizeInput(plan=plan, catalog=CATALOG))
    [warning] = [w for w in answer["warnings"] if "cross product" in w]
    minted = answer["plan"]["id"]  # the top join's, which the request left out
    assert answer["plan"]["op"] == "join" and minted not in ("j2", "j3", "j4")
    assert f"(join {minted}, j2 has no condition)" in warning, warning


def test_nothing_kept_runs_on_spark_as_written_and_a_kept_udf_gets_its_rewrite() -> None:
    """Where every predicate went as deep as legal, Catalyst puts it there too: the Spark SQL is the request's."""
    plain = optimize(UDF_SQL)
    assert not any(d["action"] == "kept" for d in plain["decisions"])
    assert plain["spark"] == {"sql": UDF_SQL, "conf": {}, "barriers": [], "left_to_spark": [], "as_written": True}
    kept = optimize(UDF_SQL, functions={"score": {"cost": 5000}})
    assert "as_written" not in kept["spark"] and kept["spark"]["sql"] != UDF_SQL


def test_sql_in_another_dialect_is_never_run_as_written() -> None:
    answer = OptimizeService().optimize(OptimizeInput(sql=UDF_SQL, catalog=CATALOG, dialect="duckdb"))
    assert "as_written" not in answer["spark"] and answer["spark"]["sql"] != UDF_SQL


def test_kept_predicates_left_to_spark_need_no_rewrite_either() -> None:
    """TPC-H q21 keeps its EXISTS and NOT EXISTS above the join, where no barrier can hold them: Spark places them
    itself, from the query as written as from a rewrite, so the query runs as written and says what it left."""
    sql = (TPCH / "queries" / "q21.sql").read_text()
    answer = optimize(sql)
    assert any(d["action"] == "kept" for d in answer["decisions"])
    assert answer["spark"]["as_written"] is True and answer["spark"]["sql"] == sql
    assert answer["spark"]["barriers"] == [] and len(answer["spark"]["left_to_spark"]) == 2


def test_a_query_run_as_written_is_not_rendered_for_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """q21's kept predicates need no barrier, so the Spark SQL is the request's: the plan is not written as Spark
    SQL a second time only to be replaced by the request's text."""
    import service.spark_plan

    def refused(*_: object, **__: object) -> str:
        raise AssertionError("rendered a plan whose Spark SQL is the request's")

    sql = (TPCH / "queries" / "q21.sql").read_text()
    expected = optimize(sql)["spark"]
    monkeypatch.setattr(service.spark_plan, "to_sql", refused)
    assert optimize(sql)["spark"] == expected
    with pytest.raises(AssertionError, match="rendered"):  # a barrier still needs the rendering
        optimize(UDF_SQL, functions={"score": {"cost": 5000}})
