"""Which functions the engine knows, and the ones a request declares.

A function the engine does not know (``{"fn": "my_udf"}``, or ``my_udf(x)`` in
SQL) is opaque: it may be non-deterministic, it may fail, and its cost is
unknown. Such a call is never moved where that could change the result (it
stays where the query put it, and so does every conjunct after it), and each
decision says why (``unknown_function``). A request lifts that by declaring
the function::

    "functions": {"my_udf": {"cost": 500, "deterministic": true, "may_fail": false}}

A declaration may say where its cost came from (``source``: ``declared``, ``detected: python_udf default``,
``measured: ...``, ``learned``) and how sure it is (``interval``: ``[low, high]``); the engine uses ``cost``
only, the service reports both (``function_costs``, docs/cost-model.md). A runner that called the function on a
sample may also say what share of the sample's rows it returned true for (``selectivity``, of ``sample_rows``):
the engine's estimate of a conjunct that is that call when nothing better (statistics, a run's feedback) knows
it (``costmodel.estimate_functions``).

Names are matched case-insensitively, as SQL does. Example::

    >>> decls = functions_from_wire({"My_UDF": {"cost": 5}}, "$.functions")
    >>> decls["my_udf"].cost, decls["my_udf"].deterministic, decls["my_udf"].selectivity
    (5.0, True, None)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from costmodel.errors import PlanError
from costmodel.expr import (
    AGGREGATES,
    ARITHMETIC,
    BOOLEAN,
    COMPARISONS,
    LIKES,
    NONDETERMINISTIC,
    RAISING,
    REGEXES,
    WINDOW_ONLY,
    Call,
    Expr,
    walk,
)
from costmodel.strict import check_keys

#: Deterministic scalar functions the engine knows and treats as not failing (Spark and DuckDB built-ins).
KNOWN_SCALARS: Final = frozenset(
    {
        "abs", "acos", "add_months", "ascii", "asin", "atan", "atan2", "bit_length", "btrim", "cbrt", "ceil",
        "ceiling", "char_length", "character_length", "coalesce", "concat", "concat_ws", "contains", "cos",
        "current_date", "current_timestamp", "current_user", "date_add", "date_diff", "date_format", "date_part",
        "date_sub", "date_trunc", "datediff", "day", "dayofmonth", "dayofweek", "dayofyear", "degrees", "ends_with",
        "endswith", "exp", "extract", "floor", "greatest", "hash", "hour", "if", "ifnull", "iff", "initcap",
        "instr", "is_not_true", "is_true", "is_false", "is_not_false", "isnan", "isnull", "isnotnull", "last_day",
        "lcase", "least", "left", "len", "length", "ln", "locate", "log", "log10", "log2", "lower", "lpad", "ltrim",
        "md5", "minute", "month", "months_between", "nanvl", "not_like", "nullif", "nvl", "nvl2", "octet_length",
        "pi", "position", "pow", "power", "quarter", "radians", "repeat", "replace", "reverse", "right", "round",
        "rpad", "rtrim", "second", "sha1", "sha2", "sign", "signum", "sin", "soundex", "space", "split_part",
        "sqrt", "starts_with", "startswith", "strpos", "substr", "substring", "tan", "trim", "trunc", "try_cast",
        "ucase", "upper", "week", "weekofyear", "year", "struct", "named_struct", "array", "map", "size",
        "array_contains", "array_size", "cardinality", "typeof", "case", "cast", "in", "between", "is_null",
        "is_not_null",
    }
)  # fmt: skip

#: Every function name the engine knows; any other is opaque unless declared.
KNOWN_FUNCTIONS: Final = (
    KNOWN_SCALARS
    | COMPARISONS
    | ARITHMETIC
    | BOOLEAN
    | LIKES
    | REGEXES
    | AGGREGATES
    | WINDOW_ONLY
    | NONDETERMINISTIC
    | RAISING
    | {"udf"}
)

_DECL_KEYS: Final = frozenset({"cost", "deterministic", "may_fail", "source", "interval", "selectivity", "sample_rows"})
#: what a caller may say of a pattern match the engine knows: its cost, and where that came from
_PATTERN_KEYS: Final = frozenset({"cost", "source", "interval"})
#: what a match costs depends on the pattern and the strings (a regex over long comments): a caller may say
PATTERN_MATCHERS = LIKES | REGEXES


@dataclass(frozen=True, slots=True)
class FunctionDecl:
    """What a caller declares about a function: per-row cost (a comparison is 1), determinism, failure."""

    cost: float | None = None
    deterministic: bool = True
    may_fail: bool = False
    #: where ``cost`` came from (``declared``, ``detected: ...``, ``measured: ...``, ``learned``); None: declared
    source: str | None = None
    #: the cost's plausible range (low, high), when it was measured or learned
    interval: tuple[float, float] | None = None
    #: the share of a sample's rows the call returned true for (a runner's measurement), and the sample's rows
    selectivity: float | None = None
    sample_rows: int | None = None


def functions_from_wire(raw: Any, path: str) -> dict[str, FunctionDecl]:
    """Read ``{"name": {"cost", "deterministic", "may_fail"}}``; names are lower-cased."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise PlanError("invalid_options", "functions must be an object keyed by function name", path)
    out: dict[str, FunctionDecl] = {}
    for name, decl in raw.items():
        fpath = f"{path}.{name}"
        if not name:
            raise PlanError("invalid_options", "a function name must not be empty", fpath)
        if not isinstance(decl, dict):
            raise PlanError("invalid_options", 'a declaration is {"cost", "deterministic", "may_fail"}', fpath)
        check_keys(decl, _DECL_KEYS, fpath, "invalid_options")
        cost = decl.get("cost")
        if cost is not None and (
            isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0
        ):
            raise PlanError("invalid_options", "cost must be a non-negative number", f"{fpath}.cost")
        for flag in ("deterministic", "may_fail"):
            if flag in decl and not isinstance(decl[flag], bool):
                raise PlanError("invalid_options", f"{flag} must be true or false", f"{fpath}.{flag}")
        source, interval = _provenance(decl, fpath)
        selectivity, sample_rows = _sampled_selectivity(decl, fpath)
        if name.lower() in PATTERN_MATCHERS:
            if set(decl) - _PATTERN_KEYS:
                raise PlanError(
                    "invalid_options",
                    f"{name!r} is a pattern match the engine knows: only its cost can be declared",
                    fpath,
                )
        elif name.lower() in KNOWN_FUNCTIONS - KNOWN_SCALARS - NONDETERMINISTIC - RAISING and name.lower() != "udf":
            raise PlanError("invalid_options", f"{name!r} is an operator or aggregate the engine knows", fpath)
        out[name.lower()] = FunctionDecl(
            None if cost is None else float(cost),
            decl.get("deterministic", True),
            decl.get("may_fail", False),
            source,
            interval,
            selectivity,
            sample_rows,
        )
    return out


def _sampled_selectivity(decl: dict[str, Any], path: str) -> tuple[float | None, int | None]:
    """A declaration's ``selectivity`` (a share, 0 to 1) and ``sample_rows`` (a positive count), both optional."""
    share, rows = decl.get("selectivity"), decl.get("sample_rows")
    if share is not None and (isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1):
        raise PlanError("invalid_options", "selectivity must be a number from 0 to 1", f"{path}.selectivity")
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or rows <= 0):
        raise PlanError("invalid_options", "sample_rows must be a positive integer", f"{path}.sample_rows")
    return (None if share is None else float(share)), rows


def _provenance(decl: dict[str, Any], path: str) -> tuple[str | None, tuple[float, float] | None]:
    """A declaration's ``source`` (text) and ``interval`` ([low, high], low <= high, both >= 0)."""
    source = decl.get("source")
    if source is not None and (not isinstance(source, str) or len(source) > 200):
        raise PlanError("invalid_options", "source must be a string of at most 200 characters", f"{path}.source")
    raw = decl.get("interval")
    if raw is None:
        return source, None
    ok = isinstance(raw, list) and len(raw) == 2
    ok = ok and all(not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) for v in raw)
    if not ok or raw[0] < 0 or raw[0] > raw[1]:
        raise PlanError("invalid_options", "interval must be [low, high] with 0 <= low <= high", f"{path}.interval")
    return source, (float(raw[0]), float(raw[1]))


def opaque_names(expr: Expr) -> list[str]:
    """Names of the unknown, undeclared functions ``expr`` calls (subqueries included), in order."""
    names = [n.fn for n in walk(expr, into_subqueries=True) if isinstance(n, Call) and n.opaque]
    return list(dict.fromkeys(names))


def opaque_detail(expr: Expr) -> str:
    """Why the service does not place a predicate calling unknown functions, who does, and how to change that."""
    names = ", ".join(opaque_names(expr))
    return (
        f"{names}: not a function the engine knows (it may be non-deterministic or fail), so the service does not"
        " move it and the engine that runs the query places it by its own rules (Spark pushes a deterministic UDF"
        " down); declare it under functions (cost, deterministic, may_fail) to have it placed by cost"
    )
