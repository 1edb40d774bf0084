"""The shortcut that accepts a function call without rebuilding it agrees with the rebuild, for every function
whose builder is sqlglot's generic one, at every argument count that parses."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from service.sql.common import BASE_DIALECT
from service.sql.errors import SqlError
from service.sql.func_forms import check_rebuilds, positional_args, rebuilds_in_place

#: The dialects the adapter reads most, and Postgres (JSONB_EXISTS parses there with a False in a required key).
DIALECTS = ("", "spark", "duckdb", "postgres")


def calls() -> list[tuple[exp.Func, str]]:
    """Every function name each dialect's parser knows, called with one to three column arguments, as it parses
    (the adapter rebuilds in the base dialect whatever it read); the shortcut itself decides which it takes."""
    found: list[tuple[exp.Func, str]] = []
    for dialect in DIALECTS:
        reader = sqlglot.Dialect.get_or_raise(dialect) if dialect else BASE_DIALECT
        for upper in sorted(reader.parser_class.FUNCTIONS):
            for count in range(1, 4):
                text = f"{upper}({', '.join(f'c{i}' for i in range(count))})"
                try:
                    e = sqlglot.parse_one(text, dialect=reader)
                except (SqlglotError, ValueError, TypeError, KeyError, IndexError):  # sqlglot's slips: a 4xx
                    continue
                if isinstance(e, exp.Func) and not isinstance(e, exp.Anonymous):
                    found.append((e, e.sql_name().lower()))
    return found


def test_a_call_accepted_without_a_rebuild_is_one_the_rebuild_accepts() -> None:
    accepted = 0
    for e, name in calls():
        try:
            positional = positional_args(e, name)
        except SqlError:
            continue
        if rebuilds_in_place(e, name, positional):
            accepted += 1
            check_rebuilds(e, name, positional)  # raises SqlError if the rebuild differs
    assert accepted > 3000  # the shortcut is taken for most of sqlglot's functions, not vacuously


def test_arguments_in_another_order_or_number_are_left_to_the_rebuild() -> None:
    e = sqlglot.parse_one("SUBSTRING(s, 2, 3)")
    assert isinstance(e, exp.Substring)
    positional = positional_args(e, "substring")
    assert rebuilds_in_place(e, "substring", positional)
    assert not rebuilds_in_place(e, "substring", positional[::-1])
    assert not rebuilds_in_place(e, "substring", positional[:2])
    # a required key the parse filled with False (RPAD: is_left) is missing from the rebuilt call: refused there
    rpad = sqlglot.parse_one("RPAD(s, 30, 'x')")
    assert isinstance(rpad, exp.Func)
    assert not rebuilds_in_place(rpad, "pad", positional_args(rpad, "pad"))
    jsonb = sqlglot.parse_one("JSONB_EXISTS(j)", dialect="postgres")
    assert isinstance(jsonb, exp.Func)
    assert not rebuilds_in_place(jsonb, "jsonb_exists", positional_args(jsonb, "jsonb_exists"))
    # a builder of its own (COALESCE's) is never shortcut, whatever the arguments
    coalesce = sqlglot.parse_one("COALESCE(a, b)")
    assert isinstance(coalesce, exp.Func)
    assert not rebuilds_in_place(coalesce, "coalesce", positional_args(coalesce, "coalesce"))


def test_calls_without_arguments_are_built_as_sqlglot_builds_them() -> None:
    """Compiled sqlglot's ``exp.func`` fails on a call without arguments whose builder is a lambda; the adapter
    builds it as ``exp.func`` does in Python: the name's generic builder, else its class, else an anonymous
    call; a required argument missing is a ValueError, never an AttributeError."""
    from sqlglot.expressions import FUNCTION_BY_NAME

    from service.sql.common import build_function

    built = refused = 0
    for upper, builder in sorted(BASE_DIALECT.parser_class.FUNCTIONS.items()):
        try:
            function = build_function(upper.lower(), [])
        except ValueError:
            refused += 1
            continue
        generic = getattr(builder, "__name__", None) == "from_arg_list"
        assert type(function) is (builder.__self__ if generic else FUNCTION_BY_NAME[upper]), upper
        assert not function.args.get("expressions") and function.this is None, upper
        built += 1
    assert built > 50 and refused > 500
    assert build_function("uuid", []).sql() == "UUID()" and build_function("array", []).sql() == "ARRAY()"


def test_uuid_and_an_empty_array_survive_the_round_trip() -> None:
    from service.sql import plan_to_sql, sql_to_plan

    catalog = {"tables": {"t": {"columns": [{"name": "a", "type": "int"}]}}}
    sql = "SELECT UUID() AS u, ARRAY() AS e, a FROM t WHERE a > 1"
    written = " ".join(plan_to_sql(sql_to_plan(sql, catalog)).split())
    assert written == "SELECT UUID() AS u, ARRAY() AS e, t.a FROM t WHERE t.a > 1"
