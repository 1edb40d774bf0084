"""``costmodel.rounding.rounded`` is Python's ``round(x, digits)``, bit for bit: the answer's numbers must not
change because they are rounded faster. Random values at every magnitude, values just off a tie, ties,
signed zeros and values that are not finite."""

from __future__ import annotations

import math
import random
import struct

import pytest

from costmodel.rounding import rounded


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _values() -> list[float]:
    rng = random.Random(19)
    edges = [0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 5e-7, 1.5e-6, -5e-7, 1.2345665, 0.1234565, 123.45675, 1e-9, -1e-9]
    edges += [2.0**52, 2.0**52 + 1, 1e300, -1e300, math.inf, -math.inf, 5e-324]
    spread = [10 ** rng.uniform(-12, 17) * rng.choice((1, -1)) for _ in range(40_000)]
    plain = [rng.uniform(-1e4, 1e4) for _ in range(20_000)]
    offsets = (5e-7, 5e-5, 5e-3, 0.5)
    near_ties = [round(rng.uniform(0, 1000), rng.randint(0, 7)) + rng.choice(offsets) for _ in range(20_000)]
    # past 2**31 once scaled (a plan's costs): split into integer and fraction, and near their ties too
    large = [10 ** rng.uniform(9.6, 15.7) * rng.choice((1, -1)) for _ in range(20_000)]
    large_ties = [math.floor(rng.uniform(5e9, 4e15)) + round(rng.random(), rng.randint(0, 6)) for _ in range(20_000)]
    large_ties += [t + rng.choice((1, -1)) * 5 * 10.0 ** -rng.randint(1, 7) for t in large_ties[:5_000]]
    middle_ties = [round(rng.uniform(2e3, 5e9), rng.randint(0, 7)) + rng.choice(offsets) for _ in range(20_000)]
    return edges + spread + plain + near_ties + large + large_ties + middle_ties


@pytest.mark.parametrize("digits", [0, 1, 4, 6])
def test_rounded_is_round_bit_for_bit(digits: int) -> None:
    differ = [x for x in _values() if _bits(rounded(x, digits)) != _bits(round(x, digits))]
    assert differ == []


def test_not_a_number_stays_not_a_number() -> None:
    assert math.isnan(rounded(math.nan, 6))


def test_a_value_rounding_to_zero_keeps_its_sign() -> None:
    assert _bits(rounded(-1e-9, 6)) == _bits(-0.0) and _bits(rounded(1e-9, 6)) == _bits(0.0)
