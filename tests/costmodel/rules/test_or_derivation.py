"""Per-side OR derivation, keeping the original."""

from tests.costmodel.dsl import after, and_, c, filter_, join, or_, run, scan, table, tree

T = {"l": table(["k", "x"], rows=1000), "r": table(["k", "z"], rows=1000)}


def test_each_side_gets_its_part_of_the_or():
    predicate = or_(and_(c("l.x") == 1, c("r.z") == 2), and_(c("l.x") == 3, c("r.z") == 4))
    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k")), predicate)
    result = run(plan, T, mode="always")
    assert after(result) == tree("""
        Filter: l.x = 1 AND r.z = 2 OR l.x = 3 AND r.z = 4
          Inner Join: l.k = r.k
            TableScan: l filters=[l.x IN (1, 3)]
            TableScan: r filters=[r.z IN (2, 4)]
    """)


def test_no_derivation_when_a_disjunct_says_nothing_about_the_side():
    predicate = or_(and_(c("l.x") == 1, c("r.z") == 2), c("r.z") == 4)
    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k")), predicate)
    text = after(run(plan, T, mode="always"))
    assert "TableScan: l\n" in text
    assert "TableScan: r filters=[r.z = 2 OR r.z = 4]" in text or "r.z IN (2, 4)" in text


def test_left_join_derives_only_for_the_preserved_side():
    predicate = or_(and_(c("l.x") == 1, c("r.z") == 2), and_(c("l.x") == 3, c("r.z").is_null()))
    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k"), type="left"), predicate)
    text = after(run(plan, T, mode="always"))
    assert "Left Join" in text
    assert "TableScan: l filters=[l.x IN (1, 3)]" in text
    assert "TableScan: r\n" in text + "\n"


def test_or_in_a_join_condition_lends_each_side_a_filter():
    on = and_(c("l.k") == c("r.k"), or_(and_(c("l.x") == 1, c("r.z") == 2), and_(c("l.x") == 3, c("r.z") == 4)))
    text = after(run(join(scan("l"), scan("r"), on), T, mode="always"))
    assert "TableScan: l filters=[l.x IN (1, 3)]" in text
    assert "TableScan: r filters=[r.z IN (2, 4)]" in text
