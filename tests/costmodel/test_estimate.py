"""Selectivity from statistics, with defaults when nothing is known; every estimate names its source."""

import pytest

from costmodel.catalog import ColumnStats
from costmodel.estimate import DEFAULTS, ColumnInfo, Estimator
from costmodel.expr import Call, Column, Literal

A = Column("a", 1)
NAME = Column("name", 2)


def est(expr, **stats):
    columns = {
        1: ColumnInfo(ColumnStats(**stats) if stats else None, 1000.0, "t", "a"),
        2: ColumnInfo(ColumnStats(mcv=(("Alabama", 0.2), ("Boston", 0.3)), null_count=100), 1000.0, "t", "name"),
    }
    return Estimator(columns).estimate(expr)


def cmp(op, col, value):
    return Call(op, (col, Literal(value)))


def test_equality_uses_ndv_and_null_count():
    e = est(cmp("=", A, 5), ndv=10, null_count=100, min=0, max=100)
    assert e.selectivity == pytest.approx(0.09) and e.source == "statistics"


def test_equality_outside_min_max_is_zero():
    assert est(cmp("=", A, 500), ndv=10, min=0, max=100).selectivity == 0


def test_range_interpolates_min_max():
    assert est(cmp("<", A, 25), min=0, max=100).selectivity == pytest.approx(0.25)
    assert est(cmp(">", A, 25), min=0, max=100, null_count=500).selectivity == pytest.approx(0.375)


def test_range_on_dates():
    e = est(cmp(">=", A, "2020-07-02"), min="2020-01-01", max="2020-12-31")
    assert e.selectivity == pytest.approx(0.5, abs=0.01)


def test_histogram_beats_min_max_on_skew():
    # half of the values are below 1, the rest spread to 1000
    e = est(cmp("<", A, 1), min=0, max=1000, histogram=(0, 1, 1000))
    assert e.selectivity == pytest.approx(0.5)


def test_most_common_values():
    assert est(cmp("=", NAME, "Boston")).selectivity == pytest.approx(0.3)
    like = est(Call("like", (NAME, Literal("A%"))))
    assert like.selectivity == pytest.approx(0.2 + 0.4 * DEFAULTS["like"])


def test_null_semantics():
    assert est(Call("is_null", (A,)), null_count=250).selectivity == pytest.approx(0.25)
    assert est(Call("is_not_null", (A,)), null_count=250).selectivity == pytest.approx(0.75)
    assert est(cmp("=", A, None), ndv=10).selectivity == 0
    in_list = est(Call("in", (A, Literal(1), Literal(2), Literal(None))), ndv=10)
    assert in_list.selectivity == pytest.approx(0.2)


def test_defaults_when_nothing_is_known():
    e = est(cmp("=", A, 5))
    assert e.source == "default" and e.selectivity == DEFAULTS["="] and (e.low, e.high) == (0.0, 1.0)
    assert est(Call("like", (A, Literal("x%")))).selectivity == DEFAULTS["like"]


def test_conjunction_multiplies_and_reports_the_weakest_source():
    both = Call("and", (cmp("<", A, 50), cmp("=", NAME, "Boston")))
    e = est(both, min=0, max=100)
    assert e.selectivity == pytest.approx(0.5 * 0.3)
    mixed = Call("and", (cmp("<", A, 50), Call("like", (A, Literal("x")))))
    assert est(mixed, min=0, max=100).source == "default"


def test_constants():
    assert est(Call("=", (Literal(1), Literal(0)))).selectivity == 0
    assert est(Call("=", (Literal(1), Literal(0)))).source == "constant"


def test_comparison_with_null_is_never_true_even_without_statistics():
    e = est(cmp("=", A, None))
    assert e.selectivity == 0 and e.source == "constant"
