"""Analyze reads only under PUSHDOWN_DATA_ROOTS: every way out is refused with the same 403, present or not,
and nothing of a file's content reaches an answer."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.app import create_app
from service.analyze import Analyzer
from service.dataroots import resolve_source
from service.errors import InputError
from tests.conftest import _make_settings, live_server
from tests.spark_session import get_spark, java_available

SECRET = "TOP-SECRET-CONTENT-4242"


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A data root with a table, and a secret file outside it reachable by symlink and by ``..``."""
    base = tmp_path_factory.mktemp("roots")
    root, outside = base / "root", base / "outside"
    (root / "tables" / "t").mkdir(parents=True)
    outside.mkdir()
    (root / "tables" / "t" / "part-0.csv").write_text("a,b\n1,x\n2,y\n")
    secret = outside / "secret.csv"
    secret.write_text(f"name\n{SECRET}\n")
    (root / "link-to-secret.csv").symlink_to(secret)
    (root / "link-to-outside").symlink_to(outside, target_is_directory=True)
    escaping = root / "escaping"
    escaping.mkdir()
    (escaping / "ok.csv").write_text("a\n1\n")
    (escaping / "inner-link.csv").symlink_to(secret)
    return {"root": root, "outside": outside, "secret": secret, "base": base}


@pytest.fixture(scope="module")
def http(layout: dict[str, Path]) -> Iterator[httpx.Client]:
    settings = _make_settings(data_roots=[str(layout["root"]), "s3a://allowed-bucket/"])
    app = create_app(settings)
    jobs: list[Any] = []
    app.state.analyzer = Analyzer(app.state.analyzer.store, lambda: jobs.append("spark") or pytest.fail("read"))
    with live_server(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def analyze(http: httpx.Client, body: dict[str, Any], name: str = "t") -> httpx.Response:
    return http.post(f"/tables/{name}/analyze", json={"format": "csv", **body})


def escapes(layout: dict[str, Path]) -> dict[str, str]:
    root, outside = layout["root"], layout["outside"]
    return {
        "etc passwd": "/etc/passwd",
        "missing outside": "/etc/no-such-file-anywhere",
        "secret": str(layout["secret"]),
        "missing beside secret": str(outside / "nothing-here.csv"),
        "dot-dot": f"{root}/tables/../../outside/secret.csv",
        "dot-dot missing": f"{root}/tables/../../outside/missing.csv",
        "symlink file": str(root / "link-to-secret.csv"),
        "symlink dir": str(root / "link-to-outside" / "secret.csv"),
        "symlink dir missing": str(root / "link-to-outside" / "missing.csv"),
        "dir holding an escaping symlink": str(root / "escaping"),
        "file url": f"file://{layout['secret']}",
        "file url with host": f"file://otherhost{root}/tables/t",
        "glob braces": f"{root}/{{tables,../outside}}/secret.csv",
        "glob star": f"{root}/*/secret.csv",
        "percent": f"{root}/%2e%2e/outside/secret.csv",
        "root prefix lookalike": f"{root}-evil/x.csv",
        "other bucket": "s3a://allowed-bucket-evil/t/",
        "bucket dot-dot": "s3a://allowed-bucket/../other/t/",
        "other scheme": "hdfs://namenode/etc/passwd",
        "empty": "",
    }


def test_every_way_out_is_the_same_403_whether_or_not_the_file_exists(
    http: httpx.Client, layout: dict[str, Path]
) -> None:
    bodies = set()
    for label, path in escapes(layout).items():
        response = analyze(http, {"path": path})
        assert response.status_code == 403, (label, response.text)
        assert response.json()["error"] == "outside_data_roots", label
        assert "PUSHDOWN_DATA_ROOTS" in response.json()["message"]
        bodies.add(response.content)
    assert len(bodies) == 1, "the refusal differs between paths: an existence oracle"
    assert http.get("/tables").json() == {"tables": []}  # nothing was queued, nothing read


def test_paths_under_the_roots_are_accepted(layout: dict[str, Path]) -> None:
    roots = [str(layout["root"]), "s3a://allowed-bucket/"]
    table = layout["root"] / "tables" / "t"
    assert resolve_source(str(table), roots) == str(table.resolve())
    assert resolve_source(f"file://{table}", roots) == str(table.resolve())
    assert resolve_source(f"{layout['root']}/tables/./t/../t", roots) == str(table.resolve())
    assert resolve_source("s3a://allowed-bucket/warehouse/t/", roots) == "s3a://allowed-bucket/warehouse/t/"


def test_a_relative_path_is_resolved_against_the_working_directory(layout: dict[str, Path]) -> None:
    cwd = os.getcwd()
    os.chdir(layout["root"])
    try:
        assert resolve_source("tables/t", [str(layout["root"])]) == str((layout["root"] / "tables" / "t").resolve())
        with pytest.raises(InputError) as refused:
            resolve_source("../outside/secret.csv", [str(layout["root"])])
        assert refused.value.code == "outside_data_roots"
    finally:
        os.chdir(cwd)


def test_a_missing_path_under_a_root_is_a_plain_404ish_422(http: httpx.Client, layout: dict[str, Path]) -> None:
    response = analyze(http, {"path": str(layout["root"] / "tables" / "nope.csv")})
    assert (response.status_code, response.json()["error"]) == (422, "path_not_found")


@pytest.mark.parametrize("key", ["path", "PATH", "paths"])
def test_reader_options_cannot_name_another_source(http: httpx.Client, layout: dict[str, Path], key: str) -> None:
    body = {"path": str(layout["root"] / "tables" / "t"), "reader_options": {key: str(layout["secret"])}}
    response = analyze(http, body)
    assert (response.status_code, response.json()["error"]) == (422, "reserved_option")
    assert response.json()["path"] == f"$.reader_options.{key}"


@pytest.mark.parametrize("table", ["csv.`/etc/passwd`", "parquet.`/tmp/x`", "a b", "x;drop", "`t`"])
def test_a_table_name_cannot_point_at_a_file(http: httpx.Client, table: str) -> None:
    response = http.post("/tables/t/analyze", json={"table": table})
    assert (response.status_code, response.json()["error"], response.json()["path"]) == (
        422,
        "invalid_table",
        "$.table",
    )


# ---------------------------------------------------------------- Spark: what a failing job says


@pytest.fixture(scope="module")
def spark_http(layout: dict[str, Path]) -> Iterator[httpx.Client]:
    if not java_available():
        pytest.skip("no Java for Spark")
    spark = get_spark()
    app = create_app(_make_settings(data_roots=[str(layout["base"])]))
    app.state.analyzer = Analyzer(app.state.analyzer.store, lambda: spark)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def wait_for(http: httpx.Client, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 180
    while True:
        job = http.get(f"/jobs/{job_id}").json()
        if job["state"] in ("succeeded", "failed"):
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.2)


def test_a_failing_job_says_one_line_without_the_file_s_content(
    spark_http: httpx.Client, layout: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    """Types inferred from a sample, then FAILFAST on a value that does not parse: Spark quotes the value.
    The job's error must not."""
    bad = layout["base"] / "bad.csv"
    bad.write_text("a\n" + "1\n" * 5000 + f"{SECRET}\n")
    options = {"mode": "FAILFAST", "inferSchema": "true", "samplingRatio": "0.001"}
    body = {"path": str(bad), "format": "csv", "reader_options": options}
    response = spark_http.post("/tables/bad/analyze", json=body)
    assert response.status_code == 202, response.text
    job = wait_for(spark_http, response.json()["job_id"])
    assert job["state"] == "failed"
    assert SECRET not in job["error"] and "\n" not in job["error"]
    assert "server log" in job["error"]
    assert SECRET in caplog.text, "Spark's own error did not quote the record: this test shows nothing"
    assert "bad" not in [t["name"] for t in spark_http.get("/tables").json()["tables"]]


def test_a_missing_source_says_so_in_one_line(spark_http: httpx.Client, layout: dict[str, Path]) -> None:
    gone = layout["base"] / "gone"
    gone.mkdir()
    response = spark_http.post("/tables/gone/analyze", json={"path": str(gone), "format": "parquet"})
    assert response.status_code == 202, response.text
    gone.rmdir()  # vanishes after the check: Spark's own error must still be one readable line
    job = wait_for(spark_http, response.json()["job_id"])
    assert job["state"] == "failed" and "\n" not in job["error"] and "JVM" not in job["error"]
