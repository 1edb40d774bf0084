"""Transitive inference over equi-join keys, keeping the original."""

from tests.costmodel.dsl import E, after, and_, c, filter_, join, run, scan, table, tree

T = {
    "l": table({"k": "int", "x": "int"}, rows=1000),
    "r": table({"k": "int", "z": "int"}, rows=1000),
    "s": table({"k": "string"}, rows=1000),
}


def test_inner_join_key_predicate_is_copied_to_the_other_side():
    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k")), c("l.k") > 5)
    result = run(plan, T, mode="always")
    assert after(result) == tree("""
        Inner Join: l.k = r.k
          TableScan: l filters=[l.k > 5]
          TableScan: r filters=[r.k > 5]
    """)
    derived = [d for d in result.decisions if d["reason"] == "inferred_from_join_keys"]
    assert derived and derived[0]["predicate"] == "r.k > 5"


def test_chains_of_joins_carry_the_inference():
    inner = join(scan("l"), scan("r"), c("l.k") == c("r.k"))
    plan = filter_(join(inner, scan("l", "l2"), c("r.k") == c("l2.k")), c("l.k") == 7)
    text = after(run(plan, T, mode="always"))
    assert "TableScan: r filters=[r.k = 7]" in text
    assert "TableScan: l AS l2 filters=[l2.k = 7]" in text


def test_never_onto_the_null_supplying_side():
    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k"), type="left"), c("l.k") > 5)
    text = after(run(plan, T, mode="always"))
    assert "TableScan: r\n" in text + "\n" and "r.k > 5" not in text


def test_never_onto_the_subquery_side_of_not_in():
    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k"), type="anti", null_aware=True), c("l.k") > 5)
    text = after(run(plan, T, mode="always"))
    assert "r.k > 5" not in text


def test_plain_anti_join_may_filter_its_right_side():
    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k"), type="anti"), c("l.k") > 5)
    assert "TableScan: r filters=[r.k > 5]" in after(run(plan, T, mode="always"))


def test_keys_of_different_types_are_not_used():
    plan = filter_(join(scan("l"), scan("s"), c("l.k") == c("s.k")), c("l.k") > 5)
    assert "s.k > 5" not in after(run(plan, T, mode="always"))


def test_cost_mode_skips_an_inferred_filter_that_does_not_pay():
    # the right side has 10 rows and the key is unique: filtering it saves almost nothing
    tables = {
        "l": table({"k": "int"}, rows=100_000, k={"ndv": 10, "min": 0, "max": 9}),
        "r": table({"k": "int"}, rows=10, k={"ndv": 10, "min": 0, "max": 9}),
    }
    plan = filter_(
        join(scan("l"), scan("r"), c("l.k") == c("r.k")),
        E({"fn": "udf", "name": "slow", "args": [{"col": "l.k"}], "cost": 10_000}) > 0,
    )
    result = run(plan, tables)
    assert all(d["reason"] != "inferred_from_join_keys" or d["action"] == "kept" for d in result.decisions)


def test_derived_predicates_are_capped(monkeypatch):
    import costmodel.passes.infer

    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k")), and_(c("l.k") > 5, c("l.k") < 9))
    assert sum(d["reason"] == "inferred_from_join_keys" for d in run(plan, T, mode="always").decisions) == 2
    monkeypatch.setattr(costmodel.passes.infer, "MAX_DERIVED", 1)
    assert sum(d["reason"] == "inferred_from_join_keys" for d in run(plan, T, mode="always").decisions) == 1
