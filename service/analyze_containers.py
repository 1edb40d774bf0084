"""Container statistics for the analyze job: per file, and per Parquet row group (the finest prunable unit).

Parquet footers already hold row-group statistics, so reading them costs no scan; other formats (and Parquet on
remote storage) are grouped by file in one Spark pass. Split from service/analyze.py, which runs the job.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from service.analyze import AnalyzeRequest


def json_value(value: Any) -> Any:
    """A statistic as the wire carries it: dates and timestamps as ISO strings, decimals as floats.

    Values JSON cannot carry faithfully (NaN, infinities, bytes) become ``None``: unknown, never wrong.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return json_value(float(value))
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None).isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if hasattr(value, "item"):  # numpy scalars
        return json_value(value.item())
    return None


def column(name: str) -> Column:
    """A column by name, quoted for Spark (names with dots or backticks stay one column)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _local_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        return Path(unquote(parsed.path))
    return None


def container_statistics(
    df: DataFrame, request: AnalyzeRequest, columns: list[dict[str, str]], kinds: dict[str, str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(files, containers): per-file statistics, and the finest prunable unit (row groups for Parquet).

    Parquet footers already hold row-group statistics, so reading them costs no scan; other formats (and
    Parquet on remote storage) are grouped by file in one Spark pass.
    """
    names = [c["name"] for c in columns if kinds[c["name"]] != "other"]
    try:
        uris = df.inputFiles()
    except Exception:  # a source with no files (a view, an in-memory table)
        uris = []
    local = [p for p in (_local_path(u) for u in uris) if p is not None]
    parquet = request.format == "parquet" if request.table is None else all(p.suffix == ".parquet" for p in local)
    if parquet and local and len(local) == len(uris):
        try:
            return _parquet_containers(local, names)
        except (OSError, ValueError):  # not readable as Parquet after all: fall back to a Spark pass
            pass
    files = _spark_file_containers(df, names)
    return files, files


def _parquet_containers(paths: list[Path], names: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    import pyarrow.parquet as pq

    wanted = set(names)
    root = Path(_common_root(paths))
    files, groups = [], []
    for path in sorted(paths):
        file_id = path.relative_to(root).as_posix() if path != root else path.name
        meta = pq.ParquetFile(path).metadata
        file_groups = []
        for g in range(meta.num_row_groups):
            rg = meta.row_group(g)
            column_stats: dict[str, dict[str, Any]] = {}
            for j in range(rg.num_columns):
                chunk = rg.column(j)
                if chunk.path_in_schema not in wanted:
                    continue
                st = chunk.statistics
                entry: dict[str, Any] = {"min": None, "max": None, "null_count": None}
                if st is not None:
                    if st.has_min_max:
                        entry["min"], entry["max"] = json_value(st.min), json_value(st.max)
                    if st.has_null_count:
                        entry["null_count"] = st.null_count
                column_stats[chunk.path_in_schema] = entry
            group = {
                "id": f"{file_id}#rg{g}",
                "kind": "row_group",
                "file": file_id,
                "row_count": rg.num_rows,
                "column_stats": column_stats,
            }
            file_groups.append(group)
        groups += file_groups
        files.append(
            {
                "id": file_id,
                "kind": "file",
                "row_count": meta.num_rows,
                "row_groups": len(file_groups),
                "column_stats": _merge(file_groups, names),
            }
        )
    return files, groups


def _common_root(paths: list[Path]) -> str:
    import os

    if len(paths) == 1:
        return str(paths[0].parent)
    return os.path.commonpath([str(p) for p in paths])


def _merge(groups: list[dict[str, Any]], names: list[str]) -> dict[str, dict[str, Any]]:
    """A file's statistics from its row groups'; unknown in any group makes it unknown for the file."""
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        parts = [g["column_stats"].get(name) for g in groups]
        if not parts or any(p is None for p in parts):
            continue
        entry: dict[str, Any] = {"min": None, "max": None, "null_count": None}
        mins = [p["min"] for p in parts]
        maxes = [p["max"] for p in parts]
        nulls = [p["null_count"] for p in parts]
        try:
            if None not in mins and None not in maxes:
                entry["min"], entry["max"] = min(mins), max(maxes)
        except TypeError:  # mixed types across groups: leave unknown
            pass
        if None not in nulls:
            entry["null_count"] = sum(nulls)
        out[name] = entry
    return out


def _spark_file_containers(df: DataFrame, names: list[str]) -> list[dict[str, Any]]:
    from pyspark.sql import functions as F

    exprs = [F.count(F.lit(1)).alias("rows")]
    for i, name in enumerate(names):
        exprs += [
            F.min(column(name)).alias(f"min{i}"),
            F.max(column(name)).alias(f"max{i}"),
            F.sum(F.when(column(name).isNull(), 1).otherwise(0)).alias(f"nulls{i}"),
        ]
    try:
        rows = df.groupBy(F.col("_metadata.file_path").alias("file")).agg(*exprs).collect()
    except Exception:  # no file metadata for this source: no containers, not a failed job
        return []
    files = []
    for row in sorted(rows, key=lambda r: r["file"]):
        path = _local_path(row["file"])
        file_id = path.name if path is not None else row["file"]
        column_stats = {
            name: {
                "min": json_value(row[f"min{i}"]),
                "max": json_value(row[f"max{i}"]),
                "null_count": int(row[f"nulls{i}"]),
            }
            for i, name in enumerate(names)
        }
        files.append({"id": file_id, "kind": "file", "row_count": int(row["rows"]), "column_stats": column_stats})
    return files
