"""The one-pass binder gives exactly the plans sqlglot's qualify gives, and hands rare forms back to it.

``bind`` replaces qualify on the common path for speed; a plan that differed
would change what the engine decides and what the rewritten SQL returns, so
whole plans are compared for every TPC-H and corpus query, in both dialects.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlglot

from costmodel.wire.nodes import numbered
from service.sql import sql_to_plan
from service.sql.bind import Unbindable, bind
from service.sql.parse import Tables, parse_query
from service.sql.to_plan import _translate_with
from tests.sql.corpus.runner import REFUSED, corpus
from tests.sql.corpus.schema import catalog as corpus_catalog
from tests.sql.corpus.schema import make_rows
from tests.sql.helpers import CATALOG

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
TPCH_CATALOG = json.loads((TPCH / "catalog.json").read_text())
TPCH_QUERIES = {p.stem: p.read_text() for p in sorted((TPCH / "queries").glob("q*.sql"))}
CORPUS = {k: v for k, v in corpus().items() if k not in REFUSED}
CORPUS_CATALOG = corpus_catalog(make_rows())


def _both(sql: str, catalog: dict, dialect: str) -> tuple[dict, dict]:
    tables = Tables(catalog)
    fast = numbered(_translate_with(sql, tables, dialect, fast=True))
    slow = numbered(_translate_with(sql, tables, dialect, fast=False))
    return fast, slow


@pytest.mark.parametrize("name", sorted(TPCH_QUERIES))
def test_tpch_plans_are_the_ones_qualify_gives(name: str) -> None:
    fast, slow = _both(TPCH_QUERIES[name], TPCH_CATALOG, "spark")
    assert fast == slow


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_plans_are_the_ones_qualify_gives(name: str) -> None:
    sql = CORPUS[name]
    try:
        fast, slow = _both(sql, CORPUS_CATALOG, "spark")
    except Unbindable:
        pytest.skip("a form the binder hands to qualify")
    assert fast == slow


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a, b FROM t WHERE c > 1 ORDER BY a",
        "SELECT t.*, u.f FROM t JOIN u ON t.a = u.a",
        "SELECT * FROM (SELECT a, c + 1 FROM t) x(p, q) WHERE q > 3",
        "WITH w (k, n) AS (SELECT a, count(*) FROM t GROUP BY a) SELECT * FROM w WHERE n > 1",
        "SELECT a, (SELECT max(c) FROM u WHERE u.a = t.a) AS m FROM t",
        "SELECT b, sum(c) AS s FROM t GROUP BY b HAVING sum(c) > 3 ORDER BY s DESC",
        "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.c = t.c) AND a IN (SELECT k FROM v)",
        "SELECT a FROM t UNION ALL SELECT a FROM u ORDER BY a",
        "SELECT count(*), count(DISTINCT b) FROM t",
        "SELECT a, rank() OVER (PARTITION BY b ORDER BY c) AS r FROM t",
    ],
)
def test_common_forms_bind_in_one_pass_to_the_same_plan(sql: str) -> None:
    fast, slow = _both(sql, CATALOG, "spark")
    assert fast == slow
    duck_fast, duck_slow = _both(sqlglot.transpile(sql, read="spark", write="duckdb")[0], CATALOG, "duckdb")
    assert duck_fast == duck_slow


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a, f FROM t JOIN u USING (a)",  # USING merges columns
        "SELECT b AS bb, count(*) FROM t GROUP BY bb",  # a select alias in GROUP BY
        "SELECT b, count(*) FROM t GROUP BY 1",  # an ordinal
        "SELECT a + 1 AS x FROM t WHERE x > 2",  # a select alias in WHERE
        "SELECT a FROM t JOIN u ON t.a = u.a",  # ambiguous: qualify reports it
        "SELECT zz FROM t",  # unknown: qualify reports it
    ],
)
def test_rare_forms_are_left_to_qualify(sql: str) -> None:
    stmt = parse_query(sql, "spark")
    with pytest.raises(Unbindable):
        bind(stmt, Tables(CATALOG), "spark")


def test_rare_forms_still_translate_or_fail_as_before() -> None:
    plan = sql_to_plan("SELECT b AS bb, count(*) AS n FROM t GROUP BY bb", CATALOG)
    assert plan["op"] == "project"
    with pytest.raises(Exception) as err:
        sql_to_plan("SELECT zz FROM t", CATALOG)
    assert getattr(err.value, "code", None) == "unknown_column"
