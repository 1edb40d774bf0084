"""GROUP BY with ROLLUP, CUBE and GROUPING SETS -> the keys and the grouping sets over them.

The wire's ``aggregate`` carries ``grouping_sets``: each set lists the indexes of
the ``group_by`` keys it groups by. Plain keys beside ROLLUP/CUBE/GROUPING SETS
join every set (SQL's cross product of the grouping elements).
"""

from __future__ import annotations

from itertools import combinations

from sqlglot import exp

from service.sql.parse import unsupported
from service.sql.plan_expr import same

#: A CUBE over n keys makes 2**n sets; past this many keys the request is refused rather than exploded.
MAX_CUBE_KEYS = 10
MAX_SETS = 4096


def grouping_keys(group: exp.Group | None) -> tuple[list[exp.Expr], list[tuple[int, ...]] | None]:
    """The distinct key expressions in order, and the grouping sets (None for a plain GROUP BY).

    >>> import sqlglot
    >>> keys, sets = grouping_keys(sqlglot.parse_one("SELECT 1 FROM t GROUP BY a, ROLLUP (b, c)").args["group"])
    >>> [k.sql() for k in keys], sets
    (['a', 'b', 'c'], [(0, 1, 2), (0, 1), (0,)])
    """
    if group is None:
        return [], None
    for arg in ("rollup", "cube", "grouping_sets", "totals"):
        if group.args.get(arg):
            raise unsupported(f"GROUP BY ... WITH {arg.upper().replace('_', ' ')}", group)
    keys: list[exp.Expr] = []
    plain: list[int] = []
    parts: list[list[tuple[int, ...]]] = []
    for g in group.expressions:
        if isinstance(g, exp.Rollup):  # ROLLUP ((a, b), c): [(a, b, c), (a, b), ()]
            items = tuple(_element(keys, x) for x in g.expressions)
            parts.append([_flat(items[:i]) for i in range(len(items), -1, -1)])
        elif isinstance(g, exp.Cube):
            items = tuple(_element(keys, x) for x in g.expressions)
            if len(items) > MAX_CUBE_KEYS:
                raise unsupported(f"CUBE over more than {MAX_CUBE_KEYS} keys", g)
            parts.append([_flat(c) for size in range(len(items), -1, -1) for c in combinations(items, size)])
        elif isinstance(g, exp.GroupingSets):
            parts.append([_element(keys, x) for x in g.expressions])
        else:
            plain.append(_index(keys, g))
    if not parts:
        return keys, None
    sets: list[tuple[int, ...]] = [tuple(plain)]
    for part in parts:
        sets = [a + b for a in sets for b in part]
        if len(sets) > MAX_SETS:
            raise unsupported(f"GROUP BY with more than {MAX_SETS} grouping sets", group)
    return keys, [tuple(sorted(set(s))) for s in sets]


def _index(keys: list[exp.Expr], e: exp.Expr) -> int:
    """``e``'s place among ``keys``, added at the end when new."""
    for i, k in enumerate(keys):
        if same(k, e):
            return i
    keys.append(e)
    return len(keys) - 1


def _element(keys: list[exp.Expr], x: exp.Expr) -> tuple[int, ...]:
    """One grouping element: ``(a, b)`` (a Tuple, ``()`` an empty one) groups its keys together; ``(a)`` is a Paren
    around one key."""
    members = x.expressions if isinstance(x, exp.Tuple) else [x.unnest() if isinstance(x, exp.Paren) else x]
    return tuple(_index(keys, m) for m in members)


def _flat(elements: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    return tuple(i for e in elements for i in e)
