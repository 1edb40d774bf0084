"""The catalog memo: a catalog read before is not read again, and nothing else changes.

``catalog_from_wire`` keys read catalogs by their canonical JSON. orjson writes NaN and infinities as
``null``, so a catalog holding one must never meet the entry of a catalog holding ``null`` there; an invalid
catalog is refused every time it comes.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from costmodel import PlanError
from costmodel.catalog import _MEMO_ENTRIES, catalog_from_wire

CATALOG: dict[str, Any] = {
    "tables": {
        "t": {
            "columns": [{"name": "a", "type": "int"}, "b"],
            "row_count": 1000,
            "column_stats": {"a": {"ndv": 10, "min": None, "max": 9.5}, "b": {"ndv": 3}},
        }
    }
}


def test_the_same_catalog_in_any_key_order_is_read_once() -> None:
    first = catalog_from_wire(CATALOG)
    reordered = json.loads(json.dumps(CATALOG, sort_keys=True))
    reordered["tables"]["t"] = dict(reversed(list(reordered["tables"]["t"].items())))
    assert catalog_from_wire(reordered) is first
    assert first.tables["t"].column_stats["a"].max == 9.5


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_number_never_meets_the_entry_of_a_null(bad: float) -> None:
    with_null = catalog_from_wire(CATALOG)
    odd = copy.deepcopy(CATALOG)
    odd["tables"]["t"]["column_stats"]["a"]["min"] = bad
    read = catalog_from_wire(odd)
    assert read is not with_null
    assert read.tables["t"].column_stats["a"].min is bad


def test_an_invalid_catalog_is_refused_every_time() -> None:
    bad = copy.deepcopy(CATALOG)
    bad["tables"]["t"]["row_count"] = -1
    for _ in range(2):
        with pytest.raises(PlanError) as error:
            catalog_from_wire(bad)
        assert error.value.path == "$.catalog.tables.t.row_count"


def test_a_changed_statistic_is_a_different_catalog() -> None:
    changed = copy.deepcopy(CATALOG)
    changed["tables"]["t"]["column_stats"]["b"]["ndv"] = 4
    assert catalog_from_wire(changed).tables["t"].column_stats["b"].ndv == 4
    assert catalog_from_wire(CATALOG).tables["t"].column_stats["b"].ndv == 3


def test_the_memo_is_bounded() -> None:
    from costmodel import catalog as module

    for n in range(_MEMO_ENTRIES * 2):
        catalog_from_wire({"tables": {f"t{n}": {"columns": ["a"]}}})
    assert len(module._READ) <= _MEMO_ENTRIES


def test_a_catalog_without_a_null_is_answered_without_looking_for_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from costmodel import catalog as module

    plain = {"tables": {"u": {"columns": ["a"], "row_count": 5, "column_stats": {"a": {"ndv": 2, "null_count": 0}}}}}
    first = catalog_from_wire(plain)

    def scanned(_: bytes) -> bool:
        raise AssertionError("a hit on JSON without a null looked for one")

    monkeypatch.setattr(module, "may_hold_null", scanned)
    assert catalog_from_wire(copy.deepcopy(plain)) is first
    with pytest.raises(AssertionError):  # a catalog not read before is still checked
        catalog_from_wire({"tables": {"v": {"columns": ["a"]}}})


def test_a_columns_statistics_are_made_once_per_table_and_follow_the_scans_spelling() -> None:
    """``column_info`` keeps each column's ``ColumnInfo`` with its catalog table: asked again it is the same
    object, with the statistics the catalog holds; a scan spelling the table otherwise gets its own spelling."""
    from costmodel.estimate_types import column_info

    table = catalog_from_wire(copy.deepcopy(CATALOG)).tables["t"]
    first = column_info(table, "t", "a")
    assert column_info(table, "t", "a") is first
    assert (first.table, first.column, first.table_rows, first.stats) == ("t", "a", 1000, table.column_stats["a"])
    other = column_info(table, "T", "a")
    assert (other.table, other.stats) == ("T", table.column_stats["a"])
    missing = column_info(None, "u", "x")
    assert (missing.table, missing.stats, missing.table_rows) == ("u", None, None)
    assert table == catalog_from_wire(copy.deepcopy(CATALOG)).tables["t"]  # the memo is not part of equality
