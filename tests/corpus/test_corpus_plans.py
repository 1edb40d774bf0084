"""Never slower than Spark alone, on plans: every query of the corpus (tests/corpus/queries.sql and
generated.sql, 110 analytic queries over a TPC-DS-like star/snowflake schema), with no statistics, with row counts
only and with row counts and column statistics, goes through the service, and the answer's ``spark.sql`` must get
no nested-loop join or cartesian product the original lacks, lose no pushed filter, partition filter (dynamic
partition pruning included) or UNION branch pruning the original has, and add no scan; the answer must not be
priced above rule-based pushdown by its own model (``cost.savings_vs_baseline`` >= 0); and its engine-neutral
``sql`` must return the original's rows and column names on DuckDB over small generated data. Spark's plans are
read over empty Parquet tables without running a job, with adaptive execution off so ``executedPlan`` is the final
plan (check.py).

The timed run (Spark and DuckDB) is bench/corpus_spark.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.corpus.check import FORMS, Checker, duckdb_connection, load_corpus, summary

pytestmark = pytest.mark.integration

#: the service may refuse a few queries it cannot translate faithfully (the caller then runs them as written),
#: but not so many that the check says little
MAX_REFUSED_SHARE = 0.05


@pytest.fixture(scope="module")
def outcomes(corpus_spark: Any) -> list[Any]:
    checker = Checker(corpus_spark, duckdb_connection())
    return checker.run(load_corpus(), FORMS)


def test_the_corpus_is_large_and_varied() -> None:
    queries = load_corpus()
    assert len(queries) >= 100
    text = [q.sql.upper() for q in queries]

    def count(pred: Any) -> int:
        return sum(1 for t in text if pred(t))

    assert count(lambda t: "WITH " in t) >= 15
    assert count(lambda t: "UNION" in t) >= 10
    assert count(lambda t: "LEFT JOIN" in t or "LEFT OUTER JOIN" in t or "FULL OUTER" in t) >= 10
    assert count(lambda t: "EXISTS" in t or " IN (SELECT" in t) >= 10
    assert count(lambda t: " OVER (" in t) >= 8
    assert sum(1 for q in queries if q.functions) >= 5
    comma = [t for t in text if " JOIN " not in t.split("WHERE")[0] and "," in t.split("FROM", 1)[1].split("WHERE")[0]]
    assert len(comma) >= 30


def test_no_answer_is_slower_than_spark_alone_on_plans(outcomes: list[Any]) -> None:
    report = summary(outcomes)
    print(report)
    bad = [o for o in outcomes if o.violations]
    assert not bad, f"{len(bad)} of {len(outcomes)} answers break the corpus check\n{report}\n\n" + "\n\n".join(
        o.describe() for o in bad
    )


def test_the_service_answers_nearly_every_query(outcomes: list[Any]) -> None:
    refused = [o for o in outcomes if o.refused]
    assert len(refused) <= MAX_REFUSED_SHARE * len(outcomes), "\n".join(
        f"{o.query} [{o.form}]: {o.refused}" for o in refused
    )
