"""Samples as the estimator reads them: an Arrow table (Spark's ``toArrow``, a stored Parquet file) converted to a
``costmodel.sample.Sample``, column by column, leaving out the types the estimator cannot read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from costmodel.sample import Sample

if TYPE_CHECKING:
    import pyarrow as pa


def _column_array(column: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """One Arrow column as ``Sample`` wants it: (values, nulls); None for types the estimator cannot read."""
    import pyarrow as pa
    import pyarrow.compute as pc

    typ = column.type
    nulls = column.is_null().to_numpy(zero_copy_only=False).astype(bool)
    if pa.types.is_boolean(typ):
        values = pc.fill_null(column, False).to_numpy(zero_copy_only=False).astype(bool)
    elif pa.types.is_integer(typ):
        values = pc.fill_null(column.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    elif pa.types.is_floating(typ) or pa.types.is_decimal(typ):
        values = pc.fill_null(column.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False).astype(np.float64)
    elif pa.types.is_date(typ):
        days = pc.fill_null(column.cast(pa.date32()).cast(pa.int32()), 0).to_numpy(zero_copy_only=False)
        values = days.astype("datetime64[D]")
    elif pa.types.is_timestamp(typ):
        # Spark hands timestamps over in UTC (the session time zone is UTC in the service); drop the zone
        micros = pc.fill_null(column.cast(pa.timestamp("us", tz=typ.tz)).cast(pa.int64()), 0)
        values = micros.to_numpy(zero_copy_only=False).astype(np.int64).view("datetime64[us]")
    elif pa.types.is_string(typ) or pa.types.is_large_string(typ):
        values = np.array(["" if v is None else v for v in column.to_pylist()], dtype=object)
    else:
        return None
    return values, nulls


def sample_from_arrow(table: str, table_rows: float, data: pa.Table) -> Sample:
    """An Arrow table (as Spark's ``toArrow`` or a Parquet file gives it) as a ``costmodel.sample.Sample``."""
    values: dict[str, np.ndarray] = {}
    nulls: dict[str, np.ndarray] = {}
    for name in data.column_names:
        converted = _column_array(data.column(name))
        if converted is not None:
            values[name], nulls[name] = converted
    return Sample(table, table_rows, values, nulls)
