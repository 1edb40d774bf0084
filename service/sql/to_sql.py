"""Wire plan -> SQL text (Spark, DuckDB or any dialect sqlglot writes).

Nodes are folded into one SELECT block while SQL's clause order allows it
(FROM, WHERE, GROUP BY, HAVING, window, SELECT, DISTINCT, ORDER BY, LIMIT) and
wrapped as a derived table when it does not, so a filter the optimizer placed
below a join shows up as a filtered subquery at exactly that place.

A wire column ``q.c`` is resolved through a scope (``Col`` list) to the SQL
expression that reaches it from the current block, so derived tables may
rename columns without the plan knowing.
"""

from __future__ import annotations

import logging
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from service.sql.common import dialect_of, release
from service.sql.errors import SQLGLOT_SLIPS, SqlError
from service.sql.hints import place_hints
from service.sql.render_ctes import hoist_repeated
from service.sql.render_nodes import Renderer
from service.sql.work import translating

logger = logging.getLogger(__name__)


def plan_to_sql(
    plan: dict[str, Any], dialect: str = "spark", catalog: dict[str, Any] | None = None, source: str | None = None
) -> str:
    """Render a wire plan as pretty-printed SQL in ``dialect``.

    ``catalog`` is optional: with it, scans know every column (needed only when
    a plan's final output is a bare ``SELECT *`` over a wrapped join).
    ``source``: the SQL the plan came from (same dialect); its hints are put back.
    """
    try:
        dialect_of(dialect)
    except ValueError as err:
        raise SqlError("unknown_dialect", f"unknown SQL dialect {dialect!r}") from err
    if not isinstance(plan, dict) or "op" not in plan:
        raise SqlError("invalid_plan", "a plan is a node object with an 'op'")
    with translating():
        return _render(plan, dialect, catalog, source)


def _render(plan: dict[str, Any], dialect: str, catalog: dict[str, Any] | None, source: str | None) -> str:
    renderer = Renderer(plan, catalog)
    query = render_tree(plan, dialect, catalog, source, renderer)
    try:
        # not copied: the tree was built for this call only
        text = dialect_of(dialect).generate(query, copy=False, pretty=True)
    except SqlglotError as err:
        raise SqlError("invalid_plan", f"cannot write this plan as {dialect} SQL: {err}") from err
    except SQLGLOT_SLIPS as err:  # logged too, in case the tree at fault is one this adapter built wrong
        logger.warning("sqlglot could not write a %s tree", dialect, exc_info=True)
        raise SqlError("invalid_plan", f"cannot write this plan as {dialect} SQL: {err!r}") from err
    # freed now, not by the cyclic collector: what the renderer made and left out of the tree (blocks merged or
    # wrapped again, the expressions columns were copied from), then the tree
    tops = [made.root() for made in [*renderer.derived_tables, *renderer.made]]
    left_out = {id(top): top for top in tops if top is not query}
    release(*left_out.values(), query)
    return text


def render_tree(
    plan: dict[str, Any],
    dialect: str,
    catalog: dict[str, Any] | None = None,
    source: str | None = None,
    renderer: Renderer | None = None,
) -> exp.Expr:
    """The sqlglot tree ``plan_to_sql`` writes (repeated derived tables hoisted, ``source``'s hints put back);
    ``renderer``: a ``Renderer(plan, catalog)`` to render with (the caller reads what it made afterwards)."""
    renderer = renderer or Renderer(plan, catalog)
    renderer.dialect_spec = dialect
    query = renderer.finish(renderer.node(plan, []))
    if len(renderer.derived_tables) > 1:  # a repeat needs two derived tables
        query = hoist_repeated(query, renderer.derived_tables)
    if source is not None and "/*+" in source:
        try:
            original = sqlglot.parse_one(source, read=dialect_of(dialect))
        except SqlglotError:
            original = None
        if original is not None:
            query = place_hints(query, original)
    return query
