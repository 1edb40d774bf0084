"""service.sql.type_names: while the adapter works, sqlglot's repeated type-name parses come from a memo that
answers what a parse answers; outside it, sqlglot's ``parse_one`` is its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel

from service.sql import sql_to_plan, type_names
from service.sql.parse import parse_query
from service.sql.work import translating

SQLGLOT_PARSE_ONE = type_names._sqlglot_parse_one
Memo = dict[tuple[str, type, object], exp.Expr]


@pytest.fixture
def empty_memo() -> Iterator[Memo]:
    saved = dict(type_names._parsed)
    type_names._parsed.clear()
    yield type_names._parsed
    type_names._parsed.clear()
    type_names._parsed.update(saved)


def test_sqlglot_parse_one_is_the_memo_wrapping_sqlglots_own() -> None:
    assert sqlglot.parse_one is type_names.parse_one
    assert sqlglot.parse_one.__wrapped__ is SQLGLOT_PARSE_ONE
    assert sqlglot.parse_one.__doc__ == SQLGLOT_PARSE_ONE.__doc__


def test_spark_parser_still_parses_char_and_varchar_for_a_date_literal(empty_memo: Memo) -> None:
    """The reason for the memo: if sqlglot stops asking, this fails and the workaround can go."""
    with translating():
        parse_query("SELECT DATE '2020-01-01' AS d", "spark")
    assert {name for name, _, _ in empty_memo} >= {"char", "varchar"}


@pytest.mark.parametrize("name", ["char", "varchar", "json", "decimal(10, 2)", "array<int>"])
def test_a_remembered_name_is_the_tree_a_parse_makes(name: str, empty_memo: Memo) -> None:
    parsed = SQLGLOT_PARSE_ONE(name, into=exp.DataType, error_level=ErrorLevel.IGNORE)
    with translating():
        first = sqlglot.parse_one(name, into=exp.DataType, error_level=ErrorLevel.IGNORE)
        again = sqlglot.parse_one(name, into=exp.DataType, error_level=ErrorLevel.IGNORE)
    assert first == parsed and again == parsed and first.sql() == again.sql() == parsed.sql()
    assert first is not again  # each caller gets its own copy


def test_a_name_that_does_not_parse_raises_each_time_and_is_not_kept(empty_memo: Memo) -> None:
    """``DataType.build(..., udt=True)`` turns the error into a user-defined type, as without the memo."""
    with translating():
        for _ in range(2):
            with pytest.raises(sqlglot.ParseError):
                sqlglot.parse_one("some_udt", into=exp.DataType, error_level=ErrorLevel.IGNORE)
        built = exp.DataType.build("some_udt", udt=True)
    assert not empty_memo
    assert built == exp.DataType.build("some_udt", udt=True) and built.this == exp.DType.USERDEFINED


def test_a_copy_changed_by_its_caller_leaves_the_memo_as_parsed(empty_memo: Memo) -> None:
    with translating():
        first = exp.DataType.build("varchar", udt=True)
        first.set("this", exp.DType.TEXT)  # what the Hive parser does to a varchar
        again = exp.DataType.build("varchar", udt=True)
    assert again.this == exp.DType.VARCHAR and first.this == exp.DType.TEXT


def test_outside_the_adapter_sqlglot_parses_as_ever(empty_memo: Memo) -> None:
    exp.DataType.build("char", udt=True)
    sqlglot.parse_one("varchar", into=exp.DataType, error_level=ErrorLevel.IGNORE)
    assert not empty_memo
    with translating():
        pass
    assert not type_names.remembering.get()


def test_other_parses_are_sqlglots_own_even_inside_the_adapter(empty_memo: Memo) -> None:
    with translating():
        tree = sqlglot.parse_one("SELECT a FROM t", read="spark")
        typed = sqlglot.parse_one("date", read="spark", into=exp.DataType)
        text = sqlglot.parse_one("char")  # no node type asked for: a column named char
    assert not empty_memo
    assert tree.sql("spark") == "SELECT a FROM t" and typed.this == exp.DType.DATE
    assert isinstance(text, exp.Column)


def test_the_memo_holds_at_most_max_names(empty_memo: Memo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(type_names, "MAX_NAMES", 3)
    names = ["int", "bigint", "double", "date", "timestamp", "boolean"]
    with translating():
        built = [exp.DataType.build(name, udt=True) for name in names]
    assert len(empty_memo) == 3
    assert [b.sql() for b in built] == [exp.DataType.build(name, udt=True).sql() for name in names]


def test_a_translation_answers_the_same_with_and_without_the_memo(
    empty_memo: Memo, monkeypatch: pytest.MonkeyPatch
) -> None:
    sql = "SELECT CAST(a AS VARCHAR(3)) AS v FROM t WHERE d >= DATE '1998-01-01' AND c = CAST('x' AS CHAR(2))"
    catalog = {"tables": {"t": {"columns": [{"name": "a", "type": "int"}, "c", {"name": "d", "type": "date"}]}}}
    remembered = sql_to_plan(sql, catalog)
    assert empty_memo  # the translation used it
    monkeypatch.setattr(type_names, "MAX_NAMES", 0)
    empty_memo.clear()
    assert sql_to_plan(sql, catalog) == remembered
    assert not empty_memo
