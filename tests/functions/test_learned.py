"""Function costs learned from runs, over real HTTP on a SQLite history: a feedback body's ``functions`` are stored
per request and function, the next request that sends the function as detected or measured gets the learned cost
(median, interval from the spread), a declared cost still wins, bad bodies are refused with a path, and every
function in an answer says where its cost came from."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.feedback.functions import learned_cost
from service.function_costs import DEFAULT_UNIT_S, calibration_option
from service.settings import Settings

Serve = Callable[[FastAPI], AbstractContextManager[str]]
CATALOG: dict[str, Any] = {
    "tables": {
        "t": {
            "columns": [{"name": "a", "type": "int"}, {"name": "s", "type": "string"}],
            "row_count": 100_000,
            "column_stats": {"a": {"ndv": 100_000, "null_count": 0}},
        },
        "u": {"columns": [{"name": "a", "type": "int"}], "row_count": 1000, "column_stats": {"a": {"ndv": 1000}}},
    }
}
SQL = "SELECT t.s FROM t JOIN u ON t.a = u.a WHERE score(t.s) AND levenshtein(t.s, 'x') > 2"
MEASURED = {"cost": 150.0, "deterministic": True, "source": "measured: 200 sample rows", "interval": [100, 300]}


@pytest.fixture
def http(serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path) -> Iterator[httpx.Client]:
    app = create_app(make_settings(data_dir=tmp_path / "data"))
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def optimize(http: httpx.Client, functions: dict[str, Any] | None, **options: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"sql": SQL, "catalog": CATALOG}
    if functions is not None:
        body["functions"] = functions
    if options:
        body["options"] = options
    response = http.post("/optimize", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def costs(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in answer["function_costs"]}


def report(http: httpx.Client, answer: dict[str, Any], per_call_s: float, calls: float = 500) -> dict[str, Any]:
    body = {"nodes": [], "functions": [{"name": "score", "calls": calls, "per_call_s": per_call_s, "unit_s": 1e-8}]}
    response = http.post(f"/feedback/{answer['request_id']}", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_measured_cost_yields_to_what_runs_observed_and_a_declared_one_never_does(http):
    first = optimize(http, {"score": MEASURED})
    assert costs(first)["score"]["source"] == "measured: 200 sample rows"
    assert costs(first)["levenshtein"]["source"] == "default"  # undeclared: priced by the engine's default, never moved
    assert report(http, first, 2e-5)["function_observations"] == 1  # 2e-5 s / 1e-8 s = 2000 units

    second = optimize(http, {"score": MEASURED})
    learned = costs(second)["score"]
    assert learned["source"] == "learned" and learned["cost"] == 2000.0 and learned["observations"] == 1
    assert learned["interval"] == [1000.0, 4000.0]  # one run: a factor of two either way
    assert learned["replaced"] == "measured: 200 sample rows"

    report(http, second, 4e-5)
    report(http, optimize(http, {"score": MEASURED}), 3e-5)
    third = costs(optimize(http, {"score": MEASURED}))["score"]
    assert third["cost"] == 3000.0 and third["interval"] == [2000.0, 4000.0] and third["observations"] == 3

    declared = costs(optimize(http, {"score": {"cost": 7, "deterministic": True}}))["score"]
    assert declared == {"name": "score", "cost": 7.0, "interval": [7.0, 7.0], "source": "declared"}
    off = costs(optimize(http, {"score": MEASURED}, feedback=False))["score"]
    assert off["source"] == "measured: 200 sample rows"


def test_a_learned_cost_changes_the_decision(http):
    """Detected at the default of a cheap kind, a function is pushed below the join; once runs show it costs
    thousands of comparisons it is held above."""
    cheap = {"score": {"cost": 2.0, "deterministic": True, "source": "detected: phonetic default"}}
    before = optimize(http, cheap)
    assert before["spark"]["barriers"] == []
    report(http, before, 5e-5)
    after = optimize(http, cheap)
    assert costs(after)["score"]["source"] == "learned"
    assert after["spark"]["barriers"] == ["score(t.s)"]


@pytest.mark.parametrize(
    ("item", "path"),
    [
        ({"name": "score", "calls": -1, "per_call_s": 1e-5, "unit_s": 1e-8}, "$.functions[0].calls"),
        ({"name": "score", "calls": 1, "per_call_s": 1e-5}, "$.functions[0].unit_s"),
        ({"name": "score", "calls": 1, "per_call_s": 1e-5, "unit_s": 1e-8, "x": 1}, "$.functions[0].x"),
    ],
)
def test_a_bad_functions_item_is_refused_with_its_path_and_nothing_is_stored(http, item, path):
    answer = optimize(http, {"score": MEASURED})
    response = http.post(f"/feedback/{answer['request_id']}", json={"nodes": [], "functions": [item]})
    assert response.status_code == 422 and response.json()["path"] == path
    assert costs(optimize(http, {"score": MEASURED}))["score"]["source"] == "measured: 200 sample rows"


def test_time_saved_uses_the_calibration_sent_or_the_default(http):
    calibration = {"unit_s": 2e-8, "interval": [1e-8, 4e-8], "source": "measured: test"}
    answer = optimize(http, {"score": {"cost": 5000, "deterministic": True}}, calibration=calibration)
    saved = answer["cost"]["time_saved_vs_baseline_s"]
    units = answer["cost"]["baseline"]["total"] - answer["cost"]["after"]["total"]
    assert units > 0 and saved["estimate"] == pytest.approx(units * 2e-8, rel=1e-3)
    assert saved["interval"][0] <= saved["estimate"] <= saved["interval"][1]
    assert saved["unit_source"] == "measured: test"
    default = optimize(http, {"score": {"cost": 5000, "deterministic": True}})["cost"]["time_saved_vs_baseline_s"]
    assert default["unit_s"] == DEFAULT_UNIT_S and default["unit_source"] == "default"
    bad = http.post("/optimize", json={"sql": SQL, "catalog": CATALOG, "options": {"calibration": {"unit_s": 0}}})
    assert bad.status_code == 422 and bad.json()["path"] == "$.options.calibration.unit_s"


def test_a_functions_source_and_interval_are_checked():
    bad = {"sql": SQL, "catalog": CATALOG, "functions": {"score": {"cost": 5, "interval": [9, 3]}}}
    from service.client import PushdownClient, PushdownError

    with pytest.raises(PushdownError) as raised:
        PushdownClient().optimize_body(bad)
    assert raised.value.path == "$.functions.score.interval"  # where the request put it
    assert learned_cost([1.0, 3.0]) == {"cost": 2.0, "interval": [1.0, 3.0], "observations": 2}
    assert calibration_option(None) == (None, None)
