"""sqlglot's equality of two trees, decided by walking them side by side instead of hashing both.

``a == b`` on sqlglot nodes compares the hashes of the two whole trees, and a node's first hash walks all of
it. The translator compares each aggregate of a SELECT with the ones before it, and each sub-expression with
the block's aggregates and group keys: on TPC-H q01 the hashes cost 3% of a SQL request, where two different
calls usually differ a node or two down. ``same_tree`` gives the answer the hashes give (a hash collision
aside), stopping at the first difference.
"""

from __future__ import annotations

from typing import Any, Final

from sqlglot import exp

#: the class every sqlglot node derives from, read once (``exp.Expr`` is a lookup on the module at every use)
_NODE: Final = exp.Expr
#: whether a node class is hashed raw (``_hash_raw_args``), by class: read off the class once
_RAW: Final[dict[type, bool]] = {}


def same_tree(a: exp.Expr, b: exp.Expr) -> bool:
    """``a == b`` as sqlglot decides it, without hashing the trees.

    What sqlglot's hash reads: each node's key and its arguments, where None, False and an empty list count as
    absent; text compares without case, except in the classes hashed raw (names and literals among them).

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT SUM(a.x), SUM(a.x), SUM(a.y), SUM(A.X), FOO(1), foo(1) FROM a")
    >>> x, x_again, y, x_upper, foo, foo_lower = q.expressions
    >>> same_tree(x, x_again), same_tree(x, y), same_tree(x, x_upper), same_tree(foo, foo_lower)
    (True, False, False, True)
    >>> all(same_tree(m, n) == (m == n) for m in q.expressions for n in q.expressions)
    True
    """
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    pairs: list[tuple[Any, Any]] = [(a, b)]
    while pairs:
        x, y = pairs.pop()
        if x is y:
            continue
        kind = type(x)
        if kind is not type(y):
            # sqlglot hashes a node's key, which two classes could share: its own answer for the rare case
            return bool(x.key == y.key and a == b)
        raw = _RAW.get(kind)
        if raw is None:
            raw = _RAW[kind] = bool(kind._hash_raw_args)
        if raw:
            if not _same_raw_args(x.args, y.args):
                return False
        elif not _same_args(x.args, y.args, pairs):
            return False
    return True


def present(value: Any) -> bool:
    """Whether sqlglot's equality reads an argument: None, False and an empty list count as absent (the
    translator's ``func_forms`` reads arguments so too)."""
    return value is not None and value is not False and not (type(value) is list and not value)


def _present_count(args: dict[str, Any]) -> int:
    count = 0
    for value in args.values():
        if present(value):
            count += 1
    return count


def _same_args(xs: dict[str, Any], ys: dict[str, Any], pairs: list[tuple[Any, Any]]) -> bool:
    """The arguments of two nodes of one class agree, child nodes queued on ``pairs`` to compare."""
    count = 0
    for key, x in xs.items():
        if not present(x):
            continue
        count += 1
        y = ys.get(key)
        if not present(y):
            return False
        if type(x) is list or type(y) is list:
            # hashed item by item (a lone value as one item); a None or False item is hashed as a blank
            x_items = x if type(x) is list else [x]
            y_items = y if type(y) is list else [y]
            if len(x_items) != len(y_items):
                return False
            for i in range(len(x_items)):
                x_item, y_item = x_items[i], y_items[i]
                x_blank = x_item is None or x_item is False
                if x_blank or y_item is None or y_item is False:
                    if not x_blank or not (y_item is None or y_item is False):
                        return False
                elif not _same_value(x_item, y_item, pairs):
                    return False
        elif not _same_value(x, y, pairs):
            return False
    return count == _present_count(ys)


def _same_value(x: Any, y: Any, pairs: list[tuple[Any, Any]]) -> bool:
    """One argument value each: nodes are queued, text compared without case, anything else by equality."""
    if type(x) is str:
        return type(y) is str and (x == y or x.lower() == y.lower())
    if isinstance(x, _NODE):
        if not isinstance(y, _NODE):
            return False
        pairs.append((x, y))
        return True
    return type(y) is not str and not isinstance(y, _NODE) and bool(x == y)


def _same_raw_args(xs: dict[str, Any], ys: dict[str, Any]) -> bool:
    """Arguments hashed as they are (a literal's text keeps its case): every truthy one, lists as tuples."""
    count = 0
    for key, x in xs.items():
        if not x:
            continue
        count += 1
        y = ys.get(key)
        if not y:
            return False
        if type(x) is list or type(y) is list:
            if type(x) is not list or type(y) is not list or tuple(x) != tuple(y):
                return False
        elif x != y:
            return False
    for value in ys.values():
        if value:
            count -= 1
    return count == 0
