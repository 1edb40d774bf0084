"""Type names sqlglot parses again and again, parsed once while the adapter works.

Spark's parser (sqlglot's Hive parser) asks every type it reads whether it is ``char`` or ``varchar``, to drop
their length (``DataType.is_type("char", "varchar")``), and ``is_type`` builds each name it is given with
``sqlglot.parse_one``: a new dialect, tokenizer and parser for one word, much of it interpreted Python. Every
date literal costs two such parses: 3.3% of TPC-H q15's SQL request's instructions and 2.6% of q01's, and
about as much of their time, timed as the latency benchmark times them. ``DataType.from_str``, which
``is_type`` calls, looks ``parse_one`` up in the ``sqlglot`` module each time, so this module puts a
function there that answers a type name parsed with the default
dialect from a memo, as a copy, while ``remembering`` is set (``service.sql.work.translating`` sets it: the
translation running in this thread or task, nobody else's). Every other call, and every call outside the
adapter, goes to sqlglot's own ``parse_one`` untouched, so sqlglot's behaviour for anyone else in the process
is its own. The answer is the same tree a parse makes (tests/sql/test_type_names.py compares them).
"""

from __future__ import annotations

import functools
from contextvars import ContextVar
from typing import Any

import sqlglot
from sqlglot import exp

#: set while the adapter translates or renders (``service.sql.work.translating``)
remembering: ContextVar[bool] = ContextVar("pushdown_remembering_type_names", default=False)

#: at most this many names are kept: sqlglot asks for a handful (``char``, ``varchar``, ``json``); a parse asked
#: for with any other text is answered by sqlglot's own, as before, once the memo is full
MAX_NAMES = 64

#: sqlglot's own ``parse_one`` (not a wrapper of it, should this module be imported again)
_sqlglot_parse_one: Any = getattr(sqlglot.parse_one, "__wrapped__", sqlglot.parse_one)

#: (text, the node type asked for, the error level) -> the parsed type
_parsed: dict[tuple[str, type, Any], exp.Expr] = {}


@functools.wraps(_sqlglot_parse_one)
def parse_one(sql: Any, read: Any = None, dialect: Any = None, into: Any = None, **opts: Any) -> Any:
    """sqlglot's ``parse_one``; within ``remembering``, a type name in the default dialect comes from the memo."""
    if (
        into is not None
        and read is None
        and dialect is None
        and type(sql) is str
        and isinstance(into, type)
        and issubclass(into, exp.DataType)
        and opts.keys() <= {"error_level"}
        and remembering.get()
    ):
        key = (sql, into, opts.get("error_level"))
        known = _parsed.get(key)
        if known is None:
            known = _sqlglot_parse_one(sql, into=into, **opts)
            if len(_parsed) >= MAX_NAMES:
                return known
            _parsed[key] = known
        # the caller may change or attach it: the kept one stays as parsed. ``copy()`` is ``copy.deepcopy``, which
        # calls this after an interpreted dispatch that costs twice the copy of one type
        return known.__deepcopy__({})
    return _sqlglot_parse_one(sql, read=read, dialect=dialect, into=into, **opts)


setattr(sqlglot, "parse_one", parse_one)  # noqa: B010 - mypy: sqlglot's parse_one is overloaded
