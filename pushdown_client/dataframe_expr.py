"""Catalyst expressions as wire expressions, for ``pushdown_client.dataframe_plan``'s ``Translator`` (a mixin, as
the engine's ``ExpressionReader`` is its binder's): columns by the reference their node gave them, literals,
operators, casts, ``CASE``, ``LIKE``, aggregates, sort keys, Python UDFs, and any other Spark function written as
a call (which the service knows, or takes for an opaque function that stays where it is)."""

from __future__ import annotations

from typing import Any

from pushdown_client.dataframe_jvm import IDENT, Udf, Unsupported, literal, python_type, safe, seq, simple_name
from pushdown_client.spark_runner import wire_type

UDF_PREFIX = "__pushdown_udf_"

_BINARY = {
    "EqualTo": "=",
    "EqualNullSafe": "<=>",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "Add": "+",
    "Subtract": "-",
    "Multiply": "*",
    "Divide": "/",
    "Remainder": "%",
}
_NARY = {"And": "and", "Or": "or", "Not": "not", "IsNull": "is_null", "IsNotNull": "is_not_null", "UnaryMinus": "neg"}
_AGGREGATES = {"count", "sum", "avg", "min", "max"}


class ExpressionWriter:
    """Writes expressions; mixed into ``Translator``, which holds the state named here."""

    spark: Any
    refs: dict[int, str]
    udfs: dict[str, Udf]
    functions: dict[str, dict[str, Any]]
    by_function: list[tuple[Any, dict[str, Any]]]
    used: set[str]

    def aggregate(self, expr: Any) -> dict[str, Any]:
        function = expr.aggregateFunction()
        name = str(function.prettyName()).lower()
        if name not in _AGGREGATES or expr.filter().isDefined():
            raise Unsupported(f"aggregate {function.sql()}")
        args = seq(function.children())
        star = len(args) == 1 and simple_name(args[0]) == "Literal" and args[0].value() is not None
        if name == "count" and star and not expr.isDistinct():
            return {"fn": "count", "args": []}
        written: dict[str, Any] = {"fn": name, "args": [self.expr(a) for a in args]}
        if expr.isDistinct():
            written["distinct"] = True
        return written

    def sort_key(self, order: Any) -> dict[str, Any]:
        return {
            "expr": self.expr(order.child()),
            "desc": str(order.direction().sql()) == "DESC",
            "nulls_first": str(order.nullOrdering().sql()) == "NULLS FIRST",
        }

    def expr(self, expr: Any) -> dict[str, Any]:
        return self.call(expr, self.expr)

    def call(self, expr: Any, sub: Any) -> dict[str, Any]:
        kind = simple_name(expr)
        if kind == "AttributeReference":
            ref = self.refs.get(expr.exprId().id())
            if ref is None:
                raise Unsupported(f"column {expr.name()} is read from outside its input")
            return {"col": ref}
        if kind == "Alias":
            return sub(expr.child())
        if kind == "Literal":
            return literal(expr)
        args = [sub(c) for c in seq(expr.children())] if kind != "PythonUDF" else None
        if kind in _BINARY:
            return {"fn": _BINARY[kind], "args": args}
        if kind in _NARY:
            return {"fn": _NARY[kind], "args": args}
        if kind == "In":
            if len(args or []) < 2:
                raise Unsupported("IN of an empty list")
            return {"fn": "in", "args": args}
        if kind == "Cast":
            if str(expr.evalMode()) == "TRY":
                raise Unsupported("try_cast")
            return {"fn": "cast", "args": args, "type": wire_type(python_type(self.spark, expr.dataType()))}
        if kind == "Like" and str(expr.escapeChar()) == "\\":
            return {"fn": "like", "args": args}
        if kind == "CaseWhen":
            return {"fn": "case", "args": args}
        if kind == "PythonUDF":
            return self.udf(expr, sub)
        return self.builtin(expr, args or [])

    def builtin(self, expr: Any, args: list[Any]) -> dict[str, Any]:
        """A Spark function in plain call form (``name(arg, ...)``, read off its SQL): the service knows it, or
        takes it for an opaque function that stays where it is."""
        name = str(expr.prettyName())
        children = [str(c.sql()) for c in seq(expr.children())]
        if not IDENT.match(name) or str(expr.sql()).lower() != f"{name}({', '.join(children)})".lower():
            raise Unsupported(f"expression {expr.sql()}")
        if expr.getClass().getName().endswith("AggregateExpression"):
            raise Unsupported("an aggregate outside an aggregation")
        return {"fn": name.lower(), "args": args}

    def udf(self, expr: Any, sub: Any) -> dict[str, Any]:
        if int(expr.evalType()) not in (100, 101, 200):  # batched Python, Arrow-batched Python, scalar pandas
            raise Unsupported(f"Python UDF {expr.name()} of eval type {expr.evalType()}")
        own = str(expr.name())
        for udf in self.udfs.values():
            if udf.expression.func().equals(expr.func()):
                name = udf.name
                break
        else:
            name = f"{UDF_PREFIX}{safe(own)}"
            while name in self.udfs:
                name += "_"
            declared = self.functions.get(own.lower(), {})
            self.used.add(own.lower())
            for function, spec in self.by_function:
                if function.equals(expr.func()):
                    declared = spec
            self.udfs[name] = Udf(name, expr, dict(declared))
        # the cost lives in the request's ``functions`` under this name only (``Translation.functions``): a cost
        # written on the call would win over the one the service learns from runs for that name
        return {
            "fn": "udf",
            "name": name,
            "args": [sub(c) for c in seq(expr.children())],
            "deterministic": bool(expr.udfDeterministic()),
        }
