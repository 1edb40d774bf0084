"""The JSON guard measures depth on raw bytes, so input too deep for json.loads never reaches it."""

from __future__ import annotations

import json
import time
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.wire import json_depth
from service import deep_json
from service.errors import InputError
from service.jsonguard import ORJSON_MAX_DEPTH, check_depth, nesting_depth, parse_json
from service.request import parse_optimize_request, parse_ordinary_request

# Text heavy in the characters a naive bracket counter trips over.
_tricky_text = st.text(alphabet=st.sampled_from('[]{}"\\\n\t aé€😀,:'), max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _tricky_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_tricky_text, inner, max_size=4),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(value=_json, ascii_only=st.booleans())
def test_depth_of_encoded_json_equals_depth_of_the_value(value: Any, ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert nesting_depth(raw) == json_depth(value)


@pytest.mark.parametrize(
    ("raw", "depth"),
    [
        (b"1", 0),
        (b"[]", 1),
        (b'{"a": [1, {"b": []}]}', 4),
        (b'["]]]]", "[[[[", "\\"[[["]', 1),
        (b'["\\\\", ["x"]]', 2),  # an escaped backslash does not escape the closing quote
    ],
)
def test_nesting_depth_examples(raw: bytes, depth: int) -> None:
    assert nesting_depth(raw) == depth


def test_too_deep_input_is_refused_without_decoding_and_fast() -> None:
    raw = b"[" * 200_000 + b"]" * 200_000  # json.loads would raise RecursionError on this
    started = time.perf_counter()
    with pytest.raises(InputError) as info:
        parse_json(raw, max_depth=2500)
    assert time.perf_counter() - started < 1.0
    assert info.value.code == "too_deep"
    assert info.value.detail == {"depth": 200_000, "limit": 2500}


def test_depth_at_the_limit_is_accepted() -> None:
    check_depth(b"[" * 50 + b"]" * 50, limit=50)
    with pytest.raises(InputError):
        check_depth(b"[" * 51 + b"]" * 51, limit=50)


def test_ten_megabytes_of_ordinary_json_are_scanned_whole() -> None:
    """Brackets inside strings do not count, across the whole body (its speed is bench material, not a test's)."""
    raw = json.dumps([{"name": 'a[b]{c}\\"', "v": [1, 2, 3]} for _ in range(300_000)]).encode()
    assert len(raw) > 9_000_000
    check_depth(raw, limit=3)  # its depth; brackets outnumber the limit, so the full scan runs
    with pytest.raises(InputError):
        check_depth(raw[:-1] + b", [[[0]]]]", limit=3)  # one deeper value at the very end


def test_malformed_json_reports_line_and_column() -> None:
    with pytest.raises(InputError) as info:
        parse_json(b'{"a": 1,\n "b": }', max_depth=10)
    assert info.value.code == "malformed_json"
    assert info.value.detail["line"] == 2
    assert info.value.detail["column"] == 7


@pytest.mark.parametrize("raw", [b'{"x": NaN}', b'{"x": -Infinity}', b"[Infinity]"])
def test_non_json_constants_are_refused(raw: bytes) -> None:
    with pytest.raises(InputError) as info:
        parse_json(raw, max_depth=10)
    assert info.value.code == "malformed_json"


def test_invalid_utf8_reports_where() -> None:
    with pytest.raises(InputError) as info:
        parse_json(b'{"a":\n "\xc3("}', max_depth=10)
    assert info.value.code == "malformed_json"
    assert (info.value.detail["line"], info.value.detail["column"]) == (2, 3)


@pytest.mark.parametrize("raw", [b"[1e400]", b"[-1e400]", b"[" + b"9" * 5000 + b"]"])
def test_numbers_python_cannot_hold_are_refused(raw: bytes) -> None:
    with pytest.raises(InputError) as info:
        parse_json(raw, max_depth=10)
    assert info.value.code == "invalid_number"


def test_valid_json_decodes() -> None:
    assert parse_json('{"a": [1, 2.5, "é", null, true]}'.encode(), max_depth=2) == {"a": [1, 2.5, "é", None, True]}


@pytest.mark.parametrize("depth", [1, 1023, 1024, 1025, 2000])
def test_orjson_reads_nothing_deeper_than_its_measured_limit(depth: int) -> None:
    # parse_ordinary_request skips counting brackets when the request's limit is at or above orjson's own:
    # that is safe only if orjson refuses every document deeper than the limit measured at import
    if ORJSON_MAX_DEPTH is None:
        pytest.skip("this orjson reads deeper than 1024 levels: brackets are counted")
    raw = b"[" * depth + b"]" * depth
    if depth <= ORJSON_MAX_DEPTH:
        assert nesting_depth(raw) == depth and orjson.loads(raw) is not None
    else:
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(raw)


def test_a_request_deeper_than_orjson_reads_takes_the_careful_path() -> None:
    plan: dict[str, Any] = {"op": "scan", "table": "t"}
    for _ in range(1_100):  # past orjson's 1024 levels, within the request limit of 2,500
        plan = {"op": "filter", "predicate": {"lit": True}, "input": plan}
    raw = deep_json.dumps({"plan": plan}).encode()
    assert parse_ordinary_request(raw, 2500) is None  # orjson refused it: not read as ordinary JSON
    read = parse_optimize_request(raw, 2500).plan  # the careful path reads it
    assert deep_json.dumps(read) == deep_json.dumps(plan)
    with pytest.raises(InputError) as info:
        parse_optimize_request(raw, 1_000)
    assert info.value.code == "too_deep"
