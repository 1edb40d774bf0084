"""Timing a UDF in the driver: a row function's sample is cycled until its calls outlast the timer's noise, and a
vectorized one is timed on a batch the size Spark hands it, its rows priced without a pickled row's trip."""

from __future__ import annotations

import time
from typing import Any

from pushdown_client.calibration import Calibration
from pushdown_client.functions import DetectedFunction
from pushdown_client.udf_timing import measured, time_calls


def test_a_fast_row_function_is_timed_on_its_sample_cycled_and_returns_each_row_once():
    seen: list[int] = []

    def f(x: int) -> bool:
        seen.append(x)
        time.sleep(0)  # a few microseconds a call
        return x % 2 == 0

    returned: list[Any] = []
    runs = time_calls(f, [(i,) for i in range(20)], False, budget_s=1.0, results=returned, timed_s=0.2)
    assert returned == [i % 2 == 0 for i in range(20)]  # each sampled row once, in order
    assert len(seen) > 2 * 20  # the sample, cycled beyond one pass (so long as a first call takes under 5 ms)
    assert len(runs) == 5


def test_a_slow_row_function_is_held_to_the_budget():
    calls = []
    runs = time_calls(lambda x: calls.append(time.sleep(0.01)), [(i,) for i in range(50)], False, 0.05)
    assert len(calls) <= 12 and 0 < len(runs) <= 5  # a first call, five calls, an early stop at the deadline


def test_a_vectorized_function_is_timed_on_a_batch_of_sparks_size():
    sizes: list[int] = []

    def g(texts: Any) -> Any:
        sizes.append(len(texts))
        return texts.str.len() > 3

    returned: list[Any] = []
    # a budget no loaded machine reaches: the batch is sized by the budget only when five would outlast it
    time_calls(g, [(f"row {i}",) for i in range(30)], True, budget_s=60.0, results=returned, batch_rows=1000)
    assert sizes[0] == 30 and set(sizes[1:]) == {1000}  # the sample once (what it returns), then batches
    assert len(returned) == 30


def test_a_vectorized_functions_row_carries_no_pickled_trip():
    cal = Calibration(1e-8, (1e-8, 1e-8), 2e-6, (1e-6, 3e-6))
    row = measured(DetectedFunction("f", "python_udf"), [4e-7], 200, cal)
    batch = measured(DetectedFunction("f", "pandas_udf"), [4e-7], 200, cal)
    assert row.per_call_s == 2e-6 + 4e-7 and batch.per_call_s == 4e-7
    assert batch.interval[1] == row.interval[1]  # its interval still reaches a pickled trip
