"""costmodel.trampoline: results by ``Done`` or by ``return``, errors thrown back into the caller."""

from __future__ import annotations

from typing import Any

import pytest

from costmodel.trampoline import Done, Step, run


def _sum(tree: Any, seen: list[int]) -> Step[int]:
    if isinstance(tree, int):
        seen.append(tree)
        yield Done(tree)
        seen.append(-1)  # never reached: a step that yielded Done is not resumed
        return
    total = 0
    for child in tree:
        total += yield _sum(child, seen)
    yield Done(total)


def test_done_is_the_result_and_the_step_is_not_resumed() -> None:
    seen: list[int] = []
    assert run(_sum((1, (2, 3), ((4,),)), seen)) == 10
    assert seen == [1, 2, 3, 4]


def _returns(n: int) -> Any:  # the old protocol: a generator that returns its result
    if n == 0:
        return 0
    below = yield _returns(n - 1)
    return below + 1


def test_a_returned_result_is_taken_too() -> None:
    assert run(_returns(5)) == 5


def _fails() -> Step[int]:
    if True:
        raise ValueError("below")
    yield Done(0)


def _catches() -> Step[str]:
    try:
        yield _fails()
    except ValueError as exc:
        yield Done(f"caught {exc}")


def test_an_error_is_raised_in_the_caller_at_its_yield() -> None:
    assert run(_catches()) == "caught below"
    with pytest.raises(ValueError, match="below"):
        run(_fails())


def test_deep_nesting_costs_no_frames() -> None:
    tree: Any = 1
    for _ in range(20_000):
        tree = (tree,)
    assert run(_sum(tree, [])) == 1
