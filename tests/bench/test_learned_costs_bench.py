"""The learned-costs bench's arithmetic (no Spark): when a predicted saving counts as agreeing with the measured
one, and how a workload's figures are summed up against the issue's targets."""

from __future__ import annotations

from typing import Any

from tests.bench.scripts import load_bench

bench = load_bench("learned_costs_workload")


def query(name: str, d1: float, d2: float, predicted: float, c: float = 10.0, c2: float = 10.0) -> dict[str, Any]:
    """A query's figures as ``summarize_query`` writes them (wall and executor seconds alike)."""
    configs = {k: bench.Config(lambda: None) for k in ("C", "C2", "D1", "D2")}
    for key, value in (("C", c), ("C2", c2), ("D1", d1), ("D2", d2)):
        configs[key].wall, configs[key].executor = [value], [value]
    run = {"predicted_saved_s": predicted}
    return bench.summarize_query(name, configs, dict(run), dict(run), 100, 10, True)


def test_a_prediction_agrees_within_the_factor_or_when_nothing_is_saved_within_noise():
    assert bench.agrees(1.4, 1.0, 0.0) and bench.agrees(0.7, 1.0, 0.0)
    assert not bench.agrees(1.6, 1.0, 0.0) and not bench.agrees(0.6, 1.0, 0.0)
    assert not bench.agrees(1.0, -0.5, 0.1)  # a saving predicted where the run was slower
    assert bench.agrees(0.0, 0.3, 0.4) and not bench.agrees(0.0, 0.5, 0.4)
    # a saving predicted below C's own noise is a prediction of nothing: checked against the noise, not as a ratio
    assert bench.agrees(0.008, -0.019, 0.025) and not bench.agrees(0.008, 0.3, 0.025)


def test_the_workload_summary_checks_the_three_targets():
    rows = {
        "p01": query("p01", d1=3.0, d2=2.0, predicted=8.5),  # saves 8 s: 8.5 agrees
        "p02": query("p02", d1=2.5, d2=1.0, predicted=20.0),  # saves 9 s: 20 does not
        "n01": query("n01", d1=12.0, d2=10.2, predicted=0.0, c2=10.5),  # run 1 slower than C beyond C2/C
    }
    summary = bench.summarize(rows, list(rows))
    assert summary["prediction_within_1_5"] == ["p01", "n01"]
    assert summary["first_run_slower_than_c_beyond_noise"] == ["n01"]
    assert summary["geomean_d2_over_c"] == round((0.2 * 0.1 * 1.02) ** (1 / 3), 4)
    assert summary["targets"] == {
        "geomean_d2_over_c_at_most_0_3": True,
        "first_run_never_slower_than_c_beyond_noise": False,
        "prediction_within_1_5_on_80_percent": False,
    }
