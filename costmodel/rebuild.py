"""``replaced(obj, **changes)``: ``dataclasses.replace`` for the engine's frozen, slotted nodes, at half its cost.

Placement rebuilds thousands of nodes per request (a candidate's path, each with new children), and
``dataclasses.replace`` looks the fields up, checks them and calls ``__init__`` every time. A node class here
has no ``__post_init__`` and no slot besides its fields, so a copy is its fields set on a new object; compiled
by mypyc (a native class, no slots) it is its constructor called with every field; a class that has a
``__post_init__`` or other state is copied by ``dataclasses.replace`` as before.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True, slots=True)
    ... class Point:
    ...     x: int
    ...     y: int = 0
    >>> replaced(Point(1, 2), y=5)
    Point(x=1, y=5)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any, Final, TypeVar

T = TypeVar("T")

_MISSING: Final[Any] = object()

#: Per class, its copier (``_copier``), or None when it is copied by ``dataclasses.replace``.
_COPIERS: Final[dict[type, Callable[..., Any] | None]] = {}


def _copier(cls: type) -> Callable[..., Any] | None:
    """A function ``(obj, **changes)`` making a new ``cls`` object from ``obj``'s fields, written once per class."""
    names = tuple(f.name for f in fields(cls))
    params = getattr(cls, "__dataclass_params__", None)
    plain = (
        params is not None
        and params.frozen
        and not hasattr(cls, "__post_init__")
        and all(f.init and f.name.isidentifier() for f in fields(cls))
    )
    slotted = tuple(getattr(cls, "__slots__", ())) == names
    native = tuple(getattr(cls, "__mypyc_attrs__", ())) == names  # compiled: no slots, a compiled constructor
    if not plain or not (slotted or native):
        return None
    head = f"def copy(obj, *, {', '.join(f'{n}=MISSING' for n in names)}):"
    if native:
        # by position when the constructor takes the fields in order: keywords cost a compiled constructor a
        # lookup per argument
        spelled = [f"obj.{n} if {n} is MISSING else {n}" for n in names]
        if _positional(cls, names):
            lines = [head, f"    return cls({', '.join(spelled)})"]
        else:
            lines = [head, f"    return cls({', '.join(f'{n}={v}' for n, v in zip(names, spelled, strict=True))})"]
    else:
        lines = [head, "    new = new_(cls)"]
        lines += [f"    set_(new, {n!r}, obj.{n} if {n} is MISSING else {n})" for n in names]
        lines.append("    return new")
    scope: dict[str, Any] = {"MISSING": _MISSING, "new_": object.__new__, "set_": object.__setattr__, "cls": cls}
    exec("\n".join(lines), scope)  # noqa: S102 - the source is made of a dataclass's own field names
    copy: Callable[..., Any] = scope["copy"]
    return copy


def _positional(cls: type, names: tuple[str, ...]) -> bool:
    """Whether ``cls(*values)`` takes ``names`` in that order (its signature says so)."""
    try:
        parameters = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):  # no signature to read
        return False
    return [p.name for p in parameters] == list(names) and all(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters
    )


def replaced(obj: T, **changes: Any) -> T:
    """A copy of dataclass ``obj`` with ``changes``; the same result as ``dataclasses.replace``."""
    cls = type(obj)
    try:
        copy = _COPIERS[cls]
    except KeyError:
        copy = _COPIERS[cls] = _copier(cls)
    if copy is None:
        return replace(obj, **changes)  # type: ignore[type-var]
    result: T = copy(obj, **changes)
    return result
