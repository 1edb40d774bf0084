"""The analyze job on real files in local Spark, checked against answers computed from the data itself."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from service.analyze import STAGES, AnalyzeRequest, AnalyzeResult, json_value, run_analyze
from tests.analyze.conftest import ROWS, SAMPLE_ROWS, Dataset

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: approx_count_distinct runs with rsd 0.02; three standard errors.
NDV_TOLERANCE = 0.06


def truth(data: Any, column: str) -> tuple[list[Any], int]:
    """(non-null values as the wire spells them, null count)."""
    values = data.column(column).to_pylist()
    present = [json_value(v) for v in values if v is not None]
    return present, len(values) - len(present)


def test_row_count_nulls_min_max_and_ndv_match_the_data(
    parquet_analyzed: AnalyzeResult, parquet_table: Dataset
) -> None:
    stats = parquet_analyzed.stats
    assert stats["row_count"] == ROWS
    assert [c["name"] for c in stats["columns"]] == parquet_table.data.column_names
    types = {c["name"]: c["type"] for c in stats["columns"]}
    assert types["id"] == "bigint" and types["day"] == "date" and types["ts"] == "timestamp"
    assert types["price"] == "decimal(10,2)" and types["category"] == "string"
    for name in parquet_table.data.column_names:
        present, nulls = truth(parquet_table.data, name)
        col = stats["column_stats"][name]
        assert col["null_count"] == nulls, name
        assert col["min"] == min(present), name
        assert col["max"] == max(present), name
        true_ndv = len(set(present))
        assert abs(col["ndv"] - true_ndv) <= max(1, NDV_TOLERANCE * true_ndv), (name, col["ndv"], true_ndv)


def test_null_heavy_columns_are_counted_exactly(parquet_analyzed: AnalyzeResult, parquet_table: Dataset) -> None:
    col = parquet_analyzed.stats["column_stats"]["mostly_null"]
    _, nulls = truth(parquet_table.data, "mostly_null")
    assert nulls > 0.85 * ROWS
    assert col["null_count"] == nulls
    assert len(col["histogram"]) == 101  # built over the non-null values only


def test_histograms_are_equi_depth_and_monotone(parquet_analyzed: AnalyzeResult, parquet_table: Dataset) -> None:
    stats = parquet_analyzed.stats["column_stats"]
    for name in ("id", "skew", "mostly_null", "day", "ts", "price"):
        bounds = stats[name]["histogram"]
        assert len(bounds) == 101, name
        assert bounds == sorted(bounds), name
        assert bounds[0] == stats[name]["min"] and bounds[-1] == stats[name]["max"], name
    assert "histogram" not in stats["category"] and "histogram" not in stats["flag"]  # no order to interpolate
    ids = np.array(stats["id"]["histogram"])
    per_bucket = np.diff(ids)  # a key: each bucket holds ~1% of the rows
    assert np.all(np.abs(per_bucket - ROWS / 100) <= ROWS / 100 * 0.05)
    skew = stats["skew"]["histogram"]
    # half the rows are 1 and about a fifth are 2: the skew shows as repeated bounds
    assert 45 <= skew.count(1) <= 55
    assert 15 <= skew.count(2) <= 25


def test_most_common_values_match_the_table_within_sampling_error(
    parquet_analyzed: AnalyzeResult, parquet_table: Dataset
) -> None:
    stats = parquet_analyzed.stats["column_stats"]
    for name in ("skew", "category", "flag", "day", "price"):
        present, _ = truth(parquet_table.data, name)
        counts = Counter(present)
        mcv = stats.get(name, {}).get("mcv", [])
        assert len(mcv) <= 20
        assert [m["freq"] for m in mcv] == sorted((m["freq"] for m in mcv), reverse=True)
        for m in mcv:  # read off the sample: within four standard errors of the table's frequency
            true = counts[m["value"]] / ROWS
            assert m["freq"] == pytest.approx(true, abs=4 * (true * (1 - true) / SAMPLE_ROWS) ** 0.5 + 1e-9), (name, m)
        kept = {m["value"] for m in mcv}
        # every value holding at least 1% of the rows is found
        assert all(value in kept for value, count in counts.items() if count / ROWS >= 0.01), name
    assert [m["value"] for m in stats["skew"]["mcv"][:2]] == [1, 2]
    assert [m["value"] for m in stats["category"]["mcv"]] == ["alpha", "beta", "gamma", "delta", "epsilon"]
    assert len(stats["day"]["mcv"]) == 20  # near-uniform: 20 of the many repeated values
    assert "mcv" not in stats["id"]  # a key: every value equally rare, nothing to learn


def test_containers_match_the_parquet_footers(parquet_analyzed: AnalyzeResult, parquet_table: Dataset) -> None:
    stats = parquet_analyzed.stats
    files = sorted(parquet_table.path.glob("*.parquet"))
    assert [f["id"] for f in stats["files"]] == [f.name for f in files]
    groups = {g["id"]: g for g in stats["containers"]}
    expected_groups = 0
    for path in files:
        meta = pq.ParquetFile(path).metadata
        expected_groups += meta.num_row_groups
        entry = next(f for f in stats["files"] if f["id"] == path.name)
        assert entry["row_count"] == meta.num_rows and entry["row_groups"] == meta.num_row_groups
        for g in range(meta.num_row_groups):
            rg = meta.row_group(g)
            got = groups[f"{path.name}#rg{g}"]
            assert got["kind"] == "row_group" and got["file"] == path.name
            assert got["row_count"] == rg.num_rows
            for j in range(rg.num_columns):
                chunk = rg.column(j)
                st = chunk.statistics
                want = got["column_stats"][chunk.path_in_schema]
                assert want["null_count"] == st.null_count
                assert (want["min"], want["max"]) == (json_value(st.min), json_value(st.max)), chunk.path_in_schema
        # a file's statistics cover its row groups
        ids = [groups[f"{path.name}#rg{g}"]["column_stats"]["id"] for g in range(meta.num_row_groups)]
        assert entry["column_stats"]["id"]["min"] == min(i["min"] for i in ids)
        assert entry["column_stats"]["id"]["max"] == max(i["max"] for i in ids)
    assert len(groups) == expected_groups > len(files)
    assert sum(g["row_count"] for g in groups.values()) == ROWS


def test_the_sample_is_uniform_and_near_the_target_size(
    parquet_analyzed: AnalyzeResult, parquet_table: Dataset
) -> None:
    sample = parquet_analyzed.sample
    fraction = SAMPLE_ROWS / ROWS
    sigma = (ROWS * fraction * (1 - fraction)) ** 0.5
    assert abs(sample.num_rows - SAMPLE_ROWS) <= 5 * sigma
    assert parquet_analyzed.stats["sample"] == {
        "rows": sample.num_rows,
        "fraction": fraction,
        "seed": 42,
        "target": SAMPLE_ROWS,
    }
    ids = np.array(sample.column("id").to_pylist())
    assert len(set(ids)) == len(ids) and ids.min() >= 0 and ids.max() < ROWS
    assert abs(np.median(ids) - ROWS / 2) < ROWS * 0.05  # drawn from the whole table, not its first files
    nulls = sample.column("mostly_null").null_count / sample.num_rows
    assert 0.85 < nulls < 0.95


def test_progress_reports_every_stage_and_the_seed_repeats_the_sample(
    spark: SparkSession, parquet_table: Dataset, parquet_analyzed: AnalyzeResult
) -> None:
    seen: list[tuple[str, int, float]] = []
    request = AnalyzeRequest(name="e", path=str(parquet_table.path), sample_rows=SAMPLE_ROWS, histogram_buckets=2)
    again = run_analyze(spark, request, lambda stage, rows, pct: seen.append((stage, rows, pct)))
    job_stages = [name for name, _ in STAGES if name not in ("write", "commit")]
    assert [s for s, _, _ in seen] == job_stages
    percents = [p for _, _, p in seen]
    assert percents == sorted(percents) and percents[0] == 0 and percents[-1] < 100
    assert seen[-1][1] == ROWS  # rows seen once the statistics pass has counted them
    assert again.sample.column("id").to_pylist() == parquet_analyzed.sample.column("id").to_pylist()


def test_csv_with_nulls_and_per_file_containers(spark: SparkSession, csv_table: Dataset) -> None:
    result = run_analyze(spark, AnalyzeRequest(name="csv", path=str(csv_table.path), format="csv", sample_rows=600))
    stats = result.stats
    types = {c["name"]: c["type"] for c in stats["columns"]}
    assert types == {"id": "int", "skew": "int", "mostly_null": "double", "category": "string", "day": "date"}
    assert stats["row_count"] == csv_table.data.num_rows
    for name in csv_table.data.column_names:
        present, nulls = truth(csv_table.data, name)
        col = stats["column_stats"][name]
        assert (col["null_count"], col["min"], col["max"]) == (nulls, min(present), max(present)), name
    assert stats["column_stats"]["skew"]["mcv"][0]["value"] == 1
    files = stats["containers"]
    assert stats["files"] == files and [f["id"] for f in files] == ["part-0.csv", "part-1.csv"]
    assert [f["row_count"] for f in files] == [3_000, 3_000]
    first_ids = csv_table.data.column("id").to_pylist()[:3_000]
    assert files[0]["column_stats"]["id"] == {"min": min(first_ids), "max": max(first_ids), "null_count": 0}
    assert 400 < result.sample.num_rows < 800


def test_json(spark: SparkSession, tmp_path: Path) -> None:
    fmt = "json"
    df = spark.range(0, 1000).selectExpr("id", "IF(id % 4 = 0, NULL, id % 7) AS m")
    getattr(df.coalesce(2).write, fmt)(str(tmp_path / fmt))
    stats = run_analyze(spark, AnalyzeRequest(name=fmt, path=str(tmp_path / fmt), format=fmt)).stats
    assert stats["row_count"] == 1000
    assert stats["column_stats"]["m"]["null_count"] == 250
    assert (stats["column_stats"]["m"]["min"], stats["column_stats"]["m"]["max"]) == (0, 6)
    assert sum(f["row_count"] for f in stats["containers"]) == 1000
    assert stats["sample"]["rows"] == 1000  # fewer rows than the target: the whole table


def test_a_spark_catalog_table(spark: SparkSession, parquet_table: Dataset) -> None:
    spark.read.parquet(str(parquet_table.path)).createOrReplaceTempView("analyze_view")
    result = run_analyze(spark, AnalyzeRequest(name="v", table="analyze_view", sample_rows=100, histogram_buckets=4))
    assert result.stats["source"] == {"table": "analyze_view"}
    assert result.stats["row_count"] == ROWS
    assert len(result.stats["files"]) == 2 and result.stats["containers"][0]["kind"] == "row_group"


def test_a_missing_path_fails_with_sparks_message(spark: SparkSession, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="PATH_NOT_FOUND|does not exist"):
        run_analyze(spark, AnalyzeRequest(name="x", path=str(tmp_path / "missing")))


def test_requests_are_validated() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        AnalyzeRequest(name="x")
    with pytest.raises(ValueError, match="format"):
        AnalyzeRequest(name="x", path="/p", format="xlsx")
