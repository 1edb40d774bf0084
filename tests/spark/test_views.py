"""Temporary views with SQL text are inlined as CTEs for the service; others are left alone."""

from __future__ import annotations

from pushdown_client.views import inline_temp_views


def test_views_with_text_become_ctes_views_inside_views_first(spark):
    spark.range(10).createOrReplaceTempView("vt_base")
    spark.sql("CREATE OR REPLACE TEMP VIEW vt_inner AS SELECT id FROM vt_base WHERE id > 3")
    spark.sql("CREATE OR REPLACE TEMP VIEW vt_outer AS SELECT id FROM vt_inner WHERE id < 8")
    sql = "SELECT o.id FROM vt_outer o JOIN vt_base b ON o.id = b.id"
    sent = inline_temp_views(spark, sql)
    assert sent.index("vt_inner AS (") < sent.index("vt_outer AS (")
    assert "vt_base AS (" not in sent  # made from a DataFrame: no text, read as a table
    assert sorted(spark.sql(sent).collect()) == sorted(spark.sql(sql).collect())


def test_a_cte_of_the_same_name_and_a_query_without_views_are_left_alone(spark):
    spark.sql("CREATE OR REPLACE TEMP VIEW vt_shadowed AS SELECT 1 AS id")
    own = "WITH vt_shadowed AS (SELECT 2 AS id) SELECT id FROM vt_shadowed"
    assert inline_temp_views(spark, own) == own
    plain = "SELECT 1 AS x"
    assert inline_temp_views(spark, plain) == plain
