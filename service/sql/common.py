"""Names shared by both directions of the adapter.

Both directions must agree on how a wire function name maps to a sqlglot
expression, how a wire type is spelled, and how a literal is written, or a
round trip would change meaning; keeping these in one place prevents drift.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Final, TypeVar, cast

import sqlglot
from sqlglot import exp, parser
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.expressions import FUNCTION_BY_NAME

from service.sql.errors import SqlError

E = TypeVar("E", bound=exp.Expr)


def sqlglot_build() -> str:
    """Which sqlglot reads and writes SQL: its version, and ", compiled" when its mypyc build (``sqlglot[c]``, in
    the base install; about three times as fast) runs rather than its pure-Python modules.

    >>> sqlglot_build().startswith("sqlglot ")
    True
    """
    compiled = Path(parser.__file__ or "").suffix in (".so", ".pyd")
    return f"sqlglot {sqlglot.__version__}" + (", compiled" if compiled else "")


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
    """Spell a sqlglot type the way the wire does (``int``, ``decimal(15,2)``). A type with nothing but its name
    (``DATE``, every typed literal's) is spelled once per name: writing it runs sqlglot's generator, about
    65,000 instructions compiled each time.

    >>> wire_type(exp.DataType.build("date")), wire_type(exp.DataType.build("decimal(15, 2)"))
    ('date', 'decimal(15,2)')
    """
    plain = True
    for key, value in dtype.args.items():
        if key != "this" and value:
            plain = False
            break
    if plain:
        known = _PLAIN_WIRE_TYPES.get(dtype.this)
        if known is not None:
            return known
    spelled = written_type(dtype)
    if plain:
        _PLAIN_WIRE_TYPES[dtype.this] = spelled
    return spelled


def written_type(dtype: exp.DataType) -> str:
    """``wire_type`` without remembering: the type written by sqlglot as Spark spells it, in the wire's spelling."""
    text = dtype.sql(dialect=dialect_of("spark")).lower().replace(" ", "")
    return _CANONICAL_TYPES.get(text, text)


#: ``wire_type`` of a type without parameters, by its sqlglot type (one entry per ``exp.DType`` at most)
_PLAIN_WIRE_TYPES: dict[object, str] = {}


def sqlglot_type(wire: str) -> exp.DataType:
    """Parse a wire type back into sqlglot (Spark spelling is the wire's); a fresh copy of a cached parse.
    A type sqlglot cannot read is the plan's error (``SqlError``)."""
    try:
        return _parsed_type(wire).copy()
    except (SqlglotError, ValueError) as err:
        raise SqlError("invalid_plan", f"unknown type {wire!r}", detail={"type": wire}) from err


@functools.lru_cache(maxsize=1024)
def _parsed_type(wire: str) -> exp.DataType:
    return exp.DataType.build(wire, dialect=dialect_of("spark"))


@functools.lru_cache(maxsize=64)
def dialect_of(name: str) -> Dialect:
    """The sqlglot dialect named ``name``, made once: sqlglot builds a new one (and its settings) on every
    lookup by name, which showed in every parse, function call and render. Raises ValueError when unknown.

    >>> dialect_of("spark") is dialect_of("spark")
    True
    """
    return Dialect.get_or_raise(name)


#: the class every sqlglot node derives from, read once (``exp.Expr`` is a lookup on the module at every use)
_NODE: Final = exp.Expr


#: node types without child nodes (names, literals): half of a query's nodes
_LEAVES: Final = frozenset({exp.Identifier, exp.Literal, exp.Var, exp.Null, exp.Boolean})


def _no_node(value: Any) -> bool:
    """A node argument that is surely not a node: most are a name, a flag or empty (cheaper than ``isinstance``)."""
    return value is None or value is True or value is False or type(value) is str


def child_nodes(node: E) -> list[E]:
    """``node``'s child nodes in ``iter_expressions`` order, as a list: a walk meets every node of the query, and
    sqlglot's generator (wrapped in another to pair each child with its depth) cost two generator objects a node.

    >>> import sqlglot
    >>> [c.sql() for c in child_nodes(sqlglot.parse_one("SELECT a, b FROM t WHERE c"))]
    ['a', 'b', 'FROM t', 'WHERE c']
    """
    out: list[E] = []
    args: dict[str, Any] = node.args
    for value in args.values():
        if _no_node(value):
            continue
        if type(value) is list:
            for v in value:
                if not _no_node(v) and isinstance(v, _NODE):
                    out.append(cast(E, v))
        elif isinstance(value, _NODE):
            out.append(cast(E, value))
    return out


def release(*trees: exp.Expr | None) -> None:
    """Unlink each node of ``trees`` from its parent, so reference counting frees a tree as soon as nothing holds
    it. Every sqlglot node points at its parent, which makes a tree a reference cycle that waits for the cyclic
    collector: each SQL request left hundreds of such objects, and collecting them took about 5% of its time,
    where unlinking costs a walk. For trees nothing reads afterwards (a query once translated, a tree once
    written).

    >>> import sqlglot
    >>> tree = sqlglot.parse_one("SELECT a FROM t")
    >>> release(tree)
    >>> [node.parent for node in tree.walk()]
    [None, None, None, None, None, None]
    """
    for tree in trees:
        stack: list[Any] = [tree] if tree is not None else []
        while stack:
            node = stack.pop()
            node.parent = None
            # child_nodes' loop, written out: its list per node made the walk a quarter dearer (counted)
            args: dict[str, Any] = node.args
            for value in args.values():
                if _no_node(value):
                    continue
                if type(value) is list:
                    for v in value:
                        if _no_node(v):
                            continue
                        if type(v) in _LEAVES:  # unlinked where met: a quarter of the walk's time
                            v.parent = None
                        elif isinstance(v, _NODE):
                            stack.append(v)
                elif type(value) in _LEAVES:
                    value.parent = None
                elif isinstance(value, _NODE):
                    stack.append(value)


class TypeKinds:
    """Which of several kinds a sqlglot node is, by its type: the first ``(types, kind)`` entry whose types the
    node's type derives from, else ``default``; tested once per type, then looked up. A walk that asks this of
    every node pays a dictionary lookup instead of a chain of isinstance tests, each of which reads the class
    off the ``exp`` module and walks the node's ancestry.

    >>> kinds = TypeKinds([((exp.And, exp.Or), 1), ((exp.Column,), 2)], default=0)
    >>> kinds(exp.Or(this=exp.column("a"), expression=exp.column("b"))), kinds(exp.column("a")), kinds(exp.Null())
    (1, 2, 0)
    """

    def __init__(self, kinds: list[tuple[tuple[type[exp.Expr], ...], int]], default: int) -> None:
        self.kinds = kinds
        self.default = default
        self.by_type: dict[type[exp.Expr], int] = {}

    def __call__(self, node: exp.Expr) -> int:
        kind = self.by_type.get(type(node))
        if kind is None:
            kind = self.by_type[type(node)] = self.of_type(type(node))
        return kind

    def of_type(self, node_type: type[exp.Expr]) -> int:
        return next((kind for types, kind in self.kinds if issubclass(node_type, types)), self.default)


def dialect_name(spec: str) -> str:
    """A dialect's name alone (``spec`` without its settings), lower case.

    >>> dialect_name("Spark, normalize_functions=lower")
    'spark'
    """
    return spec.split(",")[0].strip().lower()


#: The dialect ``exp.func`` uses when given none (sqlglot's own), made once.
BASE_DIALECT = Dialect()


def build_function(name: str, args: list[exp.Expr], copy: bool = True) -> exp.Func:
    """``exp.func(name, *args)`` in ``BASE_DIALECT``. A call without arguments is built as ``exp.func`` builds it
    (the name's generic builder, else its class), by our own code: compiled sqlglot's ``exp.func`` reads
    ``__name__`` off the builder, which its compiled lambdas lack (``UUID()``, ``ARRAY()``, ``DATE()`` raised
    AttributeError where pure sqlglot builds them).

    >>> build_function("uuid", []).sql(), build_function("rand", []).sql(), build_function("my_fn", []).sql()
    ('UUID()', 'RAND()', 'MY_FN()')
    """
    if args:
        return exp.func(name, *args, dialect=BASE_DIALECT, copy=copy)
    builder = BASE_DIALECT.parser_class.FUNCTIONS.get(name.upper())
    if builder is None:
        function: exp.Func = exp.Anonymous(this=name, expressions=[])
    elif getattr(builder, "__name__", None) == "from_arg_list":
        function = builder.__self__()  # type: ignore[attr-defined]  # a bound classmethod
    else:
        cls = FUNCTION_BY_NAME.get(name.upper())
        if cls is None:
            raise ValueError(f"Unable to convert '{name}' into a Func")
        function = cls()
    for message in function.error_messages([]):
        raise ValueError(message)
    return function
