"""SQL text from a rendered tree: sqlglot's generator without the steps that cannot change such a tree.

Before writing, sqlglot's ``generate`` walks the whole tree for CTEs nested below the top, and a dialect's
generator may send a node through interpreted tree transforms (``sqlglot.transforms.preprocess``): Spark's
runs every SELECT through four of them, one of which (``any_to_exists``) walks the SELECT's whole subtree, so
nested derived tables are walked once per level. The renderer's trees hold nothing those steps rewrite:

- CTEs only at the top (``render_ctes.hoist_repeated`` puts them there), so the CTE walk moves nothing;
- no QUALIFY, no DISTINCT ON, no ``ANY``, no PIVOT, no GENERATE_SERIES table (the renderer writes none), and
  UNNEST only in dialects without LATERAL VIEW (``render_nodes.LATERAL_VIEW_DIALECTS``), so the transforms
  in ``_NO_OPS`` return their node unchanged.

``write_sql`` writes such a tree as sqlglot's ``generate`` does, minus those steps: the same text, in about
half the time (the 22 TPC-H answers, Spark). A node whose transforms include any other step goes through them
as before, and a dialect whose generator adds steps of its own (``ENSURE_BOOLS``, its own ``generate`` or
``preprocess``) is written by sqlglot's ``generate`` unchanged. tests/sql/test_write_sql.py compares the text
with sqlglot's own in every dialect sqlglot has.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sqlglot import exp, transforms
from sqlglot.errors import ErrorLevel, UnsupportedError, concat_messages
from sqlglot.generator import Generator

from service.sql.common import dialect_name, dialect_of
from service.sql.render_nodes import LATERAL_VIEW_DIALECTS

_sqlglot_logger = logging.getLogger("sqlglot")  # where sqlglot's own generate reports what it cannot write

#: the code of the handler ``transforms.preprocess`` makes: a dispatch entry with it runs transforms first
_PREPROCESS_CODE = getattr(transforms.preprocess([]), "__code__", None)


def _spark2_unalias_pivot() -> Callable[..., Any] | None:
    """Spark's FROM transform (a PIVOT's alias): private to sqlglot's Spark 2 generator, so looked up by name."""
    try:
        from sqlglot.generators import spark2
    except ImportError:
        return None
    found = getattr(spark2, "_unalias_pivot", None)
    return found if callable(found) else None


#: transforms that return every node of a rendered tree unchanged (see the module docstring)
_NO_OPS: tuple[Any, ...] = tuple(
    step
    for step in (
        transforms.eliminate_qualify,
        transforms.eliminate_distinct_on,
        transforms.any_to_exists,
        transforms.unnest_generate_series,
        _spark2_unalias_pivot(),
    )
    if step is not None
)
#: unchanged where the renderer writes LATERAL VIEW, not UNNEST (``render_nodes.LATERAL_VIEW_DIALECTS``)
_NO_OPS_WITH_LATERAL_VIEW: tuple[Any, ...] = (*_NO_OPS, transforms.unnest_to_explode)


def write_sql(query: exp.Expr, dialect: str) -> str:
    """``query.sql(dialect=dialect, pretty=True, copy=False)`` for a tree the renderer made for ``dialect``.

    >>> import sqlglot
    >>> print(write_sql(sqlglot.parse_one("SELECT a FROM t WHERE b > 1"), "spark"))
    SELECT
      a
    FROM t
    WHERE
      b > 1
    """
    generator = dialect_of(dialect).generator(pretty=True)
    dispatch = _fast_dispatch(type(generator), dialect_name(dialect) in LATERAL_VIEW_DIALECTS)
    if dispatch is None:
        return generator.generate(query, copy=False)
    generator._dispatch = dispatch
    generator.unsupported_messages = []
    text = generator.sql(query).strip().replace(generator.SENTINEL_LINE_BREAK, "\n")
    if generator.unsupported_level == ErrorLevel.WARN:
        for message in generator.unsupported_messages:
            _sqlglot_logger.warning(message)
    elif generator.unsupported_level == ErrorLevel.RAISE and generator.unsupported_messages:
        raise UnsupportedError(concat_messages(generator.unsupported_messages, generator.max_unsupported))
    return text


#: ``_fast_dispatch``'s answers, by generator class and ``lateral_view`` (a few dialects' worth)
_FAST: dict[tuple[type[Generator], bool], dict[type[exp.Expr], Any] | None] = {}


def _fast_dispatch(generator_class: type[Generator], lateral_view: bool) -> dict[type[exp.Expr], Any] | None:
    """The generator's handlers with each transforms-only-no-ops entry replaced by the node's own ``*_sql``
    method; None when the generator's ``generate`` does more than a rendered tree needs (or has no table)."""
    key = (generator_class, lateral_view)
    if key not in _FAST:
        _FAST[key] = _built_dispatch(generator_class, lateral_view)
    return _FAST[key]


def _built_dispatch(generator_class: type[Generator], lateral_view: bool) -> dict[type[exp.Expr], Any] | None:
    if (
        _PREPROCESS_CODE is None
        or generator_class.generate is not Generator.generate
        or generator_class.preprocess is not Generator.preprocess
    ):
        return None
    instance = generator_class()  # class settings are read off an instance: compiled, the class holds descriptors
    dispatch = getattr(instance, "_dispatch", None)
    if instance.ENSURE_BOOLS or not isinstance(dispatch, dict):
        return None
    no_ops = _NO_OPS_WITH_LATERAL_VIEW if lateral_view else _NO_OPS
    fast = dict(dispatch)
    for node_type, handler in dispatch.items():
        steps = _preprocess_steps(handler)
        method = getattr(generator_class, f"{node_type.key}_sql", None)
        if steps is not None and method is not None and all(any(step is n for n in no_ops) for step in steps):
            fast[node_type] = method
    return fast


def _preprocess_steps(handler: Any) -> list[Any] | None:
    """The transforms of a ``transforms.preprocess`` handler that writes with the node's own method; None for any
    other handler."""
    if getattr(handler, "__code__", None) is not _PREPROCESS_CODE or not handler.__closure__:
        return None
    cells = dict(zip(handler.__code__.co_freevars, (cell.cell_contents for cell in handler.__closure__), strict=True))
    steps = cells.get("transforms")
    if cells.get("generator") is not None or not isinstance(steps, list):
        return None
    return steps
