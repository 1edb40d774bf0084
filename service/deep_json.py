"""JSON for documents nested deeper than ``json`` can go: decoding and encoding with an explicit stack.

The C ``json`` module recurses once per nesting level and stops at the interpreter's recursion limit
(1,000 frames by default), which nothing in this service raises. The service still accepts requests as deep
as ``max_json_depth`` and writes answers as deep as the plans it accepts, so it falls back to these two
functions when ``json`` raises ``RecursionError``. They agree with ``json.loads`` and ``json.dumps`` on
every document: strings and numbers are read and written by ``json`` itself, only the nesting is walked
here::

    >>> deep = []
    >>> for _ in range(5_000):
    ...     deep = [deep]
    >>> text = dumps(deep)
    >>> text[:6], len(text)
    ('[[[[[[', 10002)
    >>> dumps(loads(text)) == text
    True
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _reject_constant(name: str) -> Any:  # what json.loads does by default
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


def loads(
    text: str,
    parse_float: Callable[[str], Any] = float,
    parse_int: Callable[[str], Any] = int,
    parse_constant: Callable[[str], Any] = _reject_constant,
) -> Any:
    """``json.loads(text, ...)`` without recursion; raises ``json.JSONDecodeError`` on malformed input."""
    # containers being filled: (the list or dict, the key awaiting its value for a dict)
    stack: list[tuple[list[Any] | dict[str, Any], str]] = []  # the key is "" for a list
    pos = _WHITESPACE.match(text, 0).end()  # type: ignore[union-attr]
    while True:
        # ---- one value starts at pos
        if pos >= len(text):
            raise json.JSONDecodeError("Expecting value", text, pos)
        ch = text[pos]
        value: Any
        opened = False
        if ch == "{":
            pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            if text.startswith("}", pos):
                value, pos = {}, pos + 1
            else:
                key, pos = _key(text, pos)
                stack.append(({}, key))
                opened = True
        elif ch == "[":
            pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            if text.startswith("]", pos):
                value, pos = [], pos + 1
            else:
                stack.append(([], ""))
                opened = True
        elif ch == '"':
            value, pos = scanstring(text, pos + 1, True)
        else:
            value, pos = _scalar(text, pos, parse_float, parse_int, parse_constant)
        if opened:
            continue
        # ---- a value is complete: put it in its container, closing every container it completes
        while True:
            if not stack:
                end = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
                if end != len(text):
                    raise json.JSONDecodeError("Extra data", text, end)
                return value
            container, key = stack[-1]
            if isinstance(container, dict):
                container[key] = value
            else:
                container.append(value)
            pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
            closer = "}" if isinstance(container, dict) else "]"
            if text.startswith(",", pos):
                pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
                if isinstance(container, dict):
                    key, pos = _key(text, pos)
                    stack[-1] = (container, key)
                break  # the next value of this container
            if text.startswith(closer, pos):
                stack.pop()
                value, pos = container, pos + 1
                continue
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)


def _key(text: str, pos: int) -> tuple[str, int]:
    """An object's key and the position of its value."""
    if not text.startswith('"', pos):
        raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
    key, pos = scanstring(text, pos + 1, True)
    pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
    if not text.startswith(":", pos):
        raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
    return key, _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]


def _scalar(
    text: str,
    pos: int,
    parse_float: Callable[[str], Any],
    parse_int: Callable[[str], Any],
    parse_constant: Callable[[str], Any],
) -> tuple[Any, int]:
    for word, value in (("true", True), ("false", False), ("null", None)):
        if text.startswith(word, pos):
            return value, pos + len(word)
    for word in ("NaN", "Infinity", "-Infinity"):
        if text.startswith(word, pos):
            return parse_constant(word), pos + len(word)
    match = _NUMBER.match(text, pos)
    if match is None:
        raise json.JSONDecodeError("Expecting value", text, pos)
    integer, fraction, exponent = match.groups()
    if fraction or exponent:
        return parse_float(integer + (fraction or "") + (exponent or "")), match.end()
    return parse_int(integer), match.end()


def dumps(value: Any, ensure_ascii: bool = False, allow_nan: bool = False, sort_keys: bool = False) -> str:
    """``json.dumps(value, ensure_ascii=..., allow_nan=..., separators=(",", ":"), sort_keys=...)`` without
    recursion.

    Raises ``ValueError`` for a non-finite float when ``allow_nan`` is false, as ``json.dumps`` does.
    """
    out: list[str] = []
    # items to write: a value, or a literal piece of text (a separator or a closing bracket)
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        is_text, item = stack.pop()
        if is_text:
            out.append(item)
        elif isinstance(item, dict):
            if not item:
                out.append("{}")
                continue
            out.append("{")
            pieces: list[tuple[bool, Any]] = []
            members = sorted(item.items()) if sort_keys else item.items()
            for i, (key, member) in enumerate(members):
                text_key = _key_text(key, ensure_ascii)
                pieces.append((True, ("," if i else "") + text_key + ":"))
                pieces.append((False, member))
            pieces.append((True, "}"))
            stack.extend(reversed(pieces))
        elif isinstance(item, (list, tuple)):
            if not item:
                out.append("[]")
                continue
            out.append("[")
            pieces = []
            for i, member in enumerate(item):
                if i:
                    pieces.append((True, ","))
                pieces.append((False, member))
            pieces.append((True, "]"))
            stack.extend(reversed(pieces))
        else:
            out.append(json.dumps(item, ensure_ascii=ensure_ascii, allow_nan=allow_nan))
    return "".join(out)


def _key_text(key: Any, ensure_ascii: bool) -> str:
    """An object key as ``json`` writes it: strings quoted, and true/false/null/numbers as strings."""
    if isinstance(key, str):
        return json.dumps(key, ensure_ascii=ensure_ascii)
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(json.dumps(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def dumps_at_any_depth(
    value: Any,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """``json.dumps(value, indent=..., separators=..., sort_keys=...)`` (ASCII, NaN allowed, as json writes by
    default); nested deeper than ``json`` goes, this module's compact text, since indentation would grow with
    the square of the depth. Command-line output and stored history use it, so a deep answer is written, not
    a ``RecursionError``.

    >>> deep = 0
    >>> for _ in range(3_000):
    ...     deep = [deep]
    >>> dumps_at_any_depth({"é": 1}, indent=1), len(dumps_at_any_depth(deep, indent=2))
    ('{\\n "\\\\u00e9": 1\\n}', 6001)
    """
    try:
        return json.dumps(value, indent=indent, separators=separators, sort_keys=sort_keys)
    except RecursionError:
        return dumps(value, ensure_ascii=True, allow_nan=True, sort_keys=sort_keys)


def loads_at_any_depth(text: str | bytes) -> Any:
    """``json.loads(text)``, read without recursion when nested deeper than ``json`` goes (stored answers).

    >>> loads_at_any_depth("[" * 3_000 + "]" * 3_000) is not None
    True
    """
    try:
        return json.loads(text)
    except RecursionError:
        return loads(text.decode("utf-8") if isinstance(text, bytes) else text)
