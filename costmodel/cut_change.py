"""What changed between two cuts of one predicate's region: the positions that left and the ones that came.

Placement costs each candidate cut as a move from the one costed before it. In a union's fork the candidates
are lists of thousands of positions (one per branch) that differ in one or two: diffing them whole, per
candidate, made a 3,000-branch union quadratic. The lists share a long prefix and suffix, found here with
slice comparisons done in C (positions compare by identity); only the middles are diffed.

    >>> a, b, c, d = (object() for _ in range(4))
    >>> gone, came = cut_change([a, b, c], [a, d, c])
    >>> gone == [b] and came == [d]
    True
    >>> cut_change([a, b, c, d], [a, c, d, b]) == ([], [])
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def _common_prefix(a: Sequence[T], b: Sequence[T], limit: int) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (at most ``limit``), by binary search."""
    if a[:limit] == b[:limit]:
        return limit
    if limit > 1 and a[: limit - 1] == b[: limit - 1]:  # the usual: the same cut but for the position tried
        return limit - 1
    low, high = 0, limit  # a[:low] == b[:low], a[:high] != b[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle
    return low


def _common_suffix(a: Sequence[T], b: Sequence[T], limit: int) -> int:
    """The length of the longest common suffix of ``a`` and ``b`` (at most ``limit``), by binary search."""
    n, m = len(a), len(b)
    if a[n - limit :] == b[m - limit :]:
        return limit
    low, high = 0, limit
    while high - low > 1:
        middle = (low + high) // 2
        if a[n - middle :] == b[m - middle :]:
            low = middle
        else:
            high = middle
    return low


def cut_change(before: Sequence[T], after: Sequence[T]) -> tuple[list[T], list[T]]:
    """(left, came): the items of ``before`` not in ``after`` and those of ``after`` not in ``before``, by
    identity, each in its list's order. Cuts hold each position once, so trimming what the two lists share at
    both ends leaves every difference in the middles."""
    limit = min(len(before), len(after))
    prefix = _common_prefix(before, after, limit)
    old, new = list(before[prefix:]), list(after[prefix:])
    suffix = _common_suffix(old, new, min(len(old), len(new)))
    if suffix:
        old, new = old[: len(old) - suffix], new[: len(new) - suffix]
    elif old and new:  # each ends with the position being tried: what precedes it may still be shared
        shared = _common_suffix(old[:-1], new[:-1], min(len(old), len(new)) - 1)
        old = old[: len(old) - 1 - shared] + old[-1:]
        new = new[: len(new) - 1 - shared] + new[-1:]
    old_ids, new_ids = {id(p) for p in old}, {id(p) for p in new}
    return [x for x in old if id(x) not in new_ids], [x for x in new if id(x) not in old_ids]
