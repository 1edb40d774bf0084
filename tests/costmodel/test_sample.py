"""Selectivity from a sample: SQL three-valued logic on numpy arrays, Wilson intervals, joint conjunctions."""

from __future__ import annotations

import numpy as np
import pytest

from costmodel.catalog import ColumnStats
from costmodel.estimate import ColumnInfo, ColumnStatsSource, Estimator
from costmodel.expr import Call, Column, Literal
from costmodel.sample import Sample, SampleSource, wilson_interval

X, S, D1, D2 = Column("x", 1), Column("s", 2), Column("d1", 3), Column("d2", 4)
INFOS = {
    1: ColumnInfo(None, 1000.0, "t", "x"),
    2: ColumnInfo(None, 1000.0, "t", "s"),
    3: ColumnInfo(None, 1000.0, "t", "d1"),
    4: ColumnInfo(None, 1000.0, "t", "d2"),
}


def lit(v, t=None):
    return Literal(v, t or ("int" if isinstance(v, int) else "string"))


def call(fn, *args):
    return Call(fn, tuple(args))


def sample(**columns):
    return Sample.from_columns("t", 1000, columns)


def selectivity(pred, smp, fallback=None):
    found = SampleSource({"t": smp}, fallback).estimate(pred, INFOS)
    assert found is not None
    return found


# ten rows: x has NULLs, s has NULLs
SMALL = sample(x=[1, 2, 3, None, None, 1, 1, 5, 8, 2], s=["Ab", None, "ab", "Ac", "B", None, "A", "x", "Az", "b"])


@pytest.mark.parametrize(
    "pred, expected",
    [
        (call("=", X, lit(1)), 3),
        (call("=", X, lit(None)), 0),  # x = NULL is never true
        (call("!=", X, lit(1)), 5),  # NULLs are neither equal nor unequal
        (call("not", call(">", X, lit(1))), 3),  # NOT (NULL > 1) is NULL
        (call("in", X, lit(1), lit(2)), 5),
        (call("in", X, lit(1), lit(None)), 3),  # a NULL in the list never makes a row true
        (call("not", call("in", X, lit(1), lit(None))), 0),  # NOT IN with a NULL in the list is never true
        (call("like", S, lit("A%")), 4),  # NULL LIKE 'A%' is NULL
        (call("not", call("like", S, lit("A%"))), 4),
        (call("is_null", X), 2),
        (call("is_not_null", S), 8),
        (call("or", call("=", X, lit(8)), call("is_null", X)), 3),
        (call("and", call(">", X, lit(0)), call("like", S, lit("A%"))), 3),
        (call("=", call("coalesce", X, lit(0)), lit(0)), 2),
        (call("between", X, lit(2), lit(5)), 4),
    ],
)
def test_three_valued_logic(pred, expected):
    est = selectivity(pred, SMALL)
    assert est.source == "sample" and est.sample_size == 10
    assert est.selectivity == pytest.approx(expected / 10)


def test_wilson_interval_is_sound_at_zero_and_in_the_middle():
    low, high = wilson_interval(0, 100)
    assert low == pytest.approx(0, abs=1e-12) and high == pytest.approx(0.037, abs=0.001)
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.404, abs=0.002) and high == pytest.approx(0.596, abs=0.002)


def correlated_dates(n=20_000, seed=7):
    rng = np.random.default_rng(seed)
    ship = np.datetime64("1995-01-01") + rng.integers(0, 2000, n).astype("timedelta64[D]")
    receipt = ship + rng.integers(1, 30, n).astype("timedelta64[D]")
    return Sample("t", 6_000_000, {"d1": ship, "d2": receipt}, {"d1": np.zeros(n, bool), "d2": np.zeros(n, bool)})


def test_correlated_conjunction_is_estimated_jointly():
    smp = correlated_dates()
    a = call(">", D1, lit("1998-01-01", "date"))
    b = call(">", D2, lit("1998-01-01", "date"))
    joint = selectivity(call("and", a, b), smp).selectivity
    product = selectivity(a, smp).selectivity * selectivity(b, smp).selectivity
    truth = np.mean((smp.values["d1"] > np.datetime64("1998-01-01")) & (smp.values["d2"] > np.datetime64("1998-01-01")))
    assert joint == pytest.approx(truth)
    assert joint / product > 1.5  # independence would be badly wrong


def test_cost_model_uses_the_joint_estimate_for_a_filter():
    from costmodel import catalog_from_wire, plan_from_wire
    from costmodel.optimizer import optimize
    from tests.costmodel.dsl import and_, c, filter_, scan, table

    smp = correlated_dates()
    tables = {"t": table({"d1": "date", "d2": "date"}, rows=6_000_000)}
    catalog = catalog_from_wire({"tables": tables})
    day = {"lit": "1998-01-01", "type": "date"}
    plan = plan_from_wire(filter_(scan("t"), and_(c("d1") > day, c("d2") > day)), catalog)
    result = optimize(plan, catalog, sources=(SampleSource({"t": smp}), ColumnStatsSource()))
    rows = result.after[0].rows_out
    truth = np.mean((smp.values["d1"] > np.datetime64("1998-01-01")) & (smp.values["d2"] > np.datetime64("1998-01-01")))
    assert rows == pytest.approx(6_000_000 * truth)
    assert {e["source"] for e in result.to_wire()["estimates"]} == {"sample"}


def test_few_matches_fall_back_to_statistics_when_they_can_answer():
    smp = sample(x=list(range(100)))
    rare = call("=", X, lit(5))
    stats = ColumnStatsSource()
    with_stats = dict(INFOS)
    with_stats[1] = ColumnInfo(ColumnStats(ndv=1000, min=0, max=10_000), 1_000_000.0, "t", "x")
    assert SampleSource({"t": smp}, stats).estimate(rare, with_stats).source == "statistics"
    alone = SampleSource({"t": smp}, stats).estimate(rare, INFOS)
    assert alone.source == "sample" and alone.selectivity == pytest.approx(0.01) and alone.high > 0.04


def test_predicates_across_tables_or_unknown_functions_are_declined():
    smp = sample(x=[1, 2])
    infos = {**INFOS, 9: ColumnInfo(None, 10.0, "u", "y")}
    assert SampleSource({"t": smp}).estimate(call("=", X, Column("y", 9)), infos) is None
    assert SampleSource({"t": smp}).estimate(call("=", Call("udf", (X,), name="f"), lit(1)), INFOS) is None


def test_estimator_chain_reports_sample_first():
    smp = sample(x=[1] * 50 + [2] * 50)
    est = Estimator(INFOS, (SampleSource({"t": smp}), ColumnStatsSource())).estimate(call("=", X, lit(1)))
    assert est.source == "sample" and est.selectivity == 0.5 and est.low < 0.5 < est.high


def test_decisions_carry_source_and_interval_and_flag_uncertain_ones():
    from costmodel import catalog_from_wire, options_from_wire, plan_from_wire
    from costmodel.optimizer import optimize
    from tests.costmodel.dsl import c, filter_, join, scan, table

    # 30 of 60 sampled rows match: p = 0.5, interval about [0.38, 0.62]; LIKE costs 3 and the join 1, so
    # r1 = 1/3 and p * r1 spans about [0.126, 0.208]; the join keeps 85% of its left input: 1 - r = 0.15
    # lies inside, so the estimate cannot settle the decision
    smp = Sample.from_columns("l", 100, {"s": ["Ax"] * 30 + ["B"] * 30, "k": list(range(60))})
    tables = {
        "l": table({"k": "int", "s": "string"}, rows=100, k={"ndv": 100}),
        "r": table({"k": "int"}, rows=85, k={"ndv": 100}),
    }
    catalog = catalog_from_wire({"tables": tables})
    plan = plan_from_wire(
        filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k"), id="j"), c("l.s").like("A%")), catalog
    )
    options = options_from_wire({"operator_costs": {"join": 1}})
    result = optimize(plan, catalog, options, sources=(SampleSource({"l": smp}), ColumnStatsSource()))
    d = next(d for d in result.decisions if d["operator"] == "j")
    assert d["source"] == "sample" and d["interval"][0] < d["selectivity"] < d["interval"][1]
    assert d["lhs"] == pytest.approx(0.15)
    assert d["uncertain"] is True
    certain = next(d for d in result.decisions if d["operator"] != "j")
    assert "uncertain" not in certain
    text = result.to_wire()["explain"]["after"]
    assert "sel=0.5 [0.377, 0.623] sample" in text


def test_a_rare_conjunction_falls_back_to_combining_its_parts():
    from costmodel.catalog import ColumnStats

    rows = 1_000_000.0
    infos = {
        1: ColumnInfo(ColumnStats(ndv=200_000, min=1, max=200_000, null_count=0), rows, "t", "x"),
        2: ColumnInfo(ColumnStats(ndv=50, min=1, max=50, null_count=0), rows, "t", "s"),
    }
    smp = Sample.from_columns("t", rows, {"x": list(range(1000, 2000)), "s": [i % 50 + 1 for i in range(1000)]})
    sources = (SampleSource({"t": smp}, ColumnStatsSource()), ColumnStatsSource())
    rare = call("and", call("=", X, lit(7)), call("<", S, lit(40)))
    est = Estimator(infos, sources).estimate(rare)
    # x = 7 from statistics (1 / 200,000), s < 40 from the sample (78%): about 3.9 rows of a million
    assert est.selectivity * rows == pytest.approx(3.9, rel=0.05)
