"""The answer's top-level ``sql`` is the one query to run: for Spark the one that keeps every decision (a kept
predicate behind its barrier); the engine-neutral rendering, which Spark's pushdown may undo, is
``sql_portable``."""

from __future__ import annotations

from typing import Any

import pytest

import service.sql
from service.optimize import OptimizeInput, OptimizeService
from service.spark_plan import spark_target
from tests.service.test_optimize_baseline import CATALOG, UDF_SQL

FUNCTIONS = {"score": {"cost": 5000}}


def _answer(dialect: str = "spark") -> dict:
    options = {"mode": "cost", "functions": FUNCTIONS}
    return OptimizeService().optimize(OptimizeInput(sql=UDF_SQL, dialect=dialect, catalog=CATALOG, options=options))


def test_the_top_level_sql_keeps_the_kept_predicate_on_spark() -> None:
    answer = _answer()
    assert answer["spark"]["barriers"] == ["score(orders.o_comment)"]
    assert answer["sql"] == answer["spark"]["sql"]  # the one to run
    assert answer["sql_portable"] != answer["sql"] and "SPARK_PARTITION_ID" not in answer["sql_portable"]


def test_another_dialect_gets_its_own_rendering_in_both() -> None:
    answer = _answer("duckdb")
    assert answer["sql"] == answer["sql_portable"]
    assert answer["spark"]["sql"] != answer["sql"]  # Spark SQL, for a Spark runner


def test_a_query_spark_runs_as_written_is_handed_back_as_written() -> None:
    sql = "SELECT o_orderkey FROM orders WHERE o_totalprice > 100"
    answer = OptimizeService().optimize(OptimizeInput(sql=sql, catalog=CATALOG))
    assert answer["spark"]["as_written"] and answer["sql"] == sql
    assert answer["sql_portable"] == sql  # nothing added to any engine's own pushdown: as written there too


def test_a_query_spark_runs_as_written_is_not_rendered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ``sql`` and ``sql_portable`` are then the query as written: rendering the answer's plan would be
    work thrown away (it was, on every TPC-H query: 5.2M of a SQL request's 36.9M instructions). Another dialect
    and a query that needs a barrier still get the rendering."""
    rendered: list[str] = []
    render = service.sql.plan_to_sql

    def counted(plan: dict[str, Any], dialect: str = "spark", *args: Any, **kwargs: Any) -> str:
        rendered.append(dialect)
        return render(plan, dialect, *args, **kwargs)

    monkeypatch.setattr(service.sql, "plan_to_sql", counted)
    sql = "SELECT o_orderkey FROM orders WHERE o_totalprice > 100"
    answer = OptimizeService().optimize(OptimizeInput(sql=sql, catalog=CATALOG))
    assert answer["spark"]["as_written"] and answer["sql"] == answer["sql_portable"] == sql
    assert rendered == []
    assert _answer("duckdb")["sql_portable"] and rendered == ["duckdb"]
    rendered.clear()
    assert "SPARK_PARTITION_ID" not in _answer()["sql_portable"] and rendered == ["spark"]


def test_a_cte_used_twice_stays_a_cte_in_the_portable_sql_when_spark_runs_it_as_written() -> None:
    """Rendered, a CTE used twice is inlined with each use's filters pushed in: computed twice on an engine
    that would compute it once (DuckDB, PostgreSQL). As written, the engine keeps its own choice."""
    sql = (
        "WITH big AS (SELECT o_custkey AS k, sum(o_totalprice) AS total FROM orders GROUP BY o_custkey) "
        "SELECT a.k FROM big a JOIN big b ON a.k = b.k WHERE a.total > 10 AND b.total < 1000"
    )
    answer = OptimizeService().optimize(OptimizeInput(sql=sql, catalog=CATALOG, options={"mode": "cost"}))
    assert answer["spark"]["as_written"]
    assert answer["sql_portable"] == sql
    rendered = OptimizeService().optimize(OptimizeInput(sql=sql, dialect="duckdb", catalog=CATALOG))
    assert "WITH" not in rendered["sql_portable"].upper()  # the rendering inlines it: what the rule avoids


def test_mode_never_hands_a_query_back_as_written() -> None:
    """Mode never moves nothing, so nothing needs holding: a predicate kept in a scan's filters (where Catalyst
    reads it too) got a barrier after 984ef56 (an ``or`` that bound tighter than the conditions after it), which
    stopped Spark from pushing the query's own filter into the scan."""
    sql = "SELECT o_orderkey FROM orders WHERE o_totalprice > 100"
    answer = OptimizeService().optimize(OptimizeInput(sql=sql, catalog=CATALOG, options={"mode": "never"}))
    assert answer["spark"]["barriers"] == []
    assert answer["spark"]["as_written"] and answer["sql"] == sql


def test_a_predicate_kept_in_a_scan_or_folded_to_a_constant_gets_no_barrier() -> None:
    scan = {"op": "scan", "id": "s", "table": "orders", "filters": []}
    plan = {
        "op": "filter",
        "id": "f",
        "input": scan,
        "predicate": {"fn": ">", "args": [{"col": "o_totalprice"}, {"lit": 100, "type": "int"}]},
    }
    kept = {"predicate": "o_totalprice > 100", "action": "kept", "reason": "mode_never"}
    for decision in ({**kept, "operator": "s"}, {**kept, "operator": "f", "source": "constant"}):
        target = spark_target(plan, [decision], CATALOG)
        assert (target.barriers, target.unheld, target.left_to_spark) == ([], [], []), decision
