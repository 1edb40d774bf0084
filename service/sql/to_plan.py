"""SQL text -> wire plan: a naive, faithful translation.

The cost model decides where filters go, so this package must not move any:
WHERE becomes one ``filter`` right above the FROM/JOIN tree, join conditions
stay in the join's ``on``, subqueries stay subquery expressions. Anything that
cannot be expressed in the wire format without changing meaning is refused
with a ``SqlError`` naming the construct, never approximated.

Reading and qualifying live in ``parse``; queries and FROM in ``plan_query``;
SELECT blocks in ``plan_select``; expressions in ``plan_expr``.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from costmodel.wire.nodes import numbered
from service.sql.bind import Unbindable, bind, can_bind
from service.sql.common import dialect_name, release
from service.sql.hints import strip_hints
from service.sql.names import align, first_select, item_names, name_inner_outputs, spellings
from service.sql.parse import Tables, check_tables, parse_query, qualify_query
from service.sql.plan_expr import Node
from service.sql.plan_select import SelectBuilder
from service.sql.survey import survey
from service.sql.work import translating


def sql_to_plan(
    sql: str, catalog: dict[str, Any] | None, dialect: str = "spark", parsed: exp.Query | None = None
) -> Node:
    """Translate one SQL query into a wire plan (see docs/sql-adapter.md).

    ``parsed``: ``sql`` as ``parse_query`` read it in ``dialect`` (the service reads it once to find its tables),
    translated instead of parsing the text again; translation changes it, so it serves one call.
    """
    with translating():
        return _translate(sql, catalog, dialect, parsed)


def _translate(sql: str, catalog: dict[str, Any] | None, dialect: str, parsed: exp.Query | None) -> Node:
    tables = Tables(catalog)
    if can_bind(dialect, tables):
        try:
            return _translate_with(sql, tables, dialect, fast=True, parsed=parsed)
        except Unbindable:
            parsed = None  # changed by the attempt: parse again
            # a form only sqlglot's qualify handles (or an error it reports): start again on that path
    return _translate_with(sql, tables, dialect, fast=False, parsed=parsed)


def _translate_with(sql: str, tables: Tables, dialect: str, fast: bool, parsed: exp.Query | None = None) -> Node:
    """One translation; ``fast`` binds names in one pass (``bind``) instead of sqlglot's qualify."""
    stmt = parsed if parsed is not None else parse_query(sql, dialect)
    # One walk: long AND/OR/UNION chains become log-depth trees (nothing below is quadratic or deep),
    # and the nodes the steps below read are listed.
    found = survey(stmt)
    strip_hints(found.selects)  # put back by plan_to_sql(source=...): they carry no meaning for the plan
    check_tables(found.tables, found.cte_names, tables)
    top = first_select(stmt)
    spelling = spellings(found.aliases, [c for _, cols in tables.by_lower.values() for c, _ in cols])
    original = (list(top.expressions), item_names(top, dialect, spelling)) if top is not None else None
    found.identifiers += name_inner_outputs(found.selects, top, dialect, spelling)
    if fast and found.case_sensitive:
        raise Unbindable("case-sensitive names")
    qualified = bind(stmt, tables, dialect, found.identifiers) if fast else qualify_query(stmt, tables, dialect, sql)
    builder = SelectBuilder(tables)
    builder.dialect = dialect_name(dialect)
    builder.has_aggregates, builder.has_windows = found.aggregates, found.windows
    top_after = first_select(qualified)
    if original is not None and top_after is not None:
        names = align(original[1], original[0], list(top_after.expressions), spelling)
        builder.top_names = (top_after, names) if names is not None else None
    plan = numbered(builder.query(qualified, {}), subqueries=builder.subqueries > 0)
    release(stmt, qualified if qualified is not stmt else None)  # freed now, not by the cyclic collector
    return plan
