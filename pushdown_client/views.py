"""Temporary views written in SQL, inlined into the query as common table expressions.

A pipeline that defines ``CREATE TEMP VIEW checked AS SELECT * FROM orders WHERE expensive(o_comment)`` and then
joins ``checked`` to a selective dimension writes its expensive filter early, inside the view. Spark expands the
view when it analyzes the query; the service, which sees only the query's text, would see ``checked`` as a table
and could never place the filter. So the runner sends the query with each temporary view that has SQL text
(Spark keeps it: ``View.desc().viewText``) inlined as a CTE of the same name, views inside views first. The
meaning is the same: a CTE of a view's text is what Spark expands the view to (the view's captured SQL settings
aside, which the session normally shares). Views made from DataFrames have no text and are left as they are, as
are names a CTE of the query already defines and qualified names (``global_temp.v``, ``db.v``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = logging.getLogger(__name__)

#: views inside views are followed at most this deep (a cycle cannot exist, Spark refuses it; this bounds the work)
MAX_DEPTH = 16


def view_text(spark: SparkSession, name: str) -> str | None:
    """The SQL text of temporary view ``name`` in this session; None for a table, a view made from a DataFrame,
    or a name that is not a temporary view."""
    try:
        found = spark._jsparkSession.sessionState().catalog().getTempView(name)
        if not found.isDefined():
            return None
        text = found.get().desc().viewText()
        return str(text.get()) if text.isDefined() else None
    except Exception:  # noqa: BLE001 - no JVM handle (Spark Connect) or another Spark: nothing to inline
        return None


def inline_temp_views(spark: SparkSession, sql: str) -> str:
    """``sql`` with every temporary view it reads that has SQL text defined as a CTE in front; ``sql`` itself when
    it reads none (or cannot be parsed: Spark then reports what is wrong, as it would have)."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.ParseError:
        return sql
    own = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    texts: dict[str, exp.Expr] = {}
    order: list[str] = []

    def visit(node: exp.Expr, depth: int) -> None:
        for table in node.find_all(exp.Table):
            name = table.name.lower()
            if table.args.get("db") or not name or name in own or name in texts or depth > MAX_DEPTH:
                continue
            text = view_text(spark, table.name)
            if text is None:
                continue
            try:
                body = sqlglot.parse_one(text, read="spark")
            except sqlglot.errors.ParseError:
                logger.info("temporary view %s not inlined: its text does not parse", table.name)
                continue
            texts[name] = body
            visit(body, depth + 1)  # views it reads go before it
            order.append(name)

    visit(tree, 0)
    if not order:
        return sql
    ctes = [exp.CTE(this=texts[name], alias=exp.TableAlias(this=exp.to_identifier(name))) for name in order]
    existing = tree.args.get("with_")
    if existing is not None:
        existing.set("expressions", ctes + list(existing.expressions))
    else:
        tree.set("with_", exp.With(expressions=ctes))
    return tree.sql(dialect="spark")
