"""Parse untrusted JSON without letting it crash the process.

``json.loads`` recurses once per nesting level and raises ``RecursionError``
(or, with a raised recursion limit, overflows the C stack) on input such as
10,000 nested arrays. So the nesting depth is measured on the raw bytes first,
with string contents skipped, and only input within the limit is decoded.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from service.errors import InputError

# A JSON string, escapes included; the unrolled form keeps the regex engine in tight loops.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_OPEN = (ord("["), ord("{"))


def nesting_depth(raw: bytes) -> int:
    """Deepest nesting of arrays and objects in ``raw`` (``[]`` is 1), brackets inside strings ignored.

    Runs in C and numpy, linear in the input. On malformed input (an unterminated
    string) the answer may be too high, never too low.
    """
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKET)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where(np.isin(codes, _OPEN), 1, -1).astype(np.int32)
    return max(int(steps.cumsum().max()), 0)


def check_depth(raw: bytes, limit: int, path: str = "$") -> None:
    """Refuse ``raw`` if it nests deeper than ``limit``; cheap when it obviously cannot."""
    if raw.count(b"[") + raw.count(b"{") <= limit:  # an upper bound of the depth
        return
    depth = nesting_depth(raw)
    if depth > limit:
        raise InputError(
            "too_deep",
            f"JSON nests {depth} levels deep, the limit is {limit}",
            path,
            {"depth": depth, "limit": limit},
        )


def _reject_constant(name: str) -> Any:
    raise InputError("malformed_json", f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        # It would come back as Infinity, which is not JSON either.
        raise InputError("invalid_number", f"number {text[:40]} is out of range")
    return value


def _position(raw: bytes, offset: int) -> dict[str, int]:
    line = raw.count(b"\n", 0, offset) + 1
    column = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
    return {"line": line, "column": column, "position": offset}


def parse_json(raw: bytes, max_depth: int) -> Any:
    """Decode a UTF-8 JSON document, or raise ``InputError`` saying what is wrong and where."""
    check_depth(raw, max_depth)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("malformed_json", "body is not valid UTF-8", "$", _position(raw, exc.start)) from None
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        detail = {"line": exc.lineno, "column": exc.colno, "position": exc.pos}
        raise InputError("malformed_json", f"malformed JSON: {exc.msg}", "$", detail) from None
    except RecursionError:  # a backstop: check_depth has already refused anything this deep
        raise InputError("too_deep", "JSON nests too deep", "$", {"limit": max_depth}) from None
    except ValueError:  # an integer with more digits than Python converts (4300 by default)
        raise InputError("invalid_number", "a number has too many digits", "$") from None
