"""The shortcut that accepts a function call without rebuilding it agrees with the rebuild, for every function
whose builder is sqlglot's generic one, at every argument count that parses."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from service.sql.common import BASE_DIALECT
from service.sql.errors import SqlError
from service.sql.func_forms import check_rebuilds, positional_args, rebuilds_in_place

GENERIC = exp.Func.from_arg_list.__func__  # type: ignore[attr-defined]


def calls() -> list[tuple[exp.Func, str]]:
    """Each generically built function called with one to four column arguments, as the base dialect and Spark
    parse it (the adapter rebuilds in the base dialect whatever it read)."""
    found: list[tuple[exp.Func, str]] = []
    for upper, builder in sorted(BASE_DIALECT.parser_class.FUNCTIONS.items()):
        if getattr(builder, "__func__", None) is not GENERIC:
            continue
        for count, dialect in ((n, d) for n in range(1, 5) for d in (BASE_DIALECT, "spark")):
            text = f"{upper}({', '.join(f'c{i}' for i in range(count))})"
            try:
                e = sqlglot.parse_one(text, dialect=dialect)
            except (SqlglotError, ValueError, TypeError, KeyError, IndexError):  # sqlglot's slips: a 4xx upstream
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
    assert accepted > 1000  # the shortcut is taken for most of sqlglot's functions, not vacuously


def test_arguments_in_another_order_or_number_are_left_to_the_rebuild() -> None:
    e = sqlglot.parse_one("SUBSTRING(s, 2, 3)")
    assert isinstance(e, exp.Substring)
    positional = positional_args(e, "substring")
    assert rebuilds_in_place(e, "substring", positional)
    assert not rebuilds_in_place(e, "substring", positional[::-1])
    assert not rebuilds_in_place(e, "substring", positional[:2])
    # a builder of its own (COALESCE's) is never shortcut, whatever the arguments
    coalesce = sqlglot.parse_one("COALESCE(a, b)")
    assert isinstance(coalesce, exp.Func)
    assert not rebuilds_in_place(coalesce, "coalesce", positional_args(coalesce, "coalesce"))
