"""Error messages name what the user wrote, without the parts that are not at fault."""

from __future__ import annotations

import pytest

from service.sql import SqlError, sql_to_plan

CATALOG = {"tables": {"cities": {"columns": [{"name": "name", "type": "string"}]}}}


@pytest.mark.parametrize(
    ("sql", "named", "column"),
    [
        ("SELECT c.name FROM towns c", "towns", 20),
        ("SELECT t.x FROM towns AS t", "towns", 17),
        ("SELECT x FROM db.towns", "db.towns", 18),
    ],
)
def test_unknown_table_is_named_without_its_alias(sql: str, named: str, column: int) -> None:
    """The message used to print the FROM item with its alias ("table towns AS c")."""
    with pytest.raises(SqlError) as err:
        sql_to_plan(sql, CATALOG, "spark")
    assert err.value.code == "unknown_table"
    assert err.value.message == f"table {named} is not in the catalog"
    assert (err.value.line, err.value.column) == (1, column)
