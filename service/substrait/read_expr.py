"""Substrait expressions (and an aggregate's measures) -> wire expressions: the expression half of the Substrait reader.

``Reader`` (service/substrait/to_plan.py) reads relations and inherits these methods; an expression names the
columns of the relation it sits on through ``refs`` (the wire name of each output position), and a subquery's
relations are read by the ``Reader`` itself (``rel``), with the enclosing relation's ``refs`` pushed on ``outer``.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from service.substrait.common import (
    SUBSTRAIT_TO_WIRE_FN,
    SubstraitError,
    add_months,
    check_keys,
    date_text,
    decimal_text,
    unsupported,
    wire_type,
)

_INTERVALS = ("intervalCompound", "intervalYearToMonth", "intervalDayToSecond")


def single(obj: Any, path: str, what: str) -> tuple[str, Any]:
    if not isinstance(obj, dict) or len(obj) != 1:
        raise SubstraitError("invalid_substrait", f"{what} must have exactly one kind", path)
    return next(iter(obj.items()))


class ExpressionReader:
    """Reads expressions; the ``Reader`` subclass provides the relations and the state declared here."""

    functions: dict[int, str]
    types: dict[str, dict[str, Any]]
    null_types: dict[str, dict[str, Any]]
    outer: list[list[str]]

    def rel(self, rel: Any, path: str) -> tuple[dict[str, Any], list[str]]:
        raise NotImplementedError  # Reader.rel

    def function(self, body: dict[str, Any], path: str) -> str:
        anchor = int(body.get("functionReference", 0))
        if anchor not in self.functions:
            raise SubstraitError(
                "unknown_function",
                f"function anchor {anchor} is not declared",
                f"{path}.functionReference",
                {"declared": sorted(self.functions)},
            )
        return self.functions[anchor]

    def arguments(self, body: dict[str, Any], refs: list[str], path: str) -> list[dict[str, Any]]:
        args = []
        for i, arg in enumerate(body.get("arguments", [])):
            apath = f"{path}.arguments[{i}]"
            check_keys(arg, {"value"}, apath, "functionArgument")
            args.append(self.expr(arg.get("value"), refs, f"{apath}.value"))
        return args

    def expr(self, raw: Any, refs: list[str], path: str) -> dict[str, Any]:
        kind, body = single(raw, path, "an expression")
        path = f"{path}.{kind}"
        if kind == "selection":
            return self._selection(body, refs, path)
        if kind == "literal":
            return self.literal(body, path)
        if kind == "scalarFunction":
            return self._scalar_function(body, refs, path)
        if kind == "cast":
            check_keys(body, {"type", "input", "failureBehavior"}, path, "cast")
            if body.get("failureBehavior") == "FAILURE_BEHAVIOR_RETURN_NULL":
                raise unsupported(
                    "cast that returns NULL on failure", f"{path}.failureBehavior", "the wire cast fails on bad input"
                )
            target = wire_type(body.get("type"), f"{path}.type")
            self.types.setdefault(target, body["type"])
            inner = self.expr(body.get("input"), refs, f"{path}.input")
            if target == "date" and inner.get("type") == "string" and isinstance(inner.get("lit"), str):
                try:  # a date written as cast('1998-12-01' as date) becomes a date literal
                    return {"lit": dt.date.fromisoformat(inner["lit"]).isoformat(), "type": "date"}
                except ValueError:
                    pass
            return {"fn": "cast", "args": [inner], "type": target}
        if kind == "ifThen":
            check_keys(body, {"ifs", "else"}, path, "ifThen")
            args = []
            for i, clause in enumerate(body.get("ifs", [])):
                check_keys(clause, {"if", "then"}, f"{path}.ifs[{i}]", "ifClause")
                args.append(self.expr(clause.get("if"), refs, f"{path}.ifs[{i}].if"))
                args.append(self.expr(clause.get("then"), refs, f"{path}.ifs[{i}].then"))
            if "else" in body:
                args.append(self.expr(body["else"], refs, f"{path}.else"))
            return {"fn": "case", "args": args}
        if kind == "switchExpression":
            check_keys(body, {"match", "ifs", "else"}, path, "switchExpression")
            match = self.expr(body.get("match"), refs, f"{path}.match")
            args = []
            for i, clause in enumerate(body.get("ifs", [])):
                check_keys(clause, {"if", "then"}, f"{path}.ifs[{i}]", "switchClause")
                value = self.literal(clause.get("if", {}), f"{path}.ifs[{i}].if")
                args.append({"fn": "=", "args": [match, value]})
                args.append(self.expr(clause.get("then"), refs, f"{path}.ifs[{i}].then"))
            if "else" in body:
                args.append(self.expr(body["else"], refs, f"{path}.else"))
            return {"fn": "case", "args": args}
        if kind == "singularOrList":
            check_keys(body, {"value", "options"}, path, "singularOrList")
            value = self.expr(body.get("value"), refs, f"{path}.value")
            options = [self.expr(o, refs, f"{path}.options[{i}]") for i, o in enumerate(body.get("options", []))]
            if not options:
                raise unsupported("IN with an empty list", f"{path}.options", "the wire in needs a value")
            return {"fn": "in", "args": [value, *options]}
        if kind == "subquery":
            return self._subquery(body, refs, path)
        raise unsupported(f"{kind} expression", path, "the wire plan has no expression for it")

    def _selection(self, body: dict[str, Any], refs: list[str], path: str) -> dict[str, Any]:
        check_keys(body, {"directReference", "rootReference", "outerReference"}, path, "fieldReference")
        direct = body.get("directReference")
        if not isinstance(direct, dict) or set(direct) != {"structField"}:
            raise unsupported("a field reference that is not a struct field", path, "only top-level columns are")
        field = direct["structField"]
        check_keys(field, {"field"}, f"{path}.directReference.structField", "structField")
        index = int(field.get("field", 0))
        scope = refs
        if "outerReference" in body:
            steps = int(body["outerReference"].get("stepsOut", 0))
            if not 1 <= steps <= len(self.outer):
                raise SubstraitError(
                    "invalid_reference",
                    f"stepsOut {steps} leaves the plan",
                    f"{path}.outerReference.stepsOut",
                    {"depth": len(self.outer)},
                )
            scope = self.outer[-steps]
        elif "rootReference" not in body:
            raise unsupported("an expression reference", path, "only root and outer references are")
        if not 0 <= index < len(scope):
            raise SubstraitError(
                "invalid_reference",
                f"field {index} is outside the input's {len(scope)} columns",
                f"{path}.directReference.structField.field",
                {"available": list(scope)},
            )
        return {"col": scope[index]}

    def literal(self, body: dict[str, Any], path: str) -> dict[str, Any]:
        values = {k: v for k, v in body.items() if k not in ("nullable", "typeVariationReference")}
        if len(values) != 1:
            raise SubstraitError("invalid_substrait", "a literal has exactly one value", path)
        kind, value = next(iter(values.items()))
        if kind in ("i8", "i16", "i32", "i64"):
            return {"lit": int(value), "type": wire_type({kind: {}}, path)}
        if kind in ("fp32", "fp64"):
            if isinstance(value, str):
                raise unsupported("NaN or infinite literal", f"{path}.{kind}", "JSON cannot carry it")
            return {"lit": float(value), "type": wire_type({kind: {}}, path)}
        if kind == "boolean":
            return {"lit": bool(value), "type": "boolean"}
        if kind == "string":
            return {"lit": str(value), "type": "string"}
        if kind in ("varChar", "fixedChar"):
            return {"lit": str(value.get("value", "")), "type": "string"}
        if kind == "date":
            return {"lit": date_text(int(value)), "type": "date"}
        if kind == "decimal":
            text = decimal_text(value, f"{path}.decimal")
            precision, scale = int(value.get("precision", 0)), int(value.get("scale", 0))
            number: Any = text
            if Decimal(repr(float(text))) == Decimal(text):
                number = float(text) if scale else int(Decimal(text))
            return {"lit": number, "type": f"decimal({precision},{scale})"}
        if kind == "null":
            typ = wire_type(value, f"{path}.null")
            self.null_types.setdefault(typ, value)
            return {"lit": None, "type": typ}
        raise unsupported(f"{kind} literal", f"{path}.{kind}", "the wire has no literal of this type")

    def _scalar_function(self, body: dict[str, Any], refs: list[str], path: str) -> dict[str, Any]:
        check_keys(body, {"functionReference", "arguments", "outputType"}, path, "scalarFunction")
        name = self.function(body, path).lower()
        raw_args = body.get("arguments", [])
        if name in ("add", "subtract") and len(raw_args) == 2:
            kinds = [next(iter(a.get("value", {}).get("literal", {"": 0}))) for a in raw_args]
            if any(k in _INTERVALS for k in kinds):
                return self._date_arithmetic(name, raw_args, kinds, refs, path)
        args = self.arguments(body, refs, path)
        if name in ("like", "ilike") and len(args) == 3:
            # DataFusion writes the escape character as a third argument, NULL for "none"; a NULL escape
            # kept on the wire would make the engine fold the predicate to NULL.
            if args[2].get("lit", "") is not None:
                raise unsupported(
                    f"{name.upper()} with an escape character", f"{path}.arguments[2]", "the wire like has no escape"
                )
            args = args[:2]
        return {"fn": SUBSTRAIT_TO_WIRE_FN.get(name, name), "args": args}

    def _date_arithmetic(
        self, name: str, raw_args: list[dict[str, Any]], kinds: list[str], refs: list[str], path: str
    ) -> dict[str, Any]:
        """``date literal ± interval literal`` folded into a date literal; the wire has no interval type."""
        pos = 1 if kinds[1] in _INTERVALS else 0
        if name == "subtract" and pos == 0:
            raise unsupported("interval - date", path, "it has no meaning")
        other = self.expr(raw_args[1 - pos]["value"], refs, f"{path}.arguments[{1 - pos}].value")
        ipath = f"{path}.arguments[{pos}].value.literal.{kinds[pos]}"
        if other.get("type") != "date" or not isinstance(other.get("lit"), str):
            raise unsupported(
                "interval arithmetic on anything but a date literal", ipath, "the wire has no interval type"
            )
        interval = raw_args[pos]["value"]["literal"][kinds[pos]]
        ym = interval.get("intervalYearToMonth", {}) if kinds[pos] == "intervalCompound" else interval
        ds = interval.get("intervalDayToSecond", {}) if kinds[pos] == "intervalCompound" else interval
        months = 12 * int(ym.get("years", 0)) + int(ym.get("months", 0)) if kinds[pos] != "intervalDayToSecond" else 0
        days = int(ds.get("days", 0)) if kinds[pos] != "intervalYearToMonth" else 0
        if kinds[pos] != "intervalYearToMonth" and (
            int(ds.get("seconds", 0)) or int(ds.get("subseconds", 0)) or int(ds.get("microseconds", 0))
        ):
            raise unsupported("date ± an interval with a time part", ipath, "the result would be a timestamp")
        sign = -1 if name == "subtract" else 1
        day = add_months(dt.date.fromisoformat(other["lit"]), sign * months) + dt.timedelta(days=sign * days)
        return {"lit": day.isoformat(), "type": "date"}

    def _subquery(self, body: dict[str, Any], refs: list[str], path: str) -> dict[str, Any]:
        kind, sub = single(body, path, "a subquery")
        spath = f"{path}.{kind}"
        self.outer.append(refs)
        try:
            if kind == "scalar":
                check_keys(sub, {"input"}, spath, "scalar subquery")
                plan, _ = self.rel(sub.get("input"), f"{spath}.input")
                return {"subquery": plan, "kind": "scalar"}
            if kind == "inPredicate":
                check_keys(sub, {"needles", "haystack"}, spath, "inPredicate")
                needles = sub.get("needles", [])
                if len(needles) != 1:
                    raise unsupported("IN with several needles", f"{spath}.needles", "the wire in takes one")
                plan, _ = self.rel(sub.get("haystack"), f"{spath}.haystack")
            elif kind == "setPredicate":
                check_keys(sub, {"predicateOp", "tuples"}, spath, "setPredicate")
                if sub.get("predicateOp") != "PREDICATE_OP_EXISTS":
                    raise unsupported(
                        f"set predicate {sub.get('predicateOp')}", f"{spath}.predicateOp", "only EXISTS is modelled"
                    )
                plan, _ = self.rel(sub.get("tuples"), f"{spath}.tuples")
                return {"subquery": plan, "kind": "exists"}
            else:
                raise unsupported(f"{kind} subquery", spath, "the wire has scalar, exists and in subqueries")
        finally:
            self.outer.pop()
        needle = self.expr(needles[0], refs, f"{spath}.needles[0]")
        return {"subquery": plan, "kind": "in", "args": [needle]}

    def measure(self, m: dict[str, Any], refs: list[str], path: str) -> dict[str, Any]:
        """An aggregate relation's measure (an aggregate function) as a wire call."""
        check_keys(m, {"functionReference", "arguments", "invocation", "phase", "outputType"}, path, "measure")
        if m.get("phase", "AGGREGATION_PHASE_INITIAL_TO_RESULT") not in (
            "AGGREGATION_PHASE_INITIAL_TO_RESULT",
            "AGGREGATION_PHASE_UNSPECIFIED",
        ):
            raise unsupported(f"aggregation phase {m['phase']}", f"{path}.phase", "only complete aggregation is")
        invocation = m.get("invocation", "AGGREGATION_INVOCATION_ALL")
        if invocation not in (
            "AGGREGATION_INVOCATION_ALL",
            "AGGREGATION_INVOCATION_DISTINCT",
            "AGGREGATION_INVOCATION_UNSPECIFIED",
        ):
            raise SubstraitError("invalid_substrait", f"unknown invocation {invocation}", f"{path}.invocation")
        name = self.function(m, path)
        call: dict[str, Any] = {"fn": name.lower(), "args": self.arguments(m, refs, path)}
        if invocation == "AGGREGATION_INVOCATION_DISTINCT":
            call["distinct"] = True
        return call
