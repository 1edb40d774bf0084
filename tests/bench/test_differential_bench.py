"""bench/differential.py: a DuckDB query past the campaign's limit is interrupted and said, not waited on, and a
small campaign runs end to end."""

from __future__ import annotations

import time

import pytest

from tests.bench.scripts import load_bench

duckdb = pytest.importorskip("duckdb")


def test_a_query_past_the_limit_is_interrupted() -> None:
    bench = load_bench("differential")
    con = duckdb.connect()
    heavy = "SELECT count(*) FROM range(100000000) AS a, range(100000000) AS b"
    started = time.perf_counter()
    with pytest.raises(bench.TimedOut):
        bench.within(0.2, con.interrupt, lambda: con.execute(heavy).fetchall(), duckdb.InterruptException)
    assert time.perf_counter() - started < 10
    assert bench.within(5, con.interrupt, lambda: con.execute("SELECT 1").fetchall(), duckdb.InterruptException) == [
        (1,)
    ]  # still usable


def test_an_error_that_is_not_the_limit_is_raised_as_it_is() -> None:
    bench = load_bench("differential")
    con = duckdb.connect()
    with pytest.raises(duckdb.Error) as raised:
        bench.within(
            5, con.interrupt, lambda: con.execute("SELECT * FROM no_such_table").fetchall(), duckdb.InterruptException
        )
    assert not isinstance(raised.value, bench.TimedOut)


def test_a_small_campaign_compares_every_rewrite() -> None:
    bench = load_bench("differential")
    result = bench.campaign("duckdb", 20, seed=3, query_seconds=60)
    assert result["plans"] == 20 and result["rewrites_compared"] == 40
    assert result["mismatches"] == [] and result["timed_out"] == []
