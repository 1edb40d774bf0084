"""What the adapter refuses, and that the refusal says what and where."""

from __future__ import annotations

import pytest

from service.sql import SqlError, plan_to_sql, sql_to_plan
from tests.sql.helpers import CATALOG


def test_parse_error_has_line_and_column() -> None:
    with pytest.raises(SqlError) as info:
        sql_to_plan("SELECT a,\n  FROM t WHERE AND", CATALOG)
    err = info.value
    assert err.code == "parse_error"
    assert err.line == 2 and err.column is not None
    body = err.to_wire()
    assert body["error"] == "parse_error" and body["line"] == 2 and isinstance(body["message"], str)


def test_unknown_table() -> None:
    with pytest.raises(SqlError) as info:
        sql_to_plan("SELECT a FROM t JOIN nowhere n ON t.a = n.a", CATALOG)
    err = info.value
    assert err.code == "unknown_table"
    assert err.detail["table"] == "nowhere"
    assert err.detail["available"] == ["t", "u", "v"]
    assert (err.line, err.column) == (1, 22)


def test_unknown_column_lists_existing_ones() -> None:
    with pytest.raises(SqlError) as info:
        sql_to_plan("SELECT a\nFROM t\nWHERE zz > 1", CATALOG)
    err = info.value
    assert err.code == "unknown_column"
    assert err.detail["column"] == "zz"
    assert err.detail["available"] == ["t.a", "t.b", "t.c", "t.d", "t.e"]
    assert (err.line, err.column) == (3, 7)
    assert err.to_wire()["detail"]["available"][0] == "t.a"


def test_unknown_qualified_column() -> None:
    with pytest.raises(SqlError) as info:
        sql_to_plan("SELECT u.zz FROM t JOIN u ON t.a = u.a", CATALOG)
    assert info.value.code == "unknown_column"
    assert "u.f" in info.value.detail["available"]
    assert (info.value.line, info.value.column) == (1, 10)


def test_not_grouped_column() -> None:
    with pytest.raises(SqlError) as info:
        sql_to_plan("SELECT b, c FROM t GROUP BY b", CATALOG)
    assert info.value.code == "invalid_query"


# (SQL, the construct the error must name)
REFUSED: list[tuple[str, str]] = [
    ("SELECT a FROM t WHERE d > current_date() - interval '1' day", "INTERVAL"),
    ("SELECT a FROM t WHERE d + interval '1' day > date '2020-01-01'", "INTERVAL"),
    ("SELECT count(*) FROM t GROUP BY CUBE (a, b, c, d, e, a + 1, c + 1, e + 1, b || 'x', d + 1, a * 2)", "CUBE"),
    ("SELECT * FROM (SELECT b, c FROM t) PIVOT (sum(c) FOR b IN ('x', 'y'))", "PIVOT"),
    ("SELECT * FROM t UNPIVOT (val FOR col IN (a, c))", "UNPIVOT"),
    ("SELECT a FROM t TABLESAMPLE (100 ROWS) WHERE a > 1", "TABLESAMPLE by a row count"),
    ("SELECT t.a FROM t JOIN u TABLESAMPLE (BUCKET 1 OUT OF 4) ON t.a = u.a", "TABLESAMPLE BUCKET"),
    ("WITH RECURSIVE r AS (SELECT 1 AS n FROM t) SELECT n FROM r", "RECURSIVE"),
    ("SELECT a, p, x FROM t LATERAL VIEW posexplode(array(1, 2)) q AS p, x", "LATERAL VIEW POSEXPLODE"),
    ("SELECT 1", "without FROM"),
    ("SELECT a FROM t WHERE c > ALL (SELECT c FROM u)", "ALL"),
    ("SELECT a FROM t WHERE sum(c) > 1", "aggregate"),
    ("SELECT a, rank() OVER w FROM t WINDOW w AS (ORDER BY a)", "WINDOW"),
    ("SELECT DISTINCT b FROM t ORDER BY c", "DISTINCT"),
    ("INSERT INTO t SELECT * FROM t", "INSERT"),
    ("SELECT a FROM t WHERE b LIKE 'a!%' ESCAPE '!'", "ESCAPE"),
    # Was read as LIMIT 10 (the PERCENT dropped: a tenth of the rows became ten rows).
    ("SELECT a FROM t LIMIT 10 PERCENT", "LIMIT with PERCENT"),
    # Was refused as a "named window reference".
    ("SELECT first(a) IGNORE NULLS OVER (ORDER BY b) AS f FROM t", "IGNORE NULLS"),
]


@pytest.mark.parametrize(("sql", "construct"), REFUSED, ids=[r[1] for r in REFUSED])
def test_refuses_what_it_cannot_translate(sql: str, construct: str) -> None:
    with pytest.raises(SqlError) as info:
        sql_to_plan(sql, CATALOG)
    assert info.value.code in ("unsupported", "parse_error", "invalid_query")
    assert construct.lower() in info.value.message.lower(), info.value.message


def test_select_star_needs_catalog() -> None:
    with pytest.raises(SqlError) as info:
        sql_to_plan("SELECT * FROM t", None)
    assert info.value.code == "unsupported"


def test_without_catalog_columns_stay_as_written() -> None:
    plan = sql_to_plan("SELECT x.a FROM anything x WHERE x.b > 1", None)
    assert plan["input"]["input"] == {"op": "scan", "id": "n3", "table": "anything", "alias": "x", "filters": []}


def test_unknown_dialect() -> None:
    with pytest.raises(SqlError) as info:
        sql_to_plan("SELECT a FROM t", CATALOG, dialect="nope")
    assert info.value.code == "unknown_dialect"


def test_bad_plans_are_sql_errors() -> None:
    with pytest.raises(SqlError):
        plan_to_sql({"op": "teleport"})
    with pytest.raises(SqlError) as info:
        plan_to_sql({"op": "filter", "predicate": {"col": "q.z"}, "input": {"op": "scan", "table": "t", "alias": "x"}})
    assert info.value.code == "unknown_column"
