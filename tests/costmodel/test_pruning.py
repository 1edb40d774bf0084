"""Container pruning from min/max/null-count statistics: the PruningPredicate seed, and a property test."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.catalog import ColumnStats, Container
from costmodel.expr import Call, Column, Literal
from costmodel.pruning import prune
from costmodel.sample import Sample, _Evaluator

X, Y = Column("x", 1, "int"), Column("y", 2, "int")
NAMES = {1: "x", 2: "y"}


def call(fn, *args, **kw):
    return Call(fn, tuple(args), **kw)


def lit(v):
    return Literal(v, "int" if isinstance(v, int) else "unknown")


def container(cid, rows=None, **stats):
    """A container's statistics as the wire reader makes them (value sets as tuples)."""
    return Container(cid, rows, {name: ColumnStats(**_tuples(s)) for name, s in stats.items()})


def _tuples(fields):
    return {key: tuple(value) if isinstance(value, list) else value for key, value in fields.items()}


def test_seed_example_x_equals_5_over_three_containers():
    a = container("A", x={"min": 0, "max": 4})
    b = container("B", x={"min": 2, "max": 10})
    c = container("C", x={"min": 5, "max": 8})
    result = prune([call("=", X, lit(5))], (a, b, c), NAMES)
    assert result.pruned == ("A",) and result.kept == ("B", "C")


def test_seed_example_1_unknown_null_and_row_counts_still_prune():
    stats = container("1", x={"min": 1, "max": 100}, y={"min": 4, "max": 7})
    result = prune([call("=", X, lit(5)), call("=", Y, lit(10))], (stats,), NAMES)
    assert result.pruned == ("1",)
    # with y between 4 and 15 the container may hold a match
    wider = container("2", x={"min": 1, "max": 100}, y={"min": 4, "max": 15})
    assert prune([call("=", X, lit(5)), call("=", Y, lit(10))], (wider,), NAMES).kept == ("2",)


def test_seed_example_2_all_null_column_prunes():
    stats = container("2", rows=100, x={"min": None, "max": None, "null_count": 100}, y={"min": 4, "max": 7})
    assert prune([call("=", X, lit(5)), call("=", Y, lit(10))], (stats,), NAMES).pruned == ("2",)


@pytest.mark.parametrize(
    "predicate, rewritten",
    [
        (call("=", X, lit(5)), "x_null_count != x_row_count AND x_min <= 5 AND 5 <= x_max"),
        (call("<", X, lit(5)), "x_null_count != x_row_count AND x_min < 5"),
        (
            call("and", call("=", X, lit(5)), call("=", Y, lit(10))),
            "x_null_count != x_row_count AND x_min <= 5 AND 5 <= x_max AND y_null_count != y_row_count"
            " AND y_min <= 10 AND 10 <= y_max",
        ),
        (call("is_null", X), "x_null_count > 0"),
        (call("is_not_null", X), "x_null_count != x_row_count"),
        (
            call("=", call("cast", Column("x", 1, "double"), type="int"), lit(5)),
            "x_null_count != x_row_count AND CAST(x_min AS int) <= 5 AND 5 <= CAST(x_max AS int)",
        ),
    ],
)
def test_seed_rewrite_table(predicate, rewritten):
    assert prune([predicate], (), NAMES).describe() == rewritten


def test_is_null_and_is_not_null_use_the_counts():
    full = container("full", rows=10, x={"min": 1, "max": 2, "null_count": 0})
    nulls = container("nulls", rows=10, x={"null_count": 10})
    assert prune([call("is_null", X)], (full, nulls), NAMES).kept == ("nulls",)
    assert prune([call("is_not_null", X)], (full, nulls), NAMES).kept == ("full",)


def test_arithmetic_with_a_literal_uses_the_monotone_form():
    # (x / 2) = 4, the seed's try_new example: x in [10, 20] cannot hold 8
    low = container("low", x={"min": 10, "max": 20})
    hit = container("hit", x={"min": 0, "max": 9})
    assert prune([call("=", call("/", X, lit(2)), lit(4))], (low, hit), NAMES).kept == ("hit",)
    assert prune([call(">", call("+", X, lit(1)), lit(21))], (low, hit), NAMES).pruned == ("low", "hit")


def test_string_casts_do_not_pretend_to_keep_order():
    s = Column("s", 3, "string")
    stats = container("c", s={"min": "10", "max": "9"})  # holds "10", "5", "9"
    assert prune([call("=", call("cast", s, type="int"), lit(5))], (stats,), {3: "s"}).kept == ("c",)


def test_literal_guarantees_use_the_container_value_sets():
    ab = container("ab", x={"min": 1, "max": 9, "values": [1, 9]})
    mid = container("mid", x={"min": 1, "max": 9, "values": [1, 5, 9]})
    assert prune([call("=", X, lit(5))], (ab, mid), NAMES).kept == ("mid",)
    assert prune([call("in", X, lit(4), lit(5))], (ab, mid), NAMES).kept == ("mid",)
    assert prune([call("not", call("in", X, lit(1), lit(9)))], (ab, mid), NAMES).kept == ("mid",)
    assert prune([call("!=", X, lit(1))], (container("ones", x={"values": [1]}),), NAMES).kept == ()


def test_unknown_statistics_keep_the_container():
    bare = container("bare")
    assert prune([call("=", X, lit(5))], (bare,), NAMES).kept == ("bare",)
    assert prune([call("like", X, Literal("A%", "string"))], (container("c", x={"min": 1, "max": 2}),), NAMES).kept


# ------------------------------------------------------------------ property

values = st.one_of(st.none(), st.integers(-5, 5))
rows_strategy = st.lists(st.tuples(values, values), min_size=1, max_size=8)


def atoms():
    col = st.sampled_from([X, Y])
    number = st.integers(-6, 6).map(lambda v: lit(v))
    comparison = st.builds(
        lambda fn, c, v: call(fn, c, v),
        st.sampled_from(["=", "!=", "<", "<=", ">", ">="]),
        col,
        st.one_of(number, st.just(Literal(None, "null"))),
    )
    flipped = st.builds(lambda fn, c, v: call(fn, v, c), st.sampled_from(["=", "<", ">="]), col, number)
    nulls = st.builds(lambda fn, c: call(fn, c), st.sampled_from(["is_null", "is_not_null"]), col)
    between = st.builds(lambda c, a, b: call("between", c, a, b), col, number, number)
    in_list = st.builds(
        lambda c, vs: call("in", c, *vs),
        col,
        st.lists(st.one_of(number, st.just(Literal(None, "null"))), min_size=1, max_size=3),
    )
    arith = st.builds(
        lambda fn, c, k, v: call(">", call(fn, c, lit(k)), v),
        st.sampled_from(["+", "-", "*"]),
        col,
        st.integers(1, 3),
        number,
    )
    cast = st.builds(lambda c, v: call("<=", call("cast", c, type="double"), v), col, number)
    return st.one_of(comparison, flipped, nulls, between, in_list, arith, cast)


predicates = st.recursive(
    atoms(),
    lambda inner: st.one_of(
        st.builds(lambda a, b: call("and", a, b), inner, inner),
        st.builds(lambda a, b: call("or", a, b), inner, inner),
        st.builds(lambda a: call("not", a), inner),
    ),
    max_leaves=6,
)


def stats_of(rows, with_values):
    out = {}
    for i, name in enumerate(("x", "y")):
        present = [r[i] for r in rows if r[i] is not None]
        out[name] = {
            "min": min(present) if present else None,
            "max": max(present) if present else None,
            "null_count": len(rows) - len(present),
            "values": sorted(set(present)) if with_values else None,
        }
    return out


@settings(max_examples=600, deadline=None)
@given(st.lists(rows_strategy, min_size=1, max_size=4), predicates, st.booleans(), st.booleans())
def test_a_container_holding_a_matching_row_is_never_pruned(containers_rows, predicate, with_values, with_counts):
    containers = tuple(
        container(f"c{i}", len(rows) if with_counts else None, **stats_of(rows, with_values))
        for i, rows in enumerate(containers_rows)
    )
    result = prune([predicate], containers, NAMES)
    for i, rows in enumerate(containers_rows):
        sample = Sample.from_columns("t", len(rows), {"x": [r[0] for r in rows], "y": [r[1] for r in rows]})
        true, _ = _Evaluator(sample, NAMES).truths(predicate)
        if true.any():
            assert f"c{i}" in result.kept, (rows, result.describe())


FIXED_CONTAINERS = [
    [(0, 1), (3, None), (5, 2)],
    [(None, None), (None, 1)],
    [(-2, -2), (-2, 4)],
    [(4, 0)],
    [(1, None), (None, 3), (2, 2)],
]


def exhaustive_atoms():
    for column in (X, Y):
        for v in range(-3, 7):
            for fn in ("=", "!=", "<", "<=", ">", ">="):
                yield call(fn, column, lit(v))
                yield call(fn, lit(v), column)
                yield call("not", call(fn, column, lit(v)))
            yield call("between", column, lit(v), lit(v + 2))
            yield call("in", column, lit(v), lit(v + 3))
            yield call(">", call("+", column, lit(2)), lit(v))
            yield call("<", call("*", column, lit(2)), lit(v))
        yield call("is_null", column)
        yield call("is_not_null", column)


@pytest.mark.parametrize("with_values", [False, True])
def test_every_simple_predicate_on_fixed_containers_keeps_each_matching_container(with_values):
    containers = tuple(
        container(f"c{i}", len(rows), **stats_of(rows, with_values)) for i, rows in enumerate(FIXED_CONTAINERS)
    )
    checked = 0
    for predicate in exhaustive_atoms():
        result = prune([predicate], containers, NAMES)
        for i, rows in enumerate(FIXED_CONTAINERS):
            sample = Sample.from_columns("t", len(rows), {"x": [r[0] for r in rows], "y": [r[1] for r in rows]})
            true, _ = _Evaluator(sample, NAMES).truths(predicate)
            if true.any():
                assert f"c{i}" in result.kept, (predicate, rows, result.describe())
                checked += 1
    assert checked > 500
    # and pruning does happen: min/max alone exclude a good share of the (predicate, container) pairs
    pruned = sum(len(prune([p], containers, NAMES).pruned) for p in exhaustive_atoms())
    assert pruned > 300


# ------------------------------------------------------------------ regressions found by bench/pruning.py


def _bound(predicate):
    from costmodel import catalog_from_wire, plan_from_wire

    cat = catalog_from_wire(
        {
            "tables": {
                "t": {
                    "columns": [
                        {"name": "d", "type": "date"},
                        {"name": "ts", "type": "timestamp"},
                        {"name": "s", "type": "string"},
                    ]
                }
            }
        }
    )
    plan = plan_from_wire({"op": "filter", "predicate": predicate, "input": {"op": "scan", "table": "t"}}, cat)
    return plan.predicate, {f.cid: f.name for f in plan.input.fields}


MIDNIGHT = {"lit": "1995-01-01 00:00:00", "type": "timestamp"}
DAYS = Container("c", 2, {"d": ColumnStats(min="1994-12-31", max="1995-01-01", null_count=0)})


@pytest.mark.parametrize(
    "predicate",
    [
        {"fn": ">=", "args": [{"col": "d"}, MIDNIGHT]},
        {"fn": "=", "args": [{"fn": "cast", "args": [{"col": "d"}], "type": "timestamp"}, MIDNIGHT]},
        {"fn": "in", "args": [{"col": "d"}, MIDNIGHT]},
    ],
)
def test_a_date_column_against_a_timestamp_literal_keeps_the_day_it_holds(predicate):
    bound, names = _bound(predicate)
    assert prune([bound], (DAYS,), names).kept == ("c",)


def test_timestamp_statistics_as_datetime_objects_compare_in_time_order():
    import datetime as dt

    stats = Container("c", 2, {"ts": ColumnStats(min=dt.datetime(1995, 1, 1, 0), max=dt.datetime(1995, 1, 1, 6))})
    bound, names = _bound({"fn": "<", "args": [{"col": "ts"}, {"lit": "1995-01-01 12:00:00", "type": "timestamp"}]})
    assert prune([bound], (stats,), names).kept == ("c",)


def test_not_in_prunes_a_container_holding_only_listed_values():
    only_air = Container("c", 2, {"s": ColumnStats(min="AIR", max="AIR", null_count=0)})
    listed = {"fn": "in", "args": [{"col": "s"}, {"lit": "AIR"}, {"lit": "MAIL"}]}
    bound, names = _bound({"fn": "not", "args": [listed]})
    assert prune([bound], (only_air,), names).pruned == ("c",)
    mixed = Container("m", 2, {"s": ColumnStats(min="AIR", max="RAIL", null_count=0)})
    assert prune([bound], (mixed,), names).kept == ("m",)
