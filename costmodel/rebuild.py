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

#: Per class, its copier (``_copier``) and field names, or None when it is copied by ``dataclasses.replace``.
_COPIERS: Final[dict[type, tuple[Callable[[Any, dict[str, Any]], Any], frozenset[str]] | None]] = {}


def _copier(cls: type) -> Callable[[Any, dict[str, Any]], Any] | None:
    """A function ``(obj, changes)`` making a new ``cls`` object from ``obj``'s fields and the ``changes`` dict,
    written once per class."""
    names = tuple(_field_names(cls))
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
    # ``changes`` arrives as one dict, not as keywords: a compiled caller then passes it as it is, where keywords
    # would be copied into a new dict and parsed again by the interpreted copier
    spelled = [f"changes[{n!r}] if {n!r} in changes else obj.{n}" for n in names]
    head = "def copy(obj, changes):"
    if native:
        # by position when the constructor takes the fields in order: keywords cost a compiled constructor a
        # lookup per argument
        if _positional(cls, names):
            lines = [head, f"    return cls({', '.join(spelled)})"]
        else:
            lines = [head, f"    return cls({', '.join(f'{n}={v}' for n, v in zip(names, spelled, strict=True))})"]
    else:
        lines = [head, "    new = new_(cls)"]
        lines += [f"    set_(new, {n!r}, {v})" for n, v in zip(names, spelled, strict=True)]
        lines.append("    return new")
    scope: dict[str, Any] = {"new_": object.__new__, "set_": object.__setattr__, "cls": cls}
    exec("\n".join(lines), scope)  # noqa: S102 - the source is made of a dataclass's own field names
    copy: Callable[[Any, dict[str, Any]], Any] = scope["copy"]
    return copy


def _field_names(cls: type) -> list[str]:
    return [f.name for f in fields(cls)]


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
        known = _COPIERS[cls]
    except KeyError:
        copier = _copier(cls)
        known = _COPIERS[cls] = None if copier is None else (copier, frozenset(_field_names(cls)))
    if known is None:
        return replace(obj, **changes)  # type: ignore[type-var]
    copy, names = known
    for name in changes:
        if name not in names:  # as dataclasses.replace says it
            raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument {name!r}")
    result: T = copy(obj, changes)
    return result
