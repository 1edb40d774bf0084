"""Actual rows read from local Spark's status store, mapped onto the answer's plan, against counts done in Python."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pushdown_client.feedback.mapping import walk
from pushdown_client.feedback.spark import actual_rows, observe
from service.optimize import OptimizeInput, OptimizeService
from tests.feedback.conftest import CATALOG, Tables, register

pytestmark = pytest.mark.slow


def answer_for(sql: str, catalog: dict[str, Any] | None = None) -> dict[str, Any]:
    return OptimizeService().optimize(OptimizeInput(sql=sql, catalog=catalog or CATALOG))


def node_ids(answer: dict[str, Any], op: str) -> list[str]:
    return [str(n["id"]) for n in walk(answer["plan"]) if n.get("op") == op]


def run(spark: Any, answer: dict[str, Any], catalog: dict[str, Any] | None = None, write_to: str | None = None):
    with observe(spark) as observed:
        frame = spark.sql(answer["sql"])
        if write_to:
            frame.write.mode("overwrite").parquet(write_to)
        else:
            frame.collect()
    return actual_rows(spark, answer, observed.graph(), catalog or CATALOG)


def by_id(report: Any) -> dict[str, Any]:
    return {n.id: n for n in report.nodes}


def test_scan_filter_and_aggregate_counts(spark: Any, tables: Tables) -> None:
    register(spark, tables.root)
    answer = answer_for("SELECT s, count(*) AS n FROM fb_t WHERE b > 5 AND s LIKE 'x1%' GROUP BY s")
    report = run(spark, answer)
    kept = [r for r in tables.t if r[1] is not None and r[1] > 5 and r[2].startswith("x1")]
    (scan,) = node_ids(answer, "scan")
    (aggregate,) = node_ids(answer, "aggregate")
    counted = by_id(report)
    assert counted[scan].rows_out == len(kept)
    assert counted[aggregate].rows_out == len({r[2] for r in kept})
    assert counted[aggregate].rows_in == len(kept)
    assert report.unmapped == {}


def test_join_counts_when_statistics_vouch_for_the_keys(spark: Any, tables: Tables) -> None:
    register(spark, tables.root)
    sql = "SELECT fb_t.b, count(*) FROM fb_t JOIN fb_u ON fb_t.a = fb_u.a WHERE fb_t.b > 5 GROUP BY fb_t.b"
    answer = answer_for(sql)
    report = run(spark, answer)
    u_keys = Counter(r[0] for r in tables.u if r[0] is not None)
    t_kept = [r for r in tables.t if r[1] is not None and r[1] > 5]
    joined = sum(u_keys[r[0]] for r in t_kept)
    counted = by_id(report)
    (join,) = node_ids(answer, "join")
    assert counted[join].rows_out == joined
    t_scan = next(str(n["id"]) for n in walk(answer["plan"]) if n.get("op") == "scan" and n["table"] == "fb_t")
    u_scan = next(str(n["id"]) for n in walk(answer["plan"]) if n.get("op") == "scan" and n["table"] == "fb_u")
    # fb_t.a has no NULL by its statistics, so Spark's isnotnull(a) does not change the count
    assert counted[t_scan].rows_out == len(t_kept)
    # fb_u.a holds NULLs: Spark filters them out (and pushes that into the scan), the plan's scan does not
    assert u_scan not in counted
    assert "pushed filters" in report.unmapped[u_scan]


def test_a_write_is_counted_like_a_collect(spark: Any, tables: Tables) -> None:
    register(spark, tables.root)
    answer = answer_for("SELECT a, s FROM fb_t WHERE s LIKE '%3' AND b IS NOT NULL")
    collected = by_id(run(spark, answer))
    written = by_id(run(spark, answer, write_to=str(tables.root / "out")))
    truth = sum(1 for r in tables.t if r[2].endswith("3") and r[1] is not None)
    (scan,) = node_ids(answer, "scan")
    assert collected[scan].rows_out == written[scan].rows_out == truth
    assert spark.read.parquet(str(tables.root / "out")).count() == truth


def test_a_scalar_subquery_stays_apart(spark: Any, tables: Tables) -> None:
    register(spark, tables.root)
    answer = answer_for("SELECT count(*) FROM fb_t WHERE fb_t.b > (SELECT avg(fb_u.a) FROM fb_u) / 20")
    report = run(spark, answer)
    values = [r[0] for r in tables.u if r[0] is not None]
    threshold = sum(values) / len(values) / 20
    truth = sum(1 for r in tables.t if r[1] is not None and r[1] > threshold)
    t_scan = next(str(n["id"]) for n in walk(answer["plan"]) if n.get("op") == "scan" and n["table"] == "fb_t")
    assert by_id(report)[t_scan].rows_out == truth


def test_a_reused_exchange_is_never_counted_twice_or_guessed(spark: Any, tables: Tables) -> None:
    register(spark, tables.root)
    sql = (
        "SELECT x.a FROM (SELECT a, count(*) AS n FROM fb_t GROUP BY a) x "
        "JOIN (SELECT a, count(*) AS n FROM fb_t GROUP BY a) y ON x.a = y.a WHERE x.n > 6"
    )
    answer = answer_for(sql)
    report = run(spark, answer)
    per_key = Counter(r[0] for r in tables.t)
    truth = {"join": sum(1 for n in per_key.values() if n > 6), "aggregate": len(per_key)}
    kinds = {str(n["id"]): str(n["op"]) for n in walk(answer["plan"])}
    for node in report.nodes:  # whatever is counted is right; the rest says why not
        if kinds[node.id] in truth:
            assert node.rows_out == truth[kinds[node.id]], (node, kinds[node.id])
    for node_id in node_ids(answer, "aggregate"):
        assert node_id in by_id(report) or report.unmapped[node_id]


def test_a_filter_above_an_aggregate_and_one_catalyst_moved(spark: Any, tables: Tables) -> None:
    register(spark, tables.root)
    answer = answer_for("SELECT a, count(*) AS c FROM fb_t GROUP BY a HAVING count(*) > 6")
    report = run(spark, answer)
    per_key = Counter(r[0] for r in tables.t)
    (having,) = node_ids(answer, "filter")
    counted = by_id(report)
    assert counted[having].rows_out == sum(1 for n in per_key.values() if n > 6)
    assert counted[having].rows_in == len(per_key)

    # above the join in the plan ("never" leaves every filter where it was written), pushed into the scan by
    # Catalyst's defaults: Spark has no filter that is the plan's, so nothing is counted for it
    sql = "SELECT fb_t.s FROM fb_t JOIN fb_u ON fb_t.a = fb_u.a WHERE fb_t.s LIKE '%1%'"
    kept_plan = OptimizeService().optimize(
        OptimizeInput(sql=sql, catalog=CATALOG, options={"mode": "never"})
    )  # "never": every filter stays where it was written
    # the engine-neutral rewrite (``sql_portable``: no barrier), which Catalyst's defaults rearrange
    report = run(spark, {**kept_plan, "sql": kept_plan["sql_portable"]})
    (where,) = node_ids(kept_plan, "filter")
    assert where not in by_id(report) and report.unmapped[where]


def test_sibling_tables_under_a_long_path_are_told_apart_by_their_columns(spark: Any, tmp_path: Path) -> None:
    """Spark cuts a scan's printed location at 100 characters: ``.../part`` and ``.../partsupp`` print alike."""
    root = tmp_path / ("a-directory-name-long-enough-that-spark-cuts-the-printed-location-" + "x" * 40)
    parts = [(i, f"forest {i}" if i % 9 == 0 else f"plain {i}", i % 50) for i in range(400)]
    supplies = [(i % 400, i) for i in range(1600)]
    spark.createDataFrame(parts, "p_partkey int, p_name string, p_size int").write.parquet(str(root / "part"))
    spark.createDataFrame(supplies, "ps_partkey int, ps_suppkey int").write.parquet(str(root / "partsupp"))
    spark.read.parquet(str(root / "part")).createOrReplaceTempView("fb_part")
    spark.read.parquet(str(root / "partsupp")).createOrReplaceTempView("fb_partsupp")
    catalog = {
        "tables": {
            "fb_part": {
                "columns": [{"name": "p_partkey", "type": "int"}, {"name": "p_name", "type": "string"}]
                + [{"name": "p_size", "type": "int"}],
                "column_stats": {"p_partkey": {"null_count": 0}},
            },
            "fb_partsupp": {
                "columns": [{"name": "ps_partkey", "type": "int"}, {"name": "ps_suppkey", "type": "int"}],
                "column_stats": {"ps_partkey": {"null_count": 0}},
            },
        }
    }
    sql = (
        "SELECT p_size, count(*) AS n FROM fb_part JOIN fb_partsupp ON p_partkey = ps_partkey "
        "WHERE p_name LIKE 'forest%' AND p_size > 20 GROUP BY p_size"
    )
    answer = answer_for(sql, catalog)
    with observe(spark) as observed:
        spark.sql(answer["sql"]).collect()
    graph = observed.graph()
    assert all(s.desc.count("...") and "Location" in s.desc for s in graph.scans())  # the locations are cut
    report = actual_rows(spark, answer, graph, catalog)
    (part_scan,) = [str(n["id"]) for n in walk(answer["plan"]) if n.get("table") == "fb_part"]
    kept = [p for p in parts if p[1].startswith("forest") and p[2] > 20]
    assert by_id(report)[part_scan].rows_out == len(kept), report.unmapped
