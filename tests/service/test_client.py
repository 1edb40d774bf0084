"""The Python client against a real HTTP server and in-process: the same answers, the service's errors as
``PushdownError``, and analyze, tables and history through both transports."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from api.app import create_app
from service.analyze import Analyzer
from service.client import PushdownClient, PushdownError
from tests.spark.world import catalog
from tests.spark_session import get_spark

SQL = (
    "SELECT o.o_id, c.c_name FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
    "WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5 AND score(o.o_comment)"
)
FUNCTIONS = {"score": {"cost": 5000}}


def stable(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k not in ("request_id", "context")}


@pytest.fixture
def served(serve: Any, make_settings: Any, tmp_path: Path) -> Any:
    settings = make_settings(api_token="s3cret", data_dir=tmp_path)
    app = create_app(settings)
    # analyze on the run's shared session, never stopped by the app's idle timer (as tests/analyze/test_http.py)
    app.state.analyzer = Analyzer(app.state.analyzer.store, get_spark)
    with serve(app) as url:
        yield url, settings


def test_http_and_in_process_answers_agree(served: Any) -> None:
    url, settings = served
    remote = PushdownClient(url, token="s3cret").optimize(SQL, catalog=catalog(), functions=FUNCTIONS)
    local = PushdownClient(settings=settings).optimize(SQL, catalog=catalog(), functions=FUNCTIONS)
    assert stable(remote) == stable(local)
    assert remote["spark"]["barriers"] == ["score(o.o_comment)"] and remote["spark"]["conf"] == {}
    assert remote["cost"]["savings_vs_baseline"] > 0.5


def test_errors_carry_status_code_and_path(served: Any) -> None:
    url, settings = served
    with pytest.raises(PushdownError) as denied:
        PushdownClient(url, token="wrong").optimize("SELECT 1")
    assert denied.value.status == 401 and denied.value.is_client_error
    for client in (PushdownClient(url, token="s3cret"), PushdownClient(settings=settings)):
        with pytest.raises(PushdownError) as bad:
            client.optimize("SELECT o.nope FROM orders o", catalog=catalog())
        assert bad.value.status == 422 and bad.value.path == "$.sql" and bad.value.code
    with pytest.raises(PushdownError) as down:
        PushdownClient("http://127.0.0.1:9", timeout=2).tables()
    assert down.value.status == 503 and not down.value.is_client_error


def test_analyze_tables_and_history_over_http(served: Any, tmp_path: Path) -> None:
    url, _ = served
    path = tmp_path / "cities.parquet"
    pq.write_table(pa.table({"id": list(range(200)), "name": [f"c{i % 17}" for i in range(200)]}), path)
    client = PushdownClient(url, token="s3cret", timeout=120)
    result = client.analyze("cities", path=str(path))
    assert result["table"] == "cities" and result["row_count"] == 200
    assert [t["name"] for t in client.tables()] == ["cities"]
    answer = client.optimize(
        "SELECT name FROM cities WHERE id > 150",
        catalog={"tables": {"cities": {"ref": "cities"}}},
        context={"pipeline": "p1", "task": "t1", "run": "r1"},
    )
    deadline = time.monotonic() + 30
    while not (items := client.history(pipeline="p1")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [i["id"] for i in items] == [answer["request_id"]]


def test_in_process_history_and_tables_read_what_the_server_stored(served: Any) -> None:
    url, settings = served
    answer = PushdownClient(url, token="s3cret").optimize(
        SQL, catalog=catalog(), functions=FUNCTIONS, context={"pipeline": "p2", "task": "t", "run": "r"}
    )
    local = PushdownClient(settings=settings)
    deadline = time.monotonic() + 30
    while not (items := local.history(pipeline="p2")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [i["id"] for i in items] == [answer["request_id"]]
    assert local.tables() == []
