"""``replaced(obj, **changes)``: ``dataclasses.replace`` for the engine's frozen, slotted nodes, at half its cost.

Placement rebuilds thousands of nodes per request (a candidate's path, each with new children), and
``dataclasses.replace`` looks the fields up, checks them and calls ``__init__`` every time. A node class here
has no ``__post_init__`` and no slot besides its fields, so a copy is its fields set on a new object; compiled
by mypyc (a native class, no slots) it is its constructor called with every field, by ``_native_copy`` (itself
compiled: a copier written with ``exec`` would run interpreted); a class that has a ``__post_init__`` or other
state is copied by ``dataclasses.replace`` as before.

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
from dataclasses import dataclass, fields, replace
from typing import Any, Final, TypeVar

T = TypeVar("T")

#: Per class: how it is copied (``_copier``) and its field names, or None when ``dataclasses.replace`` copies it.
_COPIERS: Final[dict[type, tuple[Copier, frozenset[str]] | None]] = {}


@dataclass(frozen=True, slots=True)
class Copier:
    """How one class is copied: a compiled class by its constructor (``_native_copy``), a slotted one by the
    function ``written`` for it."""

    cls: type
    names: tuple[str, ...]
    positional: bool  # the constructor takes the fields in order: keywords cost it a lookup per argument
    written: Callable[[Any, dict[str, Any]], Any] | None = None


def _native_copy(how: Copier, obj: Any, changes: dict[str, Any]) -> Any:
    """A new object of a compiled class: its constructor called with ``obj``'s fields and the ``changes``."""
    values = [changes[n] if n in changes else getattr(obj, n) for n in how.names]
    if how.positional:
        return how.cls(*values)
    return how.cls(**dict(zip(how.names, values, strict=True)))


def _copier(cls: type) -> Copier | None:
    """How ``cls`` is copied from an object and a dict of changes; None when it is not a plain frozen dataclass
    with slots (or compiled)."""
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
    if native:
        return Copier(cls, names, _positional(cls, names))
    # interpreted (an uncompiled checkout): one function per class, written once. ``changes`` arrives as one dict,
    # not as keywords: a compiled caller then passes it as it is, where keywords would be copied into a new dict
    spelled = [f"changes[{n!r}] if {n!r} in changes else obj.{n}" for n in names]
    lines = ["def copy(obj, changes):", "    new = new_(cls)"]
    lines += [f"    set_(new, {n!r}, {v})" for n, v in zip(names, spelled, strict=True)]
    lines.append("    return new")
    scope: dict[str, Any] = {"new_": object.__new__, "set_": object.__setattr__, "cls": cls}
    exec("\n".join(lines), scope)  # noqa: S102 - the source is made of a dataclass's own field names
    return Copier(cls, names, False, scope["copy"])


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
        known = _COPIERS[cls] = None if copier is None else (copier, frozenset(copier.names))
    if known is None:
        return replace(obj, **changes)  # type: ignore[type-var]
    how, names = known
    for name in changes:
        if name not in names:  # as dataclasses.replace says it
            raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument {name!r}")
    result: T = _native_copy(how, obj, changes) if how.written is None else how.written(obj, changes)
    return result
