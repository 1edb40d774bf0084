"""Join types and what each allows, in one table: the only place that lists join types' sides.

Sides are 0 (left input) and 1 (right input).

    >>> JOIN_TYPES["left"].where_sides, JOIN_TYPES["left"].null_supplied
    ((0,), (1,))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class JoinType:
    name: str
    #: sides a WHERE predicate on the join's output may enter (every row that side loses is removed anyway)
    where_sides: tuple[int, ...]
    #: sides a one-side conjunct of the ON condition may enter (rows it drops were never going to match)
    on_sides: tuple[int, ...]
    #: sides a predicate inferred across the join keys may go to (a side whose rows may be dropped)
    infer_sides: tuple[int, ...]
    #: sides whose rows the join pads with NULLs when they find no partner
    null_supplied: tuple[int, ...]
    #: sides whose rows (and so their column equalities) appear unchanged in the output
    passes_rows_of: tuple[int, ...]
    #: every output row satisfies the join's own key equalities
    keys_hold_on_output: bool
    #: the output has the right side's columns too (not a semi or anti join)
    emits_right: bool
    #: the right input may be read through an index on its join key (Dolt's IndexedJoin)
    index_join: bool


JOIN_TYPES: Final[dict[str, JoinType]] = {
    t.name: t
    for t in (
        JoinType("inner", (0, 1), (0, 1), (0, 1), (), (0, 1), True, True, True),
        JoinType("cross", (0, 1), (0, 1), (0, 1), (), (0, 1), True, True, False),
        JoinType("left", (0,), (1,), (), (1,), (0,), False, True, True),
        JoinType("right", (1,), (0,), (), (0,), (1,), False, True, False),
        JoinType("full", (), (), (), (0, 1), (), False, True, False),
        JoinType("semi", (0,), (0, 1), (0, 1), (), (0,), False, False, True),
        JoinType("anti", (0,), (1,), (1,), (), (0,), False, False, True),
    )
}
