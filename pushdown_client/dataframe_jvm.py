"""Reading Catalyst objects through py4j for ``pushdown_client.dataframe_plan``: Scala sequences, literals, join
types, data types, and what Spark knows of a leaf relation (its row count, a readable name); and what a
translation holds (the wire plan, its leaves and its Python UDFs)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_EPOCH = dt.date(1970, 1, 1)

LITERAL_TYPES = {
    "int": "int",
    "integer": "int",
    "bigint": "bigint",
    "smallint": "smallint",
    "tinyint": "tinyint",
    "double": "double",
    "float": "float",
    "string": "string",
    "boolean": "boolean",
    "date": "date",
}


@dataclass
class Leaf:
    """A relation the wire plan scans by ``table``: the DataFrame of its sub-plan, columns renamed as declared."""

    table: str
    label: str
    jdf: Any
    columns: list[tuple[str, str]]
    original_names: list[str]
    row_count: int | None
    cached: bool


@dataclass
class Udf:
    """A Python UDF the plan calls, by the name the wire plan gives it, and the PythonUDF expression it came from."""

    name: str
    expression: Any
    #: what the caller declared about it (``cost``, ``deterministic``, ``may_fail``), or what was measured of it
    declared: dict[str, Any] = field(default_factory=dict)


@dataclass
class Translation:
    plan: dict[str, Any]
    leaves: list[Leaf]
    udfs: dict[str, Udf]
    #: sub-plans that became leaves for a reason worth telling (an unknown node or expression)
    opaque: list[str] = field(default_factory=list)
    #: declarations of functions other than the plan's Python UDFs (built-ins such as ``rlike``), by name
    other_functions: dict[str, dict[str, Any]] = field(default_factory=dict)

    def functions(self) -> dict[str, dict[str, Any]]:
        """The request's ``functions``: each UDF's declaration under its wire name, and the others as given."""
        out = {u.name: u.declared for u in self.udfs.values() if u.declared}
        return {**self.other_functions, **out}

    def catalog(self) -> dict[str, Any]:
        tables: dict[str, Any] = {}
        for leaf in self.leaves:
            entry: dict[str, Any] = {"columns": [{"name": n, "type": t} for n, t in leaf.columns]}
            if leaf.row_count is not None:
                entry["row_count"] = leaf.row_count
            tables[leaf.table] = entry
        return {"tables": tables}


class Unsupported(Exception):
    """A node or expression the wire format cannot carry: its node becomes a leaf."""


def simple_name(obj: Any) -> str:
    return str(obj.getClass().getSimpleName())


def seq(scala_seq: Any) -> list[Any]:
    out = []
    it = scala_seq.iterator()
    while it.hasNext():
        out.append(it.next())
    return out


def safe(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "t"


def literal(expr: Any) -> dict[str, Any]:
    type_name = str(expr.dataType().simpleString())
    wire = LITERAL_TYPES.get(type_name)
    if wire is None:
        raise Unsupported(f"a {type_name} literal")
    value = expr.value()
    if value is None:
        return {"lit": None, "type": wire}
    if wire == "string":
        return {"lit": str(value.toString()), "type": wire}
    if wire == "date":  # Spark holds a date as days since 1970-01-01; the wire spells it as ISO text
        return {"lit": (_EPOCH + dt.timedelta(days=int(value))).isoformat(), "type": wire}
    if wire in ("double", "float"):
        number = float(value)
        if number != number or number in (float("inf"), float("-inf")):
            raise Unsupported("a NaN or infinite literal")
        return {"lit": number, "type": wire}
    return {"lit": value, "type": wire}


def window_frame(frame: Any) -> dict[str, str]:
    """A window function's frame as the wire writes it (``{"kind", "start", "end"}``): ROWS with any bounds,
    RANGE only unbounded or at the current row (an offset's type would have to match the ordering's)."""
    if simple_name(frame) != "SpecifiedWindowFrame":
        raise Unsupported(f"window frame {frame.sql()}")
    kind = "rows" if simple_name(frame.frameType()).startswith("RowFrame") else "range"
    return {"kind": kind, "start": _bound(frame.lower(), kind), "end": _bound(frame.upper(), kind)}


def _bound(bound: Any, kind: str) -> str:
    name = simple_name(bound).rstrip("$")
    if name in ("UnboundedPreceding", "UnboundedFollowing"):
        return "unbounded preceding" if name == "UnboundedPreceding" else "unbounded following"
    if name == "CurrentRow":
        return "current row"
    if name == "Literal" and kind == "rows" and isinstance(bound.value(), int):
        offset = int(bound.value())
        return "current row" if offset == 0 else f"{abs(offset)} {'preceding' if offset < 0 else 'following'}"
    raise Unsupported(f"window frame bound {bound.sql()}")


def join_type(join_type: Any) -> str:
    text = str(join_type.sql()).upper()
    types = {"INNER": "inner", "CROSS": "cross", "LEFT OUTER": "left", "RIGHT OUTER": "right", "FULL OUTER": "full"}
    types |= {"LEFT SEMI": "semi", "LEFT ANTI": "anti"}
    if text not in types:
        raise Unsupported(f"a {text} join")
    return types[text]


def python_type(spark: Any, jtype: Any) -> Any:
    from pyspark.sql.types import _parse_datatype_json_string

    return _parse_datatype_json_string(jtype.json())


def row_count(plan: Any) -> int | None:
    """Spark's own row count of a leaf where it has one (an analyzed table, ``range``, in-memory rows); else
    an estimate from its size in bytes and its rows' width (files), rough but better than none."""
    try:
        stats = plan.stats()
        if stats.rowCount().isDefined():
            return _int(stats.rowCount().get())
        if simple_name(plan) == "LocalRelation":
            return int(plan.data().size())
        width = sum(int(a.dataType().defaultSize()) for a in seq(plan.output())) or 8
        size = _int(stats.sizeInBytes())
        return max(1, size // width) if size < 2**62 else None
    except Exception:  # noqa: BLE001 - statistics are a hint
        return None


def _int(value: Any) -> int:
    """A Scala ``BigInt`` as py4j hands it over (a Python int, or an object with ``toString``)."""
    return value if isinstance(value, int) else int(str(value.toString()))


def cached_row_count(cached: Any) -> int | None:
    """The rows a cached DataFrame holds, which Spark counts as it fills the cache (unknown until then)."""
    try:
        stats = cached.get().cachedRepresentation().stats()
        return _int(stats.rowCount().get()) if stats.rowCount().isDefined() else None
    except Exception:  # noqa: BLE001 - statistics are a hint
        return None


def leaf_label(plan: Any) -> str:
    """A readable name for a leaf: its table, its file's name, or what kind of relation it is; for a leaf that is
    more than a relation (a cached filter, an opaque node), that of the one relation under it, if there is one."""
    while plan.children().size() == 1 and simple_name(plan) not in ("LogicalRelation", "HiveTableRelation"):
        if simple_name(plan) == "SubqueryAlias":
            return str(plan.alias())
        plan = plan.children().apply(0)
    kind = simple_name(plan)
    try:
        if kind == "LogicalRelation":
            table = plan.catalogTable()
            if table.isDefined():
                return str(table.get().identifier().table())
            paths = seq(plan.relation().location().rootPaths())
            if paths:
                return str(paths[0].getName()).split(".")[0]
        if kind == "HiveTableRelation":
            return str(plan.tableMeta().identifier().table())
    except Exception:  # noqa: BLE001 - only a label
        pass
    return {"LocalRelation": "local", "Range": "range", "LogicalRDD": "rdd"}.get(kind, kind.lower())
