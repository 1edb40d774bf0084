"""sqlglot's equality of two trees, decided by walking them side by side instead of hashing both.

``a == b`` on sqlglot nodes compares the hashes of the two whole trees, and a node's first hash walks all of
it. The translator compares each aggregate of a SELECT with the ones before it, and each sub-expression with
the block's aggregates and group keys: on TPC-H q01 the hashes cost 3% of a SQL request, where two different
calls usually differ a node or two down. ``same_tree`` gives the answer the hashes give (a hash collision
aside), stopping at the first difference.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp


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
        if type(x) is not type(y):
            # sqlglot hashes a node's key, which two classes could share: its own answer for the rare case
            return bool(x.key == y.key and a == b)
        known_x, known_y = x._hash, y._hash
        if known_x is not None and known_y is not None:  # both hashed already: what sqlglot compares
            if known_x != known_y:
                return False
            continue
        if x._hash_raw_args:
            if not _same_raw_args(x.args, y.args):
                return False
            continue
        if not _same_args(x.args, y.args, pairs):
            return False
    return True


def _present(value: Any) -> bool:
    """Whether sqlglot's hash reads an argument: None, False and an empty list count as absent."""
    return value is not None and value is not False and not (type(value) is list and not value)


def _same_args(xs: dict[str, Any], ys: dict[str, Any], pairs: list[tuple[Any, Any]]) -> bool:
    """The arguments of two nodes of one class agree, child nodes queued on ``pairs`` to compare."""
    count = 0
    for key, x in xs.items():
        if not _present(x):
            continue
        count += 1
        y = ys.get(key)
        if not _present(y):
            return False
        if type(x) is list or type(y) is list:
            # hashed item by item (a lone value as one item); a None or False item is hashed as a blank
            x_items = x if type(x) is list else [x]
            y_items = y if type(y) is list else [y]
            if len(x_items) != len(y_items):
                return False
            for x_item, y_item in zip(x_items, y_items, strict=True):
                if x_item is None or x_item is False or y_item is None or y_item is False:
                    if not (x_item is None or x_item is False) or not (y_item is None or y_item is False):
                        return False
                elif not _same_value(x_item, y_item, pairs):
                    return False
        elif not _same_value(x, y, pairs):
            return False
    return count == sum(1 for y in ys.values() if _present(y))


def _same_value(x: Any, y: Any, pairs: list[tuple[Any, Any]]) -> bool:
    """One argument value each: nodes are queued, names compared without case, anything else by equality."""
    if isinstance(x, exp.Expr):
        if not isinstance(y, exp.Expr):
            return False
        pairs.append((x, y))
        return True
    if type(x) is str:
        return type(y) is str and x.lower() == y.lower()
    return type(y) is not str and not isinstance(y, exp.Expr) and bool(x == y)


def _same_raw_args(xs: dict[str, Any], ys: dict[str, Any]) -> bool:
    """Arguments hashed as they are (a literal's text keeps its case): every truthy one, lists as tuples."""
    x_keys = [k for k, v in xs.items() if v]
    if len(x_keys) != sum(1 for v in ys.values() if v):
        return False
    for key in x_keys:
        x, y = xs[key], ys.get(key)
        if not y:
            return False
        if type(x) is list or type(y) is list:
            if type(x) is not list or type(y) is not list or tuple(x) != tuple(y):
                return False
        elif x != y:
            return False
    return True
