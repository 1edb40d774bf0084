"""The math behind costs in seconds: a run's Python timings become a per-call cost only when the calls' own time
outweighs the workers' start-up, a DataFrame UDF's timing reaches the request's name for it, and the session's
calibration reads a per-row slope off any clock (executor seconds on Spark), cancelling a job's fixed cost."""

from __future__ import annotations

import pytest

from pushdown_client.calibration import Calibration, _per_row, operator_k
from pushdown_client.executor_time import new_stage_seconds
from pushdown_client.feedback.python_udfs import (
    MEASURED_FACTOR,
    MIN_CALLS,
    TRUST_FACTOR,
    PythonEvaluation,
    function_observations,
)
from pushdown_client.functions import calibrated_options


def test_a_udf_seen_on_few_calls_is_not_learned_from():
    """520 calls whose Python time is mostly the workers' start-up would price the UDF 40 times too dear."""
    few = [PythonEvaluation(("check",), 520, 0.47)]
    assert function_observations(few, 5e-8, 2e-6, fixed_s=0.02) == []
    many = [PythonEvaluation(("check",), 75_000, 1.52)]
    (sent,) = function_observations(many, 5e-8, 2e-6, fixed_s=0.02)
    assert sent["calls"] == 75_000 and sent["per_call_s"] == pytest.approx((1.52 - 0.02) / 75_000 + 2e-6)


def test_a_run_far_dearer_a_call_than_the_drivers_measurement_is_not_learned_from():
    """The DataFrame workload's d01 above its joins: 2,296 calls in 2.6 s of Python time (first-batch imports,
    Arrow set-up, the wait for the joins' rows) where the driver measured 55 us a call: not the function's cost.
    Within ``MEASURED_FACTOR`` of the measurement (the executors' contention) it is learned."""
    run = [PythonEvaluation(("__pushdown_udf_score",), 2296, 2.6)]
    measured = {"__pushdown_udf_score": 5.5e-5}
    assert function_observations(run, 4e-9, 5e-6, fixed_s=0.0, measured_s=measured) == []
    assert function_observations(run, 4e-9, 5e-6, fixed_s=0.0) != []  # without a measurement, nothing to hold it to
    near = [PythonEvaluation(("__pushdown_udf_score",), 2296, 2296 * 5.5e-5 * (MEASURED_FACTOR - 0.5))]
    (sent,) = function_observations(near, 4e-9, 5e-6, fixed_s=0.0, measured_s=measured)
    assert sent["per_call_s"] <= MEASURED_FACTOR * measured["__pushdown_udf_score"]


def test_enough_calls_whose_time_is_mostly_start_up_are_not_learned_from():
    """Four nodes (one per shuffle partition above a join) each start the function: their fixed part is four
    times the calibration's."""
    fixed = 0.1
    nodes = [PythonEvaluation(("check",), MIN_CALLS, fixed + 0.05) for _ in range(4)]
    assert function_observations(nodes, 1e-8, 0.0, fixed_s=fixed) == []
    enough = (TRUST_FACTOR - 1) * fixed + 0.01  # beyond the fixed part, per node
    nodes = [PythonEvaluation(("check",), MIN_CALLS, fixed + enough) for _ in range(4)]
    (sent,) = function_observations(nodes, 1e-8, 0.0, fixed_s=fixed)
    assert sent["calls"] == 4 * MIN_CALLS and sent["per_call_s"] == pytest.approx(enough / MIN_CALLS)


def test_a_dataframe_udf_run_under_its_own_name_is_reported_under_its_wire_name():
    evaluations = [PythonEvaluation(("score",), 5000, 1.0), PythonEvaluation(("other",), 5000, 1.0)]
    sent = function_observations(
        evaluations, 1e-8, 0.0, ["__pushdown_udf_score"], aliases={"score": "__pushdown_udf_score"}
    )
    assert [s["name"] for s in sent] == ["__pushdown_udf_score"]


def test_the_calibration_reads_the_slope_of_any_clock():
    """An executor clock that charges 0.2 s a job whatever its rows and 6 ns a row: 6 ns a row, not the whole
    run's time over its rows."""
    ran: list[int] = []

    def clock(action):
        action()
        return 0.2 + 6e-9 * ran[-1]

    per_row, (low, high) = _per_row(ran.append, 4_000_000, 3, clock)
    assert per_row == pytest.approx(6e-9)
    assert low == pytest.approx(6e-9) and high == pytest.approx((0.2 + 6e-9 * 4_000_000) / 4_000_000)


def test_executor_seconds_count_only_the_stages_a_block_started():
    before = {(0, 0): 900, (1, 0): 100}
    after = {**before, (2, 0): 1500, (2, 1): 250, (3, 0): 0}
    assert new_stage_seconds(before, after) == pytest.approx(1.75)


def test_an_operator_constant_is_its_query_row_in_units_less_what_else_the_row_is_priced():
    """A broadcast join's probe row at 126 ns against a 3.8 ns unit: 33 units, of which scan and arithmetic are
    2; an operator measured cheaper than that is still at least one comparison."""
    assert operator_k(126e-9, 3.8e-9) == 31.2
    assert operator_k(4e-9, 3.8e-9) == 1.0


def test_the_calibration_reaches_the_request_under_the_callers_own_options():
    calibration = Calibration(4e-9, (3e-9, 5e-9), 1e-5, (8e-6, 2e-5), operator_costs={"join": 30.0, "aggregate": 45.0})
    options = calibrated_options({"mode": "cost", "operator_costs": {"join": 8}}, calibration)
    assert options is not None
    assert options["operator_costs"] == {"join": 8, "aggregate": 45.0}  # the caller's join constant wins
    assert options["calibration"]["operator_costs"] == {"join": 30.0, "aggregate": 45.0}  # what was measured
    assert calibrated_options(None, None) is None
