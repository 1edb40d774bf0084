"""Through projections: aliases and computed columns are substituted."""

from tests.costmodel.dsl import after, c, decision, f, filter_, project, run, scan, table, tree

T = {"t": table(["a", "b"], rows=1000)}


def test_alias_is_substituted():
    plan = filter_(project(scan("t"), x=c("a"), b=c("b")), c("x") > 1)
    assert after(run(plan, T, mode="always")) == tree("""
        Projection: a AS x, b
          TableScan: t filters=[a > 1]
    """)


def test_computed_column_is_substituted():
    plan = filter_(project(scan("t"), a=c("a"), s=c("a") + c("b")), c("s") > 10)
    assert after(run(plan, T, mode="always")) == tree("""
        Projection: a, a + b AS s
          TableScan: t filters=[a + b > 10]
    """)


def test_never_through_a_nondeterministic_projected_column():
    plan = filter_(project(scan("t"), a=c("a"), r=f("rand")), c("r") < 0.5)
    result = run(plan, T, mode="always")
    assert after(result) == tree("""
        Filter: r < 0.5
          Projection: a, rand() AS r
            TableScan: t
    """)
    assert decision(result, "r < 0.5", result.original.input.id)["reason"] == "nondeterministic_projection"


def test_deterministic_column_of_a_projection_with_rand_still_moves():
    plan = filter_(project(scan("t"), a=c("a"), r=f("rand")), c("a") < 5)
    assert after(run(plan, T, mode="always")) == tree("""
        Projection: a, rand() AS r
          TableScan: t filters=[a < 5]
    """)
