"""Row estimates per operator: joins from key NDVs, aggregates from group-key NDVs, defaults otherwise."""

import pytest

from costmodel.explain import explain
from tests.costmodel.dsl import aggregate, c, distinct, f, join, limit, run, scan, table, union


def rows(result, operator):
    return next(n.rows_out for n in result.before if n.operator == operator)


def test_inner_join_divides_by_the_larger_key_ndv():
    tables = {
        "o": table(["k"], rows=1_500_000, k={"ndv": 100_000}),
        "c": table(["k"], rows=150_000, k={"ndv": 150_000}),
    }
    result = run(join(scan("o"), scan("c"), c("o.k") == c("c.k")), tables)
    assert rows(result, "join") == pytest.approx(1_500_000 * 150_000 / 150_000)


def test_join_with_unknown_ndv_assumes_the_smaller_side_is_a_key():
    tables = {"fact": table(["k"], rows=6_000_000), "dim": table(["k"], rows=25)}
    result = run(join(scan("fact"), scan("dim"), c("fact.k") == c("dim.k")), tables)
    assert rows(result, "join") == pytest.approx(6_000_000)


def test_outer_joins_keep_their_preserved_rows():
    tables = {"l": table(["k"], rows=1000, k={"ndv": 1000}), "r": table(["k"], rows=10, k={"ndv": 10})}
    inner = run(join(scan("l"), scan("r"), c("l.k") == c("r.k")), tables)
    left = run(join(scan("l"), scan("r"), c("l.k") == c("r.k"), type="left"), tables)
    assert rows(inner, "join") == pytest.approx(10)
    assert rows(left, "join") == pytest.approx(1000)


def test_semi_and_anti_split_the_left_rows():
    tables = {"l": table(["k"], rows=1000, k={"ndv": 100}), "r": table(["k"], rows=10, k={"ndv": 10})}
    semi = rows(run(join(scan("l"), scan("r"), c("l.k") == c("r.k"), type="semi"), tables), "join")
    anti = rows(run(join(scan("l"), scan("r"), c("l.k") == c("r.k"), type="anti"), tables), "join")
    assert semi == pytest.approx(100) and anti == pytest.approx(900)


def test_aggregate_rows_are_the_product_of_key_ndvs_capped_by_input():
    tables = {"t": table(["a", "b", "v"], rows=1000, a={"ndv": 5}, b={"ndv": 7})}
    assert rows(run(aggregate(scan("t"), [c("a"), c("b")], n=f("count")), tables), "aggregate") == 35
    assert rows(run(aggregate(scan("t"), [], n=f("count")), tables), "aggregate") == 1
    assert rows(run(aggregate(scan("t"), [c("v")], n=f("count")), tables), "aggregate") == 1000


def test_union_limit_distinct():
    tables = {"t": table(["a"], rows=300, a={"ndv": 3}), "u": table(["a"], rows=700)}
    assert rows(run(union(scan("t"), scan("u")), tables), "union") == 1000
    assert rows(run(limit(scan("u"), 10, offset=5), tables), "limit") == 10
    assert rows(run(distinct(scan("t")), tables), "distinct") == 3


def test_missing_row_count_uses_the_default_and_warns():
    result = run(scan("t"), {"t": table(["a"])})
    assert result.before[0].rows_out == 1000
    assert result.warnings == ["table 't' has no row_count; assumed 1000 rows"]


def test_filtering_the_key_side_of_a_join_without_ndvs_shrinks_the_join_in_proportion():
    from tests.costmodel.dsl import filter_

    tables = {
        "fact": table({"k": "int", "v": "int"}, rows=6_000_000),
        "dim": table({"k": "int", "name": "string"}, rows=25),
    }
    plan = filter_(join(scan("fact"), scan("dim"), c("fact.k") == c("dim.k")), c("dim.name").like("A%"))
    result = run(plan, tables)
    join_after = next(n for n in result.after if n.operator == "join")
    assert join_after.rows_out == pytest.approx(6_000_000 * 0.1)
    assert "TableScan: dim filters=[dim.name LIKE 'A%']" in explain(result.plan)
