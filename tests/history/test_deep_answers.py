"""Answers nested deeper than Python's ``json`` goes are printed by the command line and kept by the history.

The service accepts plans 2,500 JSON levels deep (``max_json_depth``) and answers them; the C ``json`` module
raises ``RecursionError`` past about 1,000 levels at the default recursion limit. The command line's and the
history's JSON writers and readers fall back to ``service.deep_json`` there, so a deep answer is written and read
back equal, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service import deep_json
from service.feedback.store import FeedbackStore
from service.history import HistoryStore, build_record
from service.optimize import OptimizeInput, OptimizeService
from service.settings import Settings
from tests.service.test_cli import run

#: Past the C json module's reach (about 1,000 levels), well within the request limit.
LEVELS = 1_200
CATALOG = {"tables": {"t": {"columns": [{"name": "a", "type": "int"}], "row_count": 1000}}}


def deep_request(levels: int = LEVELS) -> dict[str, Any]:
    """A filter over ``levels`` projects over a scan: the answer pushes it all the way down."""
    plan: dict[str, Any] = {"op": "scan", "table": "t"}
    for _ in range(levels):
        plan = {"op": "project", "exprs": [{"expr": {"col": "a"}, "as": "a"}], "input": plan}
    plan = {"op": "filter", "predicate": {"fn": ">", "args": [{"col": "a"}, {"lit": 40}]}, "input": plan}
    return {"plan": plan, "catalog": CATALOG}


def scan_of(plan: dict[str, Any]) -> dict[str, Any]:
    while plan["op"] != "scan":
        plan = plan["input"]
    return plan


def depth(value: Any) -> int:
    """Nesting depth of a JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, level + 1) for child in children)
    return deepest


def same(a: Any, b: Any) -> bool:
    """``a == b`` for JSON values of any depth (``==`` on dicts recurses too)."""
    return deep_json.dumps(a, sort_keys=True) == deep_json.dumps(b, sort_keys=True)


@contextmanager
def recursion_limit(limit: int) -> Iterator[None]:
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


@pytest.fixture(autouse=True)
def default_recursion_limit() -> Iterator[None]:
    """Python's default limit in this process, whatever ran before."""
    with recursion_limit(1000):
        yield


@pytest.fixture(scope="module")
def deep_answer() -> tuple[dict[str, Any], dict[str, Any]]:
    """Built before the per-test limit applies (a module fixture comes first): it sets the default limit itself."""
    request = deep_request()
    with recursion_limit(1000):
        answer = OptimizeService().optimize(OptimizeInput(**request))
        assert depth(answer) > 1_000
        with pytest.raises(RecursionError):  # what the writers met before falling back
            json.dumps(answer)
    return request, answer


def test_the_history_records_and_reads_back_a_deep_answer(
    deep_answer: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path
) -> None:
    request, answer = deep_answer
    record = build_record(request, answer)  # no texts given: the record writes them
    assert same(deep_json.loads(record.request_json), request)
    assert same(deep_json.loads(record.response_json), answer)
    store = HistoryStore.from_url(f"sqlite:///{(tmp_path / 'history.db').as_posix()}")
    try:
        store.add(record)
        stored = store.get(record.id)
    finally:
        store.close()
    assert stored is not None
    assert same(stored["request"], request) and same(stored["response"], answer)


def test_a_pipeline_tasks_runs_read_back_a_deep_answer_with_its_feedback(
    deep_answer: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path
) -> None:
    """The feedback chart reads stored answers too (``FeedbackStore.task_runs``)."""
    request, answer = deep_answer
    record = build_record({**request, "context": {"pipeline": "p", "task": "t"}}, answer)
    store = HistoryStore.from_url(f"sqlite:///{(tmp_path / 'history.db').as_posix()}")
    try:
        store.add(record)
        feedback = FeedbackStore(store)
        feedback.replace(record.id, [{"id": answer["plan"]["id"], "rows_out": 7}], [])
        runs = feedback.task_runs("p", "t")
    finally:
        store.close()
    assert [run["id"] for run in runs] == [record.id]
    assert same(runs[0]["response"], answer) and runs[0]["nodes"] == [{"id": answer["plan"]["id"], "rows_out": 7}]


def test_pushdown_optimize_json_prints_a_deep_answer(tmp_path: Path, clean_env: dict[str, str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text(deep_json.dumps(deep_request()))
    env = {**clean_env, "PUSHDOWN_DATA_DIR": str(tmp_path / "data")}
    result = run(["optimize", str(path), "--json"], env)
    assert result.returncode == 0, result.stderr[-2000:]
    answer = deep_json.loads(result.stdout)
    assert depth(answer) > 1_000
    assert scan_of(answer["plan"])["filters"] == [{"fn": ">", "args": [{"col": "a"}, {"lit": 40, "type": "int"}]}]
    assert sum(d["action"] == "pushed" for d in answer["decisions"]) == LEVELS + 1


def test_a_served_deep_answer_is_recorded_shown_and_explained(
    tmp_path: Path,
    make_settings: Callable[..., Settings],
    serve: Callable[[FastAPI], AbstractContextManager[str]],
    clean_env: dict[str, str],
) -> None:
    """Recorded by the service, then read back by the dashboard's API and by ``pushdown explain <id>``."""
    app = create_app(make_settings(data_dir=tmp_path / "data"))
    body = deep_json.dumps(deep_request()).encode()
    with serve(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        posted = http.post("/optimize", content=body, headers={"content-type": "application/json"})
        assert posted.status_code == 200, posted.text[:500]
        request_id = deep_json.loads(posted.text)["request_id"]
        shown = http.get(f"/api/optimizations/{request_id}")
        assert shown.status_code == 200, shown.text[:500]
        record = deep_json.loads(shown.text)
        answer = record["response"]  # as recorded: in full, whatever detail the caller asked for
        assert answer["request_id"] == request_id and depth(answer) > 1_000
        assert scan_of(answer["plan"])["filters"] == [{"fn": ">", "args": [{"col": "a"}, {"lit": 40, "type": "int"}]}]
        assert scan_of(record["request"]["plan"]) == {"op": "scan", "table": "t"}
    app.state.history.close()
    env = {**clean_env, "PUSHDOWN_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": os.getcwd()}
    explained = run(["explain", request_id, "--json"], env)
    assert explained.returncode == 0, explained.stderr[-2000:]
    assert json.loads(explained.stdout) == {"request_id": request_id, "feedback": None}
    as_text = run(["explain", request_id], env)
    assert as_text.returncode == 0, as_text.stderr[-2000:]
    assert as_text.stdout.count("Projection: a") == LEVELS  # the recorded plan after, every level of it


def test_a_catalog_file_deeper_than_json_goes_is_refused_as_too_deep(tmp_path: Path, clean_env: dict[str, str]) -> None:
    """Read without recursion, then refused by the request's depth limit as the HTTP API refuses it: exit 2."""
    path = tmp_path / "catalog.json"
    path.write_text('{"tables": {"t": {"x": ' + "[" * 3_000 + "]" * 3_000 + "}}}")
    env = {**clean_env, "PUSHDOWN_DATA_DIR": str(tmp_path / "data")}
    result = run(["optimize", "--sql", "SELECT a FROM t", "--catalog", str(path)], env)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr == "error: JSON nests 3004 levels deep, the limit is 2500\n  at $\n"
