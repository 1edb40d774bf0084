"""``rounded(x, digits)``: Python's ``round(x, digits)`` of a float, bit for bit, without its string round trip.

CPython rounds a float to ``digits`` decimals by writing the correctly rounded decimal and reading it back,
about 2,000 instructions; the answer's numbers (cost tables, the decision log) are rounded a few hundred times
per plan. When ``x * 10**digits`` is not within its rounding error of a half, the integer nearest to it is
the decimal's digits, and dividing that integer by ``10**digits`` (one correctly rounded division of two
exact doubles) is the double the decimal reads back as. A large value (its scaled value past 2**31, as a
plan's cost often is, where the margin below would call nearly every value a tie) is split into its integer
part and its fraction, each exact: the fraction is rounded as above, and the decimal's digits, an integer,
divided by ``10**digits`` (as doubles while both are exact, else as Python integers: either way one correctly
rounded division) is again the double the decimal reads back as. A value past 2**52 is an integer already and
comes back as it is. A value near a tie, or one that is not finite, goes to ``round`` itself.
tests/costmodel/test_rounding.py holds the two to the same bits.

    >>> rounded(0.1234565, 6) == round(0.1234565, 6), rounded(2.5, 0), rounded(-1e-9, 6)
    (True, 2.0, -0.0)
"""

from __future__ import annotations

import math
import operator
from typing import Final

#: at and past this a double is an integer (its spacing is 1 or more)
_EXACT: Final = 2.0**52
#: past this the scaled value's rounding error, times the margin's slack, would reach a half: such a value is
#: split into its integer part and fraction instead (``_rounded_large``)
_DIRECT: Final = 2.0**31
#: how far from a half the scaled value must be to trust its nearest integer: many times its rounding error
_MARGIN: Final = 1e-12
#: ``10.0 ** digits``, each exact
_SCALES: Final[tuple[float, ...]] = (1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0, 1000000.0)
#: the same as integers, for the division of a large value's digits (``_rounded_large``)
_INT_SCALES: Final[tuple[int, ...]] = (1, 10, 100, 1000, 10000, 100000, 1000000)


def rounded(x: float, digits: int) -> float:
    """``round(x, digits)`` for ``0 <= digits <= 6``: the same double."""
    scale = _SCALES[digits]
    scaled = x * scale
    if not -_DIRECT < scaled < _DIRECT:  # large, infinite, or NaN (every comparison with NaN is false)
        return _rounded_large(x, digits)
    nearest = math.floor(scaled + 0.5)
    if _near_tie(scaled, nearest):  # round decides
        return round(x, digits)
    if nearest == 0:
        return math.copysign(0.0, x)  # round keeps the sign of a value that rounds to zero
    return nearest / scale


def _near_tie(scaled: float, nearest: int) -> bool:
    """Whether ``scaled`` may lie within its rounding error of a half, so that ``nearest`` cannot be trusted."""
    return abs(abs(scaled - nearest) - 0.5) <= _MARGIN * (abs(scaled) + 1.0)


def _rounded_large(x: float, digits: int) -> float:
    """``rounded`` of an ``x`` whose scaled value is past 2**31 (a plan's costs often are): its fraction is rounded
    as ``rounded`` rounds, and the decimal's digits, an integer, are divided by ``10**digits``; ``round``
    only for a value not finite or a fraction near a tie.

    >>> _rounded_large(612345678901.23456, 4) == round(612345678901.23456, 4), _rounded_large(2.0**60, 6) == 2.0**60
    (True, True)
    """
    if math.isinf(x) or math.isnan(x):
        return round(x, digits)
    if not -_EXACT < x < _EXACT:
        return x  # an integer already: the decimal is the value itself
    whole = math.floor(x)
    fraction = x - whole  # exact: past 1, x and its floor are within a factor of two of each other
    scaled = fraction * _SCALES[digits]  # below 10**6: its rounding error is far inside the margin
    nearest = math.floor(scaled + 0.5)
    if _near_tie(scaled, nearest):
        return round(x, digits)
    decimal = whole * _INT_SCALES[digits] + nearest  # the decimal's digits: x rounded, times 10**digits
    if -_EXACT < decimal < _EXACT:  # exact as a double, as 10**digits is: one correctly rounded division
        return float(decimal) / _SCALES[digits]
    # divided as Python's integers are, correctly rounded
    return float(operator.truediv(decimal, _INT_SCALES[digits]))
