"""``may_hold_null`` decides which JSON is walked for NaN and infinities (orjson writes them as ``null``): it must
never miss one, wherever it sits, and it should not send JSON whose only ``null`` is in a key or a text."""

from __future__ import annotations

import random
from typing import Any

import orjson

from costmodel.finite import finite, may_hold_null, nulls_under

NAMES = ["a", "null", "null_count", "is_null", "nullable"]
#: texts in which ``null`` follows what a value follows: a false alarm, allowed
ALARMS = ["x:null", "[null", ",null"]
ODD = [float("nan"), float("inf"), float("-inf")]


def _value(rng: random.Random, depth: int, odd: float, names: list[str] = NAMES) -> Any:
    """A random JSON-like value; ``odd`` (a probability) puts NaN or an infinity in place of a number."""
    roll = rng.random()
    if depth <= 0 or roll < 0.4:
        if rng.random() < odd:
            return rng.choice(ODD)
        return rng.choice([1, 2.5, -0.0, "null", "is_null", "x", True, False, 10**6])
    if roll < 0.7:
        return [_value(rng, depth - 1, odd, names) for _ in range(rng.randrange(0, 4))]
    return {rng.choice(names) + str(i): _value(rng, depth - 1, odd, names) for i in range(rng.randrange(0, 4))}


def test_no_nan_or_infinity_is_missed_wherever_it_sits() -> None:
    rng = random.Random(20261127)
    walked = 0
    for _ in range(3000):
        value = _value(rng, 5, 0.05, NAMES + ALARMS)
        if not finite(value):
            walked += 1
            assert may_hold_null(orjson.dumps(value)), value
    assert walked > 200  # the generator put non-finite numbers in many of them, at every depth


def test_null_only_in_keys_and_texts_is_not_walked() -> None:
    rng = random.Random(7)
    spelled = 0
    for _ in range(1000):
        written = orjson.dumps(_value(rng, 5, 0.0))
        spelled += b"null" in written
        assert not may_hold_null(written), written
    assert spelled > 300  # keys and texts spelled "null" in many of them
    catalog = {"tables": {"t": {"column_stats": {"a": {"null_count": 0, "ndv": 3}}}}}
    assert not may_hold_null(orjson.dumps(catalog))
    assert may_hold_null(orjson.dumps({"a": None})) and may_hold_null(orjson.dumps([None]))
    assert may_hold_null(orjson.dumps(None)) and may_hold_null(orjson.dumps(float("nan")))
    assert may_hold_null(orjson.dumps({"x:null": 1}))  # a false alarm: walked, and found finite


def _odd_elsewhere(value: Any, keys: set[str]) -> bool:
    """Whether a NaN or an infinity in ``value`` stands anywhere but right under one of ``keys``."""
    stack: list[tuple[Any, str | None]] = [(value, None)]
    while stack:
        item, key = stack.pop()
        if isinstance(item, float) and item in ODD or item != item:
            if key not in keys:
                return True
        elif isinstance(item, dict):
            stack.extend((v, k) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, None) for v in item)
    return False


def test_nulls_under_never_hides_a_nan_outside_its_keys() -> None:
    """``nulls_under`` spares the walk only where every ``null`` stands under the keys given: a NaN or an
    infinity anywhere else (in a list, under another key) is always walked, whatever the texts spell."""
    rng = random.Random(20261129)
    keys = {"a0", "null1"}
    spelled = tuple(f'"{k}"'.encode() for k in keys)
    caught = 0
    for _ in range(3000):
        value = _value(rng, 5, 0.05, NAMES + ALARMS)
        written = orjson.dumps(value)
        if _odd_elsewhere(value, keys):
            caught += 1
            assert not nulls_under(written, spelled), value
    assert caught > 200
    assert nulls_under(orjson.dumps({"a0": None, "b": [1, "x:null"]}), spelled) is False  # a text: a false alarm
    assert nulls_under(orjson.dumps([{"a0": None}, {"null1": None}]), spelled)
