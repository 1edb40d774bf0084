"""What the engine knows about tables: schemas and statistics.

Plain immutable data, read from the request's ``catalog`` (or, later, from the
statistics the service collected). Nothing here does I/O.
"""

from __future__ import annotations

import json  # noqa: F401 - the doctest reads with it
import math
import threading
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from costmodel.errors import PlanError
from costmodel.finite import finite, may_hold_null
from costmodel.strict import check_keys

_CATALOG_KEYS: Final = frozenset({"tables"})
_TABLE_KEYS: Final = frozenset({"columns", "row_count", "column_stats", "indexes", "containers"})
_COLUMN_KEYS: Final = frozenset({"name", "type"})
_STATS_KEYS: Final = frozenset({"ndv", "min", "max", "null_count", "histogram", "mcv", "values"})
_MCV_KEYS: Final = frozenset({"value", "freq"})
_INDEX_KEYS: Final = frozenset({"name", "columns", "unique"})
#: ``kind``, ``file`` and ``row_groups`` describe where a container came from (service.analyze writes them)
_CONTAINER_KEYS: Final = frozenset({"id", "row_count", "column_stats", "kind", "file", "row_groups"})


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """Per-column statistics; ``None`` means unknown.

    ``histogram`` holds equi-depth bucket boundaries over the non-null values
    (n + 1 bounds for n buckets of equal row share); ``mcv`` maps a value to the
    fraction of *all* rows that hold it.
    """

    ndv: float | None = None
    min: Any = None
    max: Any = None
    null_count: float | None = None
    histogram: tuple[Any, ...] | None = None
    mcv: tuple[tuple[Any, float], ...] | None = None
    #: every distinct non-null value, where known (a container's dictionary): literal guarantees use it
    values: tuple[Any, ...] | None = None


@dataclass(frozen=True, slots=True)
class Container:
    """A file or row group with its own statistics (see the PruningPredicate seed)."""

    id: str
    row_count: float | None = None
    column_stats: dict[str, ColumnStats] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Index:
    name: str
    columns: tuple[str, ...]
    unique: bool = False


@dataclass(frozen=True, slots=True)
class ColumnDef:
    name: str
    type: str = "unknown"


@dataclass(frozen=True, slots=True)
class TableInfo:
    name: str
    columns: tuple[ColumnDef, ...]
    row_count: float | None = None
    column_stats: dict[str, ColumnStats] = field(default_factory=dict)
    indexes: tuple[Index, ...] = ()
    containers: tuple[Container, ...] = ()
    #: each column's ``ColumnInfo`` once made (``estimate_types.column_info``)
    column_infos: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def stats_for(self, column: str) -> ColumnStats | None:
        stats = self.column_stats.get(column)
        if stats is None:
            lowered = column.lower()
            for name, value in self.column_stats.items():
                if name.lower() == lowered:
                    return value
        return stats


@dataclass(frozen=True, slots=True)
class Catalog:
    tables: dict[str, TableInfo] = field(default_factory=dict)

    def table(self, name: str) -> TableInfo | None:
        found = self.tables.get(name)
        if found is not None:
            return found
        lowered = name.lower()
        for key, value in self.tables.items():
            if key.lower() == lowered:
                return value
        return None


def _stats_from_wire(raw: Any, path: str) -> ColumnStats:
    if not isinstance(raw, dict):
        raise PlanError("invalid_catalog", "column statistics must be an object", path)
    check_keys(raw, _STATS_KEYS, path)
    hist = raw.get("histogram")
    mcv = raw.get("mcv")
    mcv_pairs: tuple[tuple[Any, float], ...] | None = None
    if mcv is not None:
        if not isinstance(mcv, list):
            raise PlanError("invalid_catalog", "mcv must be a list of {value, freq}", f"{path}.mcv")
        pairs = []
        for i, item in enumerate(mcv):
            if not isinstance(item, dict) or "value" not in item or "freq" not in item:
                raise PlanError("invalid_catalog", "mcv entries need value and freq", f"{path}.mcv[{i}]")
            check_keys(item, _MCV_KEYS, f"{path}.mcv[{i}]")
            freq = item["freq"]
            if not _is_number(freq) or not 0 <= freq <= 1:
                raise PlanError("invalid_catalog", "freq must be a number between 0 and 1", f"{path}.mcv[{i}].freq")
            pairs.append((item["value"], float(freq)))
        mcv_pairs = tuple(pairs)
    for key in ("ndv", "null_count"):
        value = raw.get(key)
        if value is not None and (not _is_number(value) or not 0 <= value <= MAX_ROWS):
            raise PlanError("invalid_catalog", f"{key} must be a number between 0 and {MAX_ROWS:g}", f"{path}.{key}")
    if hist is not None and not isinstance(hist, list):
        raise PlanError("invalid_catalog", "histogram must be a list of bucket bounds", f"{path}.histogram")
    values = raw.get("values")
    if values is not None and not isinstance(values, list):
        raise PlanError("invalid_catalog", "values must be a list of distinct values", f"{path}.values")
    return ColumnStats(
        ndv=raw.get("ndv"),
        min=raw.get("min"),
        max=raw.get("max"),
        null_count=raw.get("null_count"),
        histogram=tuple(hist) if isinstance(hist, list) and len(hist) >= 2 else None,
        mcv=mcv_pairs,
        values=tuple(values) if values is not None else None,
    )


def _stats_map(raw: Any, path: str) -> dict[str, ColumnStats]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise PlanError("invalid_catalog", "column_stats must be an object keyed by column", path)
    return {name: _stats_from_wire(value, f"{path}.{name}") for name, value in raw.items()}


#: Largest row count or NDV accepted: keeps every estimate a finite number.
MAX_ROWS: Final = 1e15


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _row_count(raw: Any, path: str) -> float | None:
    if raw is None:
        return None
    if not _is_number(raw) or not 0 <= raw <= MAX_ROWS:
        raise PlanError("invalid_catalog", f"row_count must be a number between 0 and {MAX_ROWS:g}", path)
    return float(raw)


def _list(raw: Any, path: str, what: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise PlanError("invalid_catalog", f"{what} must be a list", path)
    return raw


def table_from_wire(name: str, raw: Any, path: str) -> TableInfo:
    if not isinstance(raw, dict):
        raise PlanError("invalid_catalog", "a table must be an object", path)
    check_keys(raw, _TABLE_KEYS, path)
    columns_raw = raw.get("columns", [])
    if not isinstance(columns_raw, list):
        raise PlanError("invalid_catalog", "columns must be a list", f"{path}.columns")
    columns = []
    for i, col in enumerate(columns_raw):
        if isinstance(col, str):
            columns.append(ColumnDef(col))
        elif isinstance(col, dict) and isinstance(col.get("name"), str):
            check_keys(col, _COLUMN_KEYS, f"{path}.columns[{i}]")
            columns.append(ColumnDef(col["name"], str(col.get("type", "unknown")).lower()))
        else:
            raise PlanError("invalid_catalog", "a column is a name or {name, type}", f"{path}.columns[{i}]")
    indexes = []
    for i, idx in enumerate(_list(raw.get("indexes"), f"{path}.indexes", "indexes")):
        ipath = f"{path}.indexes[{i}]"
        if not isinstance(idx, dict) or not isinstance(idx.get("columns"), list) or not idx["columns"]:
            raise PlanError("invalid_catalog", "an index needs a non-empty columns list", ipath)
        check_keys(idx, _INDEX_KEYS, ipath)
        if not all(isinstance(col, str) for col in idx["columns"]):
            raise PlanError("invalid_catalog", "index columns must be names", f"{ipath}.columns")
        indexes.append(Index(str(idx.get("name", f"idx{i}")), tuple(idx["columns"]), bool(idx.get("unique", False))))
    containers = []
    for i, con in enumerate(_list(raw.get("containers"), f"{path}.containers", "containers")):
        cpath = f"{path}.containers[{i}]"
        if not isinstance(con, dict):
            raise PlanError("invalid_catalog", "a container must be an object", cpath)
        check_keys(con, _CONTAINER_KEYS, cpath)
        containers.append(
            Container(
                id=str(con.get("id", f"container-{i}")),
                row_count=_row_count(con.get("row_count"), f"{cpath}.row_count"),
                column_stats=_stats_map(con.get("column_stats"), f"{cpath}.column_stats"),
            )
        )
    return TableInfo(
        name=name,
        columns=tuple(columns),
        row_count=_row_count(raw.get("row_count"), f"{path}.row_count"),
        column_stats=_stats_map(raw.get("column_stats"), f"{path}.column_stats"),
        indexes=tuple(indexes),
        containers=tuple(containers),
    )


#: Catalogs read lately, by their canonical JSON: pipelines send the same catalog with every query, and
#: reading one (every column's statistics checked) costs as much as a small plan's placement. Each with whether
#: its JSON may hold a ``null`` (``may_hold_null``): only then must a catalog with that JSON be checked for NaN.
_READ: Final[dict[bytes, tuple[Catalog, bool]]] = {}
#: At most this many catalogs are kept, each at most ``_MEMO_MAX_BYTES`` of JSON.
_MEMO_ENTRIES: Final = 32
_MEMO_MAX_BYTES: Final = 256 * 1024
_MEMO_LOCK: Final = threading.Lock()


def catalog_from_wire(raw: Any, path: str = "$.catalog") -> Catalog:
    """Read a wire catalog ``{"tables": {name: {...}}}``; ``None`` is an empty catalog.

    A catalog read before (the same JSON, keys in any order) is answered from a small memo: a ``Catalog`` is
    immutable. Anything else is read and checked afresh, so its errors are as without the memo.

    >>> raw = {"tables": {"t": {"columns": ["a"], "row_count": 10}}}
    >>> catalog_from_wire(raw) is catalog_from_wire(json.loads(json.dumps(raw)))
    True
    """
    if raw is None:
        return Catalog()
    try:
        key = orjson.dumps(raw, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # keys that are not strings, numpy numbers, or nested deeper than orjson goes
        return _read_catalog(raw, path)
    # orjson writes NaN and infinities as null too: JSON without a null is that of one catalog only, so a hit
    # on such a key needs no check (the scan for a null costs as much as writing the key)
    hit = _READ.get(key)
    if hit is not None and not hit[1]:
        return hit[0]
    nulls = may_hold_null(key) if hit is None else True
    if nulls and not finite(raw):
        return _read_catalog(raw, path)
    if hit is not None:
        return hit[0]
    catalog = _read_catalog(raw, path)
    if len(key) <= _MEMO_MAX_BYTES:
        with _MEMO_LOCK:
            while len(_READ) >= _MEMO_ENTRIES:  # oldest first out
                del _READ[next(iter(_READ))]
            _READ[key] = (catalog, nulls)
    return catalog


def _read_catalog(raw: Any, path: str) -> Catalog:
    if not isinstance(raw, dict):
        raise PlanError("invalid_catalog", "catalog must be an object", path)
    check_keys(raw, _CATALOG_KEYS, path)
    tables = raw.get("tables") or {}
    if not isinstance(tables, dict):
        raise PlanError("invalid_catalog", "catalog.tables must be an object keyed by table name", f"{path}.tables")
    return Catalog({name: table_from_wire(name, value, f"{path}.tables.{name}") for name, value in tables.items()})
