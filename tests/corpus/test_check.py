"""The corpus check's own checks: it sees what the issue reported (a join held behind a barrier, a predicate held
above UNION ALL, a date filter that no longer prunes partitions) and does not flag the same query written another
way (explicit JOINs for comma joins, an IN list for ORs of equalities)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.corpus.spark_plans import compare_plans, normalise, spark_plan

pytestmark = pytest.mark.integration

COMMA = (
    "SELECT c_last_name, ms.amt FROM (SELECT ss_customer_sk, sum(ss_net_profit) amt FROM store_sales, date_dim "
    "WHERE ss_sold_date_sk = d_date_sk AND d_year = 2000 GROUP BY ss_customer_sk) ms, customer "
    "WHERE ms.ss_customer_sk = customer.c_customer_sk"
)


def kinds(spark: Any, before: str, after: str) -> list[str]:
    return [kind for kind, _ in compare_plans(spark_plan(spark, before)[0], spark_plan(spark, after)[0])]


def test_a_join_held_behind_a_barrier_is_a_nested_loop(corpus_spark: Any) -> None:
    held = COMMA.replace(
        "ms, customer WHERE ms.ss_customer_sk = customer.c_customer_sk",
        "ms CROSS JOIN customer WHERE (ms.ss_customer_sk = customer.c_customer_sk OR SPARK_PARTITION_ID() < 0)",
    )
    assert "nested_loop" in kinds(corpus_spark, COMMA, held)


def test_the_same_query_with_explicit_joins_passes(corpus_spark: Any) -> None:
    explicit = (
        "SELECT customer.c_last_name, ms.amt FROM (SELECT store_sales.ss_customer_sk, SUM(store_sales.ss_net_profit) "
        "AS amt FROM store_sales JOIN (SELECT * FROM date_dim WHERE date_dim.d_year = 2000) AS date_dim "
        "ON store_sales.ss_sold_date_sk = date_dim.d_date_sk GROUP BY store_sales.ss_customer_sk) AS ms "
        "JOIN customer ON ms.ss_customer_sk = customer.c_customer_sk"
    )
    assert kinds(corpus_spark, COMMA, explicit) == []


def test_a_date_filter_held_above_the_join_loses_partition_pruning(corpus_spark: Any) -> None:
    facts = spark_plan(corpus_spark, COMMA)[0]
    assert any(kind == "partition" and "dynamicpruning" in text for (_, kind, text) in facts.filters)
    held = COMMA.replace("AND d_year = 2000", "AND (d_year = 2000 OR SPARK_PARTITION_ID() < 0)")
    problems = compare_plans(facts, spark_plan(corpus_spark, held)[0])
    assert any(kind == "lost_filter" and "store_sales: partition" in detail for kind, detail in problems)


def test_a_predicate_held_above_union_all_loses_branch_filters(corpus_spark: Any) -> None:
    union = (
        "SELECT * FROM (SELECT ss_sold_date_sk AS d, ss_quantity AS q FROM store_sales UNION ALL "
        "SELECT ws_sold_date_sk, ws_quantity FROM web_sales) u WHERE {} "
    )
    before = union.format("u.d BETWEEN 2451850 AND 2451880 AND u.q > 5")
    after = union.format("(u.d BETWEEN 2451850 AND 2451880 OR SPARK_PARTITION_ID() < 0) AND u.q > 5")
    details = [d for kind, d in compare_plans(spark_plan(corpus_spark, before)[0], spark_plan(corpus_spark, after)[0])]
    assert any(d.startswith("store_sales: partition") for d in details)
    assert any(d.startswith("web_sales: partition") for d in details)


def test_an_in_list_reads_as_the_ors_it_stands_for() -> None:
    assert normalise("Or(EqualTo(hd_dep_count,3),EqualTo(hd_dep_count,1))") == normalise("In(hd_dep_count, [1,3])")
    assert normalise("((hd_dep_count#185 = 3) OR (hd_dep_count#185 = 1))") == normalise("hd_dep_count#9 IN (3,1)")
    assert normalise("((a#1 = 1) OR (b#2 = 2))") == "((a = 1) OR (b = 2))"
    assert normalise("isnotnull(ss_item_sk#12)") == "isnotnull(ss_item_sk)"
