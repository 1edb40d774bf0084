"""Whether a JSON-like value holds only finite numbers: JSON cannot carry a NaN or an infinity, and orjson
writes one as ``null``, so a catalog or answer whose JSON holds a ``null`` value is walked to tell which it was.

The service walks every answer whose JSON holds a ``null`` value (``may_hold_null``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any


def finite(value: Any) -> bool:
    """Whether every float in ``value`` (dicts, lists and tuples, walked without recursion) is finite.

    >>> finite({"a": [1.0, {"b": 2, "c": None}], "d": ("x",)}), finite({"a": [float("inf")]})
    (True, False)
    """
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        items: Iterable[Any]
        if kind is dict:
            mapping: dict[Any, Any] = item
            items = mapping.values()
        else:
            items = item if kind is list or kind is tuple else (item,)
        for inner in items:  # strings and ints, most of a document, are passed over without a push
            kind = type(inner)
            if kind is str or kind is int or kind is bool or inner is None:
                continue
            if kind is float or isinstance(inner, float):  # float subclasses (numpy's) too
                number: float = inner
                if math.isinf(number) or math.isnan(number):
                    return False
            elif kind is dict or kind is list or kind is tuple:
                stack.append(inner)
    return True


def may_hold_null(written: bytes) -> bool:
    """Whether compact JSON (orjson's: no spaces) may hold a ``null`` value, so its value must be walked with
    ``finite``: the document itself, or ``null`` right after ``:``, ``[`` or ``,``, where every value starts.
    ``null`` in a key or a text (``"null_count"``, ``"is_null"``) is none: a catalog with null counts and a
    plan with ``IS NULL`` are not walked on every request. A text holding ``:null`` is a false alarm, never a
    miss.

    >>> may_hold_null(b'{"null_count":0,"call":"is_null"}'), may_hold_null(b'{"a":[1,null]}'), may_hold_null(b"null")
    (False, True, True)
    """
    return written.startswith(b"null") or b":null" in written or b",null" in written or b"[null" in written


def nulls_under(written: bytes, keys: tuple[bytes, ...]) -> bool:
    """Whether every ``null`` value in compact JSON (orjson's) stands under one of ``keys`` (each spelled with its
    quotes, ``b'"name"'``): where those keys never hold a number, none of the ``null`` values is a NaN or an
    infinity, and the value needs no walk with ``finite``. A quote inside a text is escaped, so a key's spelling
    is never found inside one; ``null`` in a text after ``:``, ``[`` or ``,`` counts as a value of its own, a
    false alarm (the value is walked), never a miss.

    >>> nulls_under(b'{"a":null,"b":[1]}', (b'"a"',)), nulls_under(b'{"a":null,"b":null}', (b'"a"',))
    (True, False)
    >>> nulls_under(b'[1,null]', (b'"a"',)), nulls_under(b"null", (b'"a"',))
    (False, False)
    """
    if written.startswith(b"null") or b",null" in written or b"[null" in written:
        return False
    # every ``:null`` right after one of the keys: one pass over the text, not one per key
    return all(before.endswith(keys) for before in written.split(b":null")[:-1])
