"""Whether a sqlglot function call can travel as a wire call (name + positional arguments) and come back as
the same call: ``plan_to_sql`` rebuilds it with ``exp.func(name, *args)``, so the adapter accepts only the
calls that rebuild identically, and refuses the others rather than change what they compute.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from service.sql.common import BASE_DIALECT, build_function, release
from service.sql.errors import SQLGLOT_FAILURES
from service.sql.parse import unsupported


def present(value: Any) -> bool:
    """Whether sqlglot's equality reads an argument: None, False and an empty list count as absent."""
    return value is not None and value is not False and not (type(value) is list and not value)


#: Function flags sqlglot sets from the dialect that do not change the rows (Spark's COUNT returns BIGINT).
HARMLESS_FLAGS = ("big_int",)


def positional_args(e: exp.Func, name: str) -> list[exp.Expr]:
    """``e``'s arguments in the order of its class's keys; an option that is not an expression is refused.

    >>> import sqlglot
    >>> [a.sql() for a in positional_args(sqlglot.parse_one("SUBSTRING(s, 2, 3)"), "substring")]
    ['s', '2', '3']
    """
    positional: list[exp.Expr] = []
    for key in e.arg_types:
        value = e.args.get(key)
        if value is None or value is False:
            continue
        if isinstance(value, list):
            if not all(isinstance(item, exp.Expr) for item in value):
                raise unsupported(f"function {name.upper()} with option {key}", e)
            positional.extend(value)
        elif isinstance(value, exp.Expr):
            positional.append(value)
        elif key not in HARMLESS_FLAGS:
            raise unsupported(f"function {name.upper()} with option {key}", e)
    return positional


def check_rebuilds(e: exp.Func, name: str, args: list[exp.Expr]) -> None:
    """Refuse ``e`` unless ``exp.func(name, *args)`` builds a call equal to it (``args`` are copied)."""
    try:
        rebuilt = build_function(name, args)
    except SQLGLOT_FAILURES as err:
        raise unsupported(f"function {name.upper()}", e) from err
    for flag in HARMLESS_FLAGS:
        if e.args.get(flag) is not None:
            rebuilt.set(flag, e.args[flag])
    same = rebuilt == e
    release(rebuilt)  # only compared: freed now, not by the cyclic collector
    if not same:
        raise unsupported(f"function {name.upper()} in this form", e)


def _generic_builder(builder: Any, cls: type[exp.Func]) -> bool:
    """Whether ``builder`` is ``cls.from_arg_list`` as ``exp.Func`` defines it (no subclass overrides it). Read
    by name and owner, the same whether sqlglot runs as Python or compiled (``sqlglot[c]``), where the bound
    classmethod is a builtin without ``__func__``."""
    if getattr(builder, "__self__", None) is not cls or getattr(builder, "__name__", None) != "from_arg_list":
        return False
    owner = next(klass for klass in cls.__mro__ if "from_arg_list" in vars(klass))
    return owner is exp.Func


def rebuilds_in_place(e: exp.Func, name: str, positional: list[exp.Expr]) -> bool:
    """Whether ``exp.func(name, *positional)`` is sure to rebuild ``e``, decided without building it: the name's
    builder is the generic ``from_arg_list`` of ``e``'s own class (602 of sqlglot's 654), which hands the
    arguments to the class's keys in order, so ``e`` is rebuilt when its keys hold exactly those arguments in
    that order. False means "build it and compare" (``check_rebuilds``), not a refusal; the build and its
    copies were most of a query's translation.

    >>> import sqlglot
    >>> e = sqlglot.parse_one("SUBSTRING(a, 2, 3)")
    >>> rebuilds_in_place(e, "substring", [e.this, e.args["start"], e.args["length"]])
    True
    >>> rebuilds_in_place(e, "substring", [e.this, e.args["length"], e.args["start"]])
    False
    """
    cls = type(e)
    form = _FORMS.get((cls, name))
    if form is None:
        form = _FORMS[(cls, name)] = _form(cls, name)
    if not form.generic:
        return False
    keys = form.keys
    if form.split is not None:
        split = form.split
        built: dict[str, Any] = dict(zip(keys[:split], positional, strict=False))
        built[keys[split]] = positional[split:]
    else:
        built = dict(zip(keys, positional, strict=False))
    if _refused(cls, built, positional):
        return False
    # what equality reads: a key holding None, False or [] counts as absent; the harmless flags are copied over
    actual = {k: v for k, v in e.args.items() if present(v) and k not in HARMLESS_FLAGS}
    expected = {k: v for k, v in built.items() if present(v)}
    if actual.keys() != expected.keys():
        return False
    for key, value in expected.items():
        given = actual[key]
        if type(value) is list:
            if type(given) is not list or len(given) != len(value):
                return False
            if any(a is not b for a, b in zip(given, value, strict=True)):
                return False
        elif given is not value:
            return False
    return True


class _Form:
    """What ``rebuilds_in_place`` reads off a function class and name, the same on every call: whether the
    name's builder is the class's generic ``from_arg_list``, the class's keys, and where a var-len key takes
    the remaining arguments (None: one argument per key)."""

    def __init__(self, generic: bool, keys: tuple[str, ...], split: int | None) -> None:
        self.generic = generic
        self.keys = keys
        self.split = split


#: ``_Form`` by (function class, name): sqlglot's classes and builders do not change while the service runs
_FORMS: dict[tuple[type, str], _Form] = {}


def _form(cls: type[exp.Func], name: str) -> _Form:
    builder = BASE_DIALECT.parser_class.FUNCTIONS.get(name.upper())
    keys = tuple(cls.arg_types)
    if not _generic_builder(builder, cls) or cls.__init__ is not exp.Expr.__init__:
        return _Form(False, keys, None)
    var_len_key = getattr(cls, "var_len_arg_key", None) if cls.is_var_len_args else None
    if var_len_key is not None and var_len_key in keys:
        return _Form(True, keys, keys.index(var_len_key))
    if cls.is_var_len_args:
        return _Form(False, keys, None)  # a sqlglot whose var-len calls are spelled otherwise: leave it to the rebuild
    return _Form(True, keys, None)


def _refused(cls: type[exp.Func], built: dict[str, Any], positional: list[exp.Expr]) -> bool:
    """What ``exp.func`` checks of the call it built (``Expr.error_messages``), read off the keys it would hold:
    a required key holding None or [] (not the parsed call's keys: ``RPAD`` parses with ``is_left=False`` in a
    required key, which the rebuilt call lacks), or more arguments than keys."""
    for key in cls.required_args:
        value = built.get(key)
        if value is None or (type(value) is list and not value):
            return True
    return bool(positional) and len(positional) > len(cls.arg_types) and not cls.is_var_len_args
