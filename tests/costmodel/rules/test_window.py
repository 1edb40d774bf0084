"""Through a window only on partition keys common to every window function."""

from tests.costmodel.dsl import E, after, c, decision, f, filter_, run, scan, table, tree, window

T = {"emp": table({"dept": "string", "team": "string", "salary": "int"}, rows=1000)}


def test_predicate_on_the_partition_key_goes_below():
    plan = filter_(window(scan("emp"), [c("dept")], [c("salary")], r=f("rank")), c("dept") == "x")
    assert after(run(plan, T, mode="always")) == tree("""
        Window: partitionBy=[dept], orderBy=[salary ASC], functions=[rank() AS r]
          TableScan: emp filters=[dept = 'x']
    """)


def test_predicate_on_another_column_stays():
    plan = filter_(window(scan("emp"), [c("dept")], [c("salary")], r=f("rank")), c("salary") > 10)
    result = run(plan, T, mode="always")
    assert decision(result, "salary > 10", result.original.input.id)["reason"] == "not_on_partition_keys"


def test_predicate_on_the_window_result_stays():
    plan = filter_(window(scan("emp"), [c("dept")], [c("salary")], r=f("rank")), c("r") <= 3)
    result = run(plan, T, mode="always")
    assert decision(result, "r <= 3", result.original.input.id)["reason"] == "references_window_output"


def test_only_keys_common_to_every_function_count():
    plan = window(scan("emp"), [c("dept"), c("team")], [c("salary")], r=f("rank"), s=f("sum", c("salary")))
    plan["functions"][1]["partition_by"] = [c("dept").d]
    result = run(filter_(plan, c("team") == "y"), T, mode="always")
    assert decision(result, "team = 'y'", result.original.input.id)["reason"] == "not_on_partition_keys"
    result = run(filter_(plan, c("dept") == "x"), T, mode="always")
    assert "TableScan: emp filters=[dept = 'x']" in after(result)


def test_a_predicate_without_columns_is_not_on_the_keys():
    plan = filter_(window(scan("emp"), [c("dept")], [], r=f("row_number")), E({"lit": True}) == E({"lit": True}))
    plan["predicate"] = {"fn": "=", "args": [{"fn": "current_user", "args": []}, {"lit": "bob"}]}
    result = run(plan, T, mode="always")
    assert decision(result, "current_user() = 'bob'", result.original.input.id)["reason"] == "no_columns"
