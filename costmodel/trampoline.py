"""Recursive tree functions without Python recursion: each recursive call is a ``yield`` of the call's generator.

A plan or expression may nest 10,000 levels; Python's default limit is 1,000
frames and raising it process-wide risks overflowing the C stack. A function
over a tree is written as a generator that yields the generator of each
sub-call and receives its result; ``run`` drives them on an explicit stack, so
the depth of the tree costs heap, not frames::

    >>> def depth(t: tuple[object, ...]) -> Step[int]:
    ...     deepest = 0
    ...     for child in t:
    ...         deepest = max(deepest, (yield depth(child)))  # type: ignore[arg-type]
    ...     return deepest + 1
    >>> nested: tuple[object, ...] = ()
    >>> for _ in range(50_000):
    ...     nested = (nested,)
    >>> run(depth(nested))
    50001
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, TypeVar

T = TypeVar("T")

#: A step of a trampolined function: yields sub-calls (their generators), returns its result.
Step = Generator["Step[Any]", Any, T]


def run(call: Step[T]) -> T:
    """The result of ``call``, running every sub-call it yields (and theirs) on an explicit stack.

    An exception a sub-call raises is thrown into its caller at the ``yield``, as a call would raise it.
    """
    stack: list[Step[Any]] = [call]
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            if error is None:
                sub = stack[-1].send(value)
            else:
                sub, error = stack[-1].throw(error), None
        except StopIteration as done:
            stack.pop()
            if not stack:
                return done.value  # type: ignore[no-any-return]
            value = done.value
            continue
        except BaseException as exc:
            stack.pop()
            if not stack:
                raise
            error = exc
            continue
        stack.append(sub)
        value = None
