"""Names shared by both directions of the adapter.

Both directions must agree on how a wire function name maps to a sqlglot
expression, how a wire type is spelled, and how a literal is written, or a
round trip would change meaning; keeping these in one place prevents drift.
"""

from __future__ import annotations

from sqlglot import exp

# sqlglot's SQL name (lower case) -> wire name, where the wire spelling differs.
SQLGLOT_TO_WIRE_FN: dict[str, str] = {
    "regexp_like": "rlike",
}
WIRE_TO_SQLGLOT_FN: dict[str, str] = {v: k for k, v in SQLGLOT_TO_WIRE_FN.items()}

# The wire's canonical type names, keyed by how Spark prints the sqlglot type.
_CANONICAL_TYPES: dict[str, str] = {
    "integer": "int",
    "int": "int",
    "bigint": "bigint",
    "long": "bigint",
    "double": "double",
    "string": "string",
    "varchar": "string",
    "text": "string",
    "date": "date",
    "timestamp": "timestamp",
    "boolean": "boolean",
    "decimal": "decimal",
    "float": "float",
    "smallint": "smallint",
    "tinyint": "tinyint",
}

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


def wire_type(dtype: exp.DataType) -> str:
    """Spell a sqlglot type the way the wire does (``int``, ``decimal(15,2)``)."""
    text = dtype.sql(dialect="spark").lower().replace(" ", "")
    return _CANONICAL_TYPES.get(text, text)


def sqlglot_type(wire: str) -> exp.DataType:
    """Parse a wire type back into sqlglot (Spark spelling is the wire's)."""
    return exp.DataType.build(wire, dialect="spark")
