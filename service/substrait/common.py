"""What both directions share: function names, types, literals, and document validation.

Both directions must agree on these mappings, or a round trip would change
meaning; keeping them in one place prevents drift.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from decimal import Decimal
from typing import Any

from google.protobuf import json_format

from service.substrait.errors import SubstraitError

# Substrait function name (the part before ``:``) -> wire name, where they differ.
SUBSTRAIT_TO_WIRE_FN: dict[str, str] = {
    "equal": "=",
    "not_equal": "!=",
    "lt": "<",
    "lte": "<=",
    "gt": ">",
    "gte": ">=",
    "add": "+",
    "subtract": "-",
    "multiply": "*",
    "divide": "/",
    "modulus": "%",
    "negate": "neg",
}
WIRE_TO_SUBSTRAIT_FN: dict[str, str] = {v: k for k, v in SUBSTRAIT_TO_WIRE_FN.items()}
WIRE_TO_SUBSTRAIT_FN["<>"] = "not_equal"
#: Functions whose result is a boolean, so the writer can state the output type.
BOOLEAN_FNS = frozenset(
    {
        "=",
        "!=",
        "<>",
        "<",
        "<=",
        ">",
        ">=",
        "and",
        "or",
        "not",
        "like",
        "ilike",
        "rlike",
        "is_null",
        "is_not_null",
        "in",
        "between",
    }
)

# Substrait type kind -> wire type, for the kinds that carry no parameters.
_SIMPLE_TYPES: dict[str, str] = {
    "bool": "boolean",
    "i8": "tinyint",
    "i16": "smallint",
    "i32": "int",
    "i64": "bigint",
    "fp32": "float",
    "fp64": "double",
    "string": "string",
    "binary": "binary",
    "date": "date",
    "timestamp": "timestamp",
}
_WIRE_SIMPLE: dict[str, str] = {v: k for k, v in _SIMPLE_TYPES.items()}
_WIRE_SIMPLE.update({"integer": "i32", "long": "i64", "real": "fp32", "varchar": "string", "text": "string"})

EPOCH = dt.date(1970, 1, 1)
NULLABLE = "NULLABILITY_NULLABLE"


def unsupported(construct: str, path: str, why: str = "the wire plan cannot carry it") -> SubstraitError:
    """The refusal for a construct the adapter does not model: it names the construct and where it is."""
    return SubstraitError("unsupported", f"{construct} is not supported: {why}", path, {"construct": construct})


def check_keys(obj: dict[str, Any], allowed: set[str] | frozenset[str], path: str, what: str) -> None:
    """Refuse any field the adapter does not read, so nothing is dropped silently."""
    for key in obj:
        if key not in allowed:
            raise unsupported(f"{what}.{key}", f"{path}.{key}", f"the adapter does not model {what}.{key}")


# ---------------------------------------------------------------- types


def wire_type(typ: Any, path: str) -> str:
    """Spell a Substrait type the way the wire does (``int``, ``decimal(15,2)``)."""
    if not isinstance(typ, dict) or len(typ) != 1:
        raise SubstraitError("invalid_substrait", "a type has exactly one kind", path)
    kind, body = next(iter(typ.items()))
    if kind in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[kind]
    if kind == "decimal":
        return f"decimal({int(body.get('precision', 0))},{int(body.get('scale', 0))})"
    if kind == "varchar":
        return f"varchar({int(body.get('length', 0))})"
    if kind == "fixedChar":
        return f"char({int(body.get('length', 0))})"
    raise unsupported(f"type {kind}", f"{path}.{kind}")


def substrait_type(wire: str, known: dict[str, dict[str, Any]], path: str) -> dict[str, Any]:
    """A wire type as Substrait; the original document's spelling of the same type wins (variations)."""
    if wire in known:
        return known[wire]
    text = wire.lower().replace(" ", "")
    if text in _WIRE_SIMPLE:
        return {_WIRE_SIMPLE[text]: {"nullability": NULLABLE}}
    match = re.fullmatch(r"(decimal|numeric)\((\d+),(\d+)\)", text)
    if match:
        return {"decimal": {"precision": int(match[2]), "scale": int(match[3]), "nullability": NULLABLE}}
    match = re.fullmatch(r"(varchar|char)\((\d+)\)", text)
    if match:
        kind = "varchar" if match[1] == "varchar" else "fixedChar"
        return {kind: {"length": int(match[2]), "nullability": NULLABLE}}
    raise SubstraitError("invalid_plan", f"type {wire!r} has no Substrait spelling", path, {"type": wire})


# ---------------------------------------------------------------- literals


def decimal_text(body: dict[str, Any], path: str) -> str:
    """A Substrait decimal literal (16 bytes, little-endian two's complement) as exact text."""
    try:
        raw = base64.b64decode(body.get("value", ""), validate=True)
    except ValueError:
        raise SubstraitError("invalid_substrait", "decimal value is not base64", f"{path}.value") from None
    if len(raw) != 16:
        raise SubstraitError("invalid_substrait", "decimal value must be 16 bytes", f"{path}.value")
    unscaled = int.from_bytes(raw, "little", signed=True)
    return str(Decimal(unscaled).scaleb(-int(body.get("scale", 0))))


def decimal_literal(value: Any, precision: int, scale: int) -> dict[str, Any]:
    """The Substrait decimal literal of ``value`` at the given precision and scale."""
    unscaled = int((Decimal(str(value)).scaleb(scale)).to_integral_value())
    raw = unscaled.to_bytes(16, "little", signed=True)
    return {"decimal": {"value": base64.b64encode(raw).decode("ascii"), "precision": precision, "scale": scale}}


def date_text(days: int) -> str:
    return (EPOCH + dt.timedelta(days=days)).isoformat()


def date_days(text: str, path: str) -> int:
    try:
        return (dt.date.fromisoformat(str(text)) - EPOCH).days
    except ValueError:
        raise SubstraitError("invalid_plan", f"{text!r} is not a date", path) from None


def add_months(day: dt.date, months: int) -> dt.date:
    """Calendar month arithmetic clamped to the month's end, as DataFusion and Spark do."""
    total = day.year * 12 + day.month - 1 + months
    year, month = divmod(total, 12)
    month += 1
    following = dt.date(year + (month == 12), month % 12 + 1, 1)
    last = (following - dt.timedelta(days=1)).day
    return dt.date(year, month, min(day.day, last))


# ---------------------------------------------------------------- the document


def walk_dicts(item: Any) -> Any:
    """Every object nested in ``item`` (lists and objects, without recursion)."""
    stack = [item]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            yield cur
            stack.extend(v for v in cur.values() if isinstance(v, (dict, list)))
        elif isinstance(cur, list):
            stack.extend(v for v in cur if isinstance(v, (dict, list)))


def _normalize_aggregate(agg: dict[str, Any], path: str) -> bool:
    """Move the deprecated ``groupings[].groupingExpressions`` into the current encoding.

    Returns True when the deprecated form was present. When both forms are
    present (DataFusion 55 writes both) they must agree, or the plan is refused.
    """
    groupings = agg.get("groupings")
    if not isinstance(groupings, list):
        return False
    top = agg.get("groupingExpressions")
    if top is not None and not isinstance(top, list):
        return False  # the strict parse reports it
    top = list(top or [])
    used_old = False
    for i, grouping in enumerate(groupings):
        if not isinstance(grouping, dict) or "groupingExpressions" not in grouping:
            continue
        used_old = True
        old = grouping.pop("groupingExpressions")
        gpath = f"{path}.groupings[{i}]"
        if not isinstance(old, list):
            raise SubstraitError(
                "invalid_substrait", "groupingExpressions must be a list", f"{gpath}.groupingExpressions"
            )
        refs = grouping.get("expressionReferences")
        if refs is not None:
            if (
                not isinstance(refs, list)
                or len(refs) != len(old)
                or any(
                    not isinstance(r, int) or not 0 <= r < len(top) or top[r] != e
                    for r, e in zip(refs, old, strict=False)
                )
            ):
                raise SubstraitError(
                    "inconsistent_grouping",
                    "groupingExpressions and expressionReferences of this grouping disagree",
                    gpath,
                )
            continue
        new_refs = []
        for expr in old:
            if expr in top:
                new_refs.append(top.index(expr))
            else:
                top.append(expr)
                new_refs.append(len(top) - 1)
        grouping["expressionReferences"] = new_refs
    if used_old:
        agg["groupingExpressions"] = top
    return used_old


def _normalize_fetch(fetch: dict[str, Any]) -> None:
    """Move the deprecated integer ``offset``/``count`` into ``offsetExpr``/``countExpr``."""
    if "offset" in fetch and "offsetExpr" not in fetch:
        fetch["offsetExpr"] = {"literal": {"i64": str(fetch.pop("offset"))}}
    if "count" in fetch and "countExpr" not in fetch:
        count = fetch.pop("count")
        if str(count) != "-1":  # -1 meant "all rows"
            fetch["countExpr"] = {"literal": {"i64": str(count)}}


def normalize(doc: Any) -> tuple[dict[str, Any], bool]:
    """A copy of ``doc`` in the current encoding, and whether deprecated groupings were used."""
    import copy

    out = copy.deepcopy(doc)
    used_old = False
    stack: list[tuple[Any, str]] = [(out, "$")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            agg = item.get("aggregate")
            if isinstance(agg, dict):
                used_old = _normalize_aggregate(agg, f"{path}.aggregate") or used_old
            fetch = item.get("fetch")
            if isinstance(fetch, dict):
                _normalize_fetch(fetch)
            stack.extend((v, f"{path}.{k}") for k, v in item.items() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item) if isinstance(v, (dict, list)))
    return out, used_old


_AT = re.compile(r' at "Plan((?:\.[A-Za-z_0-9]+|\[\d+\])*)"')


def validate(doc: Any, root: str = "$") -> tuple[dict[str, Any], bool]:
    """Parse strictly against the Substrait protobuf schema; unknown fields are errors, not ignored.

    Returns the canonical ``MessageToDict`` form (camelCase keys, 64-bit
    integers as strings, enums by name, defaults omitted) and whether the
    deprecated grouping encoding was used.
    """
    from substrait.plan_pb2 import Plan

    if not isinstance(doc, dict):
        raise SubstraitError("invalid_substrait", "a Substrait plan must be a JSON object", root)
    normalized, used_old = normalize(doc)
    try:
        message = json_format.ParseDict(normalized, Plan(), ignore_unknown_fields=False)
    except json_format.ParseError as exc:
        text = str(exc)
        match = _AT.search(text)
        where = root + (match.group(1) if match else "")
        reason = text.rsplit("Failed to parse ", 1)[-1].split("\n")[0]
        raise SubstraitError("invalid_substrait", reason, where) from None
    return json_format.MessageToDict(message), used_old


#: Substrait's join, set operation and sort direction enums -> the wire's (both directions use them)
JOIN_TYPES: dict[str, str] = {
    "JOIN_TYPE_INNER": "inner",
    "JOIN_TYPE_OUTER": "full",
    "JOIN_TYPE_LEFT": "left",
    "JOIN_TYPE_RIGHT": "right",
    "JOIN_TYPE_LEFT_SEMI": "semi",
    "JOIN_TYPE_LEFT_ANTI": "anti",
    "JOIN_TYPE_RIGHT_SEMI": "semi",
    "JOIN_TYPE_RIGHT_ANTI": "anti",
}
SET_OPS: dict[str, tuple[str, bool]] = {
    "SET_OP_UNION_ALL": ("union", True),
    "SET_OP_UNION_DISTINCT": ("union", False),
    "SET_OP_MINUS_PRIMARY": ("except", False),
    "SET_OP_MINUS_PRIMARY_ALL": ("except", True),
    "SET_OP_INTERSECTION_MULTISET": ("intersect", False),
    "SET_OP_INTERSECTION_MULTISET_ALL": ("intersect", True),
}
SORT_DIRECTIONS: dict[str, tuple[bool, bool]] = {
    "SORT_DIRECTION_ASC_NULLS_FIRST": (False, True),
    "SORT_DIRECTION_ASC_NULLS_LAST": (False, False),
    "SORT_DIRECTION_DESC_NULLS_FIRST": (True, True),
    "SORT_DIRECTION_DESC_NULLS_LAST": (True, False),
}
