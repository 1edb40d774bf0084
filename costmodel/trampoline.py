"""Recursive tree functions without Python recursion: each recursive call is a ``yield`` of the call's generator.

A plan or expression may nest 10,000 levels; Python's default limit is 1,000
frames and raising it process-wide risks overflowing the C stack. A function
over a tree is written as a generator (a *step*) that yields the generator of
each sub-call and receives its result, and yields its own result last, wrapped
in ``Done``; ``run`` drives them on an explicit stack, so the depth of the tree
costs heap, not frames::

    >>> def depth(t: tuple[object, ...]) -> Step[int]:
    ...     deepest = 0
    ...     for child in t:
    ...         deepest = max(deepest, (yield depth(child)))  # type: ignore[arg-type]
    ...     yield Done(deepest + 1)
    >>> nested: tuple[object, ...] = ()
    >>> for _ in range(50_000):
    ...     nested = (nested,)
    >>> run(depth(nested))
    50001

A step ends with ``yield Done(result)``; a step that yielded ``Done`` is never resumed again. A step may still
``return`` its result (``run`` takes it); the engine's steps do not: ``Step``'s return type is None, so mypy
rejects a ``return`` with a value.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Generic, TypeVar, Union

T = TypeVar("T")


class Done(Generic[T]):
    """A step's result, yielded as its last act."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


#: A step of a trampolined function: yields sub-calls (their generators), then ``Done`` with its result.
Step = Generator[Union["Step[Any]", "Done[T]"], Any, None]


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
        except StopIteration as done:  # a step that returned instead of yielding Done
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
        if isinstance(sub, Done):
            stack.pop()  # never resumed: finishing it would raise the StopIteration Done avoids
            if not stack:
                return sub.value  # type: ignore[no-any-return]
            value = sub.value
            continue
        stack.append(sub)
        value = None
