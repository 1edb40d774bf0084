"""Bounds on one column are an interval (costmodel/estimate_ranges.py): ``d >= x AND d <= y`` keeps what
``d BETWEEN x AND y`` keeps, in the estimator, in a node's rows, and so in a placement decision (issue 42: the
DataFrame form of the pull-up workload's p06 and p10, whose ``Column.between`` reaches the service as two
comparisons, pushed the dimension's UDF down where the SQL form's BETWEEN pulled it up)."""

from __future__ import annotations

import pytest

from costmodel.catalog import ColumnStats
from costmodel.estimate import ColumnInfo, Estimator
from costmodel.expr import Call, Column, Literal
from tests.costmodel.dsl import after, c, f, filter_, join, lit, run, scan, table, udf

D = Column("d", 1)
NAME = Column("name", 2)
YEAR = {"min": "2020-01-01", "max": "2020-12-31"}


def estimate(expr, **stats):
    columns = {
        1: ColumnInfo(ColumnStats(**stats), 1000.0, "t", "d"),
        2: ColumnInfo(ColumnStats(ndv=10), 1000.0, "t", "name"),
    }
    return Estimator(columns).estimate(expr)


def cmp(op, col, value):
    return Call(op, (col, Literal(value)))


def between(col, low, high):
    return Call("between", (col, Literal(low), Literal(high)))


def test_a_lower_and_an_upper_bound_keep_the_interval_between_not_their_product():
    both = Call("and", (cmp(">=", D, "2020-03-01"), cmp("<=", D, "2020-03-31")))
    spelled = estimate(between(D, "2020-03-01", "2020-03-31"), **YEAR).selectivity
    got = estimate(both, **YEAR)
    assert got.selectivity == pytest.approx(spelled) and got.source == "statistics"
    assert got.selectivity == pytest.approx(30 / 365, rel=0.02)
    alone = [estimate(p, **YEAR).selectivity for p in both.args]
    assert got.selectivity < 0.5 * alone[0] * alone[1]  # the product said about 0.14


def test_the_bounds_may_come_in_any_order_and_either_way_round():
    flipped = Call("and", (Call(">=", (Literal(30), D)), cmp(">", D, 10)))  # 30 >= d AND d > 10
    assert estimate(flipped, min=0, max=100).selectivity == pytest.approx(0.2)


def test_several_bounds_on_one_side_keep_the_tightest():
    lowers = Call("and", (cmp(">", D, 10), cmp(">", D, 70), cmp("<", D, 90)))
    assert estimate(lowers, min=0, max=100).selectivity == pytest.approx(0.2)
    assert estimate(Call("and", (cmp(">", D, 10), cmp(">=", D, 70))), min=0, max=100).selectivity == pytest.approx(0.3)


def test_disjoint_bounds_keep_nothing_and_nulls_pass_no_bound():
    assert estimate(Call("and", (cmp(">", D, 60), cmp("<", D, 40))), min=0, max=100).selectivity == 0
    half_null = Call("and", (cmp(">=", D, 20), cmp("<=", D, 40)))
    assert estimate(half_null, min=0, max=100, null_count=500).selectivity == pytest.approx(0.1)


def test_bounds_among_other_conjuncts_are_one_factor():
    mixed = Call("and", (cmp(">=", D, 20), cmp("=", NAME, "x"), cmp("<=", D, 40)))
    assert estimate(mixed, min=0, max=100).selectivity == pytest.approx(0.2 * 0.1)


def test_bounds_that_do_not_map_onto_a_line_are_multiplied_as_before():
    words = Call("and", (cmp(">=", D, "apple"), cmp("<=", D, "melon")))
    got = estimate(words, min="a", max="z")
    assert got.source == "default" and got.selectivity == pytest.approx((1 / 3) ** 2)
    no_stats = Estimator({1: ColumnInfo(None, 1000.0, "t", "d")})
    assert no_stats.estimate(Call("and", (cmp(">", D, 1), cmp("<", D, 5)))).selectivity == pytest.approx((1 / 3) ** 2)


def _rows(result, operator):
    return next(n.rows_out for n in result.before if n.operator == operator)


def test_a_filter_of_two_bounds_emits_the_interval_rows():
    tables = {"t": table({"d": "date"}, rows=36_500, d=YEAR)}
    comparisons = run(
        filter_(scan("t"), (c("d") >= lit("2020-03-01", "date")) & (c("d") <= lit("2020-03-31", "date"))), tables
    )
    spelled = run(
        filter_(scan("t"), f("between", c("d"), lit("2020-03-01", "date"), lit("2020-03-31", "date"))), tables
    )
    assert _rows(comparisons, "filter") == pytest.approx(_rows(spelled, "filter"))
    assert _rows(comparisons, "filter") == pytest.approx(36_500 * 30 / 365, rel=0.02)


#: the pull-up workload's p10 at sf0.1 (bench/pullup_workload.py, its scaled TPC-H catalog), trimmed to the columns read
TPCH_SF01 = {
    "orders": table(
        {"o_custkey": "bigint", "o_orderdate": "date"},
        rows=150_000,
        o_custkey={"ndv": 10_000, "min": 1, "max": 15_000, "null_count": 0},
        o_orderdate={"min": "1992-01-01", "max": "1998-08-02", "null_count": 0},
    ),
    "customer": table(
        {"c_custkey": "bigint", "c_comment": "string"},
        rows=15_000,
        c_custkey={"ndv": 15_000, "min": 1, "max": 15_000, "null_count": 0},
        c_comment={"null_count": 0},
    ),
}
MARCH_1, MARCH_3 = lit("1995-03-01", "date"), lit("1995-03-03", "date")


def _p10(march):
    checked = filter_(scan("customer", "c"), udf("expensive_check", c("c.c_comment"), cost=5000))
    joined = join(scan("orders", "o"), checked, c("o.o_custkey") == c("c.c_custkey"), id="j")
    return filter_(joined, march)


@pytest.mark.parametrize(
    "march",
    [
        pytest.param(f("between", c("o.o_orderdate"), MARCH_1, MARCH_3), id="between"),
        pytest.param((c("o.o_orderdate") >= MARCH_1) & (c("o.o_orderdate") <= MARCH_3), id="two_comparisons"),
    ],
)
def test_a_dimension_udf_is_pulled_above_a_join_that_a_date_interval_makes_selective(march):
    """Three days of six and a half years keep 0.1% of orders: the join keeps about 125 rows, of 15,000
    customers, so the UDF pays above it, however the interval is written."""
    result = run(_p10(march), TPCH_SF01)
    lines = after(result).splitlines()
    udf_line = next(i for i, line in enumerate(lines) if "expensive_check(" in line)
    join_line = next(i for i, line in enumerate(lines) if "Join" in line)
    assert udf_line < join_line, after(result)
    # the dates on a line from 1992-01-01 to 1998-08-02 (2405 days): two days' width of orders, each joining one
    # customer of the unfiltered 15,000
    joined = next(n.rows_out for n in result.after if n.operator == "join")
    assert joined == pytest.approx(150_000 * 2 / 2405, rel=0.05)
