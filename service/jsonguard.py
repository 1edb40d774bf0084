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
import orjson

from costmodel.deadline import check_deadline
from service import deep_json
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


def _orjson_depth_limit(probe: int = 1024) -> int | None:
    """The deepest nesting orjson reads, measured once: orjson 3.10 and later refuse a document deeper than 1024
    levels, so a request it reads nests no deeper than that. None if this orjson reads deeper (then nothing is
    assumed of it)."""

    def nested(depth: int) -> bytes:
        return b"[" * depth + b"]" * depth

    try:
        orjson.loads(nested(probe))
    except orjson.JSONDecodeError:
        return None  # refuses even this: an orjson whose limit is not known
    try:
        orjson.loads(nested(probe + 1))
    except orjson.JSONDecodeError:
        return probe
    return None


#: orjson's own nesting limit (``_orjson_depth_limit``); a request limit at or above it needs no count of brackets
#: before orjson reads the request
ORJSON_MAX_DEPTH = _orjson_depth_limit()


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


#: Largest magnitude an integer may have: what a float (the engine's arithmetic) can hold.
MAX_INT = 2**1023
#: Digits beyond which an integer cannot be within MAX_INT; Python refuses to convert over 4300 at all.
_MAX_INT_DIGITS = len(str(MAX_INT))
#: A JSON escape of a UTF-16 surrogate: the only way a lone surrogate gets into a decoded string.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class _BadNumber:
    """A number JSON allows but the service cannot compute with; reported with its path after parsing."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Hooks:
    """``json.loads`` hooks that mark unusable numbers instead of failing without a path."""

    def __init__(self) -> None:
        self.bad = False

    def parse_float(self, text: str) -> float | _BadNumber:
        value = float(text)
        if math.isfinite(value):
            return value
        self.bad = True
        return _BadNumber(text)

    def parse_int(self, text: str) -> int | _BadNumber:
        if len(text) <= _MAX_INT_DIGITS:
            value = int(text)
            if abs(value) <= MAX_INT:
                return value
        self.bad = True
        return _BadNumber(text)


def json_path(parts: tuple[str | int, ...]) -> str:
    """``$.a[0].b``; keys that are not plain names are quoted: ``$["a b"]``.

    >>> json_path(("plan", "exprs", 0, "a b"))
    '$.plan.exprs[0]["a b"]'
    """
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif part.isidentifier() and part.isascii():
            out.append(f".{part}")
        else:
            out.append(f"[{json.dumps(part)}]")
    return "".join(out)


def _walk(data: Any) -> Any:
    """Every (path parts, key or value) in ``data``, depth first, with an explicit stack (no recursion)."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    seen = 0
    while stack:
        seen += 1
        if seen % 4096 == 0:  # a wide document is walked within the request's time limit
            check_deadline()
        parts, value = stack.pop()
        yield parts, value
        if isinstance(value, dict):
            for key, item in value.items():
                yield (*parts, key), key
                stack.append(((*parts, key), item))
        elif isinstance(value, list):
            stack.extend(((*parts, i), item) for i, item in enumerate(value))


def _check_values(data: Any) -> None:
    """Refuse the first unusable number or lone surrogate, naming its JSON path."""
    for parts, value in _walk(data):
        if isinstance(value, _BadNumber):
            shown = value.text if len(value.text) <= 40 else f"{value.text[:20]}...({len(value.text)} digits)"
            raise InputError(
                "invalid_number",
                f"number {shown} is out of range: numbers must be finite and within +-2**1023",
                json_path(parts),
            )
        if isinstance(value, str) and _SURROGATE.search(value):
            raise InputError(
                "invalid_string", "a string holds a lone UTF-16 surrogate, which is not text", json_path(parts)
            )


def largest_number_path(data: Any) -> str:
    """The path of the number with the largest magnitude in ``data`` (``$`` without numbers).

    Where a computation overflowed although every input was finite, that number is the likely cause.
    """
    best, where = -1.0, "$"
    for parts, value in _walk(data):
        if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > best:
            best, where = float(abs(value)), json_path(parts)
    return where


def _position(raw: bytes, offset: int) -> dict[str, int]:
    line = raw.count(b"\n", 0, offset) + 1
    column = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
    return {"line": line, "column": column, "position": offset}


#: Digits to ``1``, every other byte to ``0``: a run of 19 ``1`` is a run of 19 digits (a plain substring search,
#: several times faster than a regex). An integer literal that long may be beyond 64 bits, which orjson would
#: read as a float: such input takes the careful path.
_DIGIT_MAP = bytes(49 if 48 <= b <= 57 else 48 for b in range(256))
_LONG_DIGITS = b"1" * 19
NOT_ORDINARY = object()


def parse_ordinary(raw: bytes) -> Any:
    """The document decoded by orjson (several times faster than ``json.loads`` with the number hooks), or
    ``NOT_ORDINARY`` when it is anything but ordinary JSON, for the careful path to decode or explain.

    orjson refuses what the careful path refuses (malformed JSON or UTF-8, NaN, numbers beyond float range,
    lone surrogates) and reads everything else as ``json.loads`` does, except integers beyond 64 bits (it
    reads them as floats): a run of 19 digits anywhere sends the document to the careful path.
    """
    if _LONG_DIGITS in raw.translate(_DIGIT_MAP):
        return NOT_ORDINARY
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return NOT_ORDINARY


def parse_json(raw: bytes, max_depth: int) -> Any:
    """Decode a UTF-8 JSON document, or raise ``InputError`` saying what is wrong and where.

    Every value that parses is usable afterwards: numbers are finite and within float range, and strings
    are text (no lone surrogates); anything else is refused with its JSON path.
    """
    check_depth(raw, max_depth)
    fast = parse_ordinary(raw)
    if fast is not NOT_ORDINARY:
        return fast
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("malformed_json", "body is not valid UTF-8", "$", _position(raw, exc.start)) from None
    hooks = _Hooks()
    try:
        data = json.loads(
            text, parse_constant=_reject_constant, parse_float=hooks.parse_float, parse_int=hooks.parse_int
        )
    except json.JSONDecodeError as exc:
        detail = {"line": exc.lineno, "column": exc.colno, "position": exc.pos}
        raise InputError("malformed_json", f"malformed JSON: {exc.msg}", "$", detail) from None
    except RecursionError:  # deeper than the C parser goes at the default recursion limit: no recursion then
        try:
            data = deep_json.loads(
                text, parse_constant=_reject_constant, parse_float=hooks.parse_float, parse_int=hooks.parse_int
            )
        except json.JSONDecodeError as exc:
            detail = {"line": exc.lineno, "column": exc.colno, "position": exc.pos}
            raise InputError("malformed_json", f"malformed JSON: {exc.msg}", "$", detail) from None
    if hooks.bad or _SURROGATE_ESCAPE.search(raw):
        _check_values(data)
    return data


def dumps_answer(answer: Any, request: Any) -> bytes:
    """``answer`` as compact UTF-8 JSON; a non-finite number in it (a cost that overflowed) is a 422.

    ``request``: the parsed input, searched for the number that most likely caused the overflow.
    """
    from service.answer import NonFiniteNumber, to_json

    try:
        return to_json(answer)
    except NonFiniteNumber:
        raise number_overflow(request) from None


def number_overflow(request: Any) -> InputError:
    """The refusal for a computation that overflowed, pointing at the request's largest number."""
    return InputError(
        "number_out_of_range",
        "the estimates overflow (a cost or count is not finite); the request's largest number is the likely cause",
        largest_number_path(request),
    )
