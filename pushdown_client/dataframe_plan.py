"""A PySpark DataFrame's analyzed logical plan, read through py4j, as the service's wire plan (docs/dataframe.md).

``translate(df)`` walks ``df._jdf.queryExecution().analyzed()`` top-down and writes each node the wire format has
(filter, project, join, aggregate, sort, limit, union, distinct, sample; a Python UDF as ``{"fn": "udf"}``). A relation
that is not one of those nodes (a Parquet file, a table, ``spark.range``, in-memory rows, a cached DataFrame, a
node or an expression this reader does not know) becomes a *leaf*: a scan of a table with a made-up name, its
columns declared in the request's catalog, kept by reference as the DataFrame of its own sub-plan
(``Dataset.ofRows``). Nothing moves into a leaf, so whatever the reader does not understand stays where it was;
a filter the service pushes onto a leaf's scan is applied on top of it. A sub-plan the session has cached is
always a leaf, whole, so that Spark's cache lookup still finds it.

Every column is named by the node that makes it: leaves by their own names (renamed where a name is not a plain
identifier or repeats), projections and aggregates with names unique within their output, and a join side whose
columns carry no table qualifier is wrapped in an ``alias``; so every reference in the wire plan is unambiguous
whatever the DataFrame's own names were. The final column names are put back by the runner (position by
position).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pushdown_client.dataframe_expr import ExpressionWriter
from pushdown_client.dataframe_jvm import (
    IDENT,
    Leaf,
    Translation,
    Udf,
    Unsupported,
    cached_row_count,
    join_type,
    leaf_label,
    python_type,
    row_count,
    safe,
    seq,
    simple_name,
    window_frame,
)
from pushdown_client.spark_runner import wire_type

#: leaf tables are named ``__pushdown_<what>_<n>``: never a name of the caller's (docs/dataframe.md)
LEAF_PREFIX = "__pushdown_"
#: nodes read through: a view and its name (the name labels a leaf right below)
_PASS_THROUGH = {"SubqueryAlias", "View"}


class Translator(ExpressionWriter):
    """One DataFrame's plan to wire; ``functions`` carries declared UDF costs (by the UDF's name)."""

    def __init__(self, spark: Any, functions: Mapping[Any, Mapping[str, Any]]) -> None:
        self.spark = spark
        self.jsession = spark._jsparkSession
        self.cache = self.jsession.sharedState().cacheManager()
        #: declarations by the UDF's own name, and by the UDF object itself (its JVM function)
        self.functions: dict[str, dict[str, Any]] = {}
        #: names in ``functions`` that a Python UDF of the plan answered to
        self.used: set[str] = set()
        self.by_function: list[tuple[Any, dict[str, Any]]] = []
        for key, given in functions.items():
            spec = dict(given)
            udf_object = spec.pop("udf", None)
            if isinstance(key, str):
                self.functions[key.lower()] = spec
            else:
                udf_object = key
            if udf_object is not None:
                self.by_function.append((getattr(udf_object, "_unwrapped", udf_object)._judf.func(), spec))
        self.leaves: list[Leaf] = []
        self.udfs: dict[str, Udf] = {}
        self.opaque: list[str] = []
        #: expression id -> the wire reference of that column where it is read now
        self.refs: dict[int, str] = {}
        self.qualifiers = 0

    # ------------------------------------------------------------------ nodes

    def translate(self, jdf: Any) -> Translation:
        plan = self.node(jdf.queryExecution().analyzed(), None)
        others = {k: v for k, v in self.functions.items() if k not in self.used}
        return Translation(plan, self.leaves, self.udfs, self.opaque, others)

    def node(self, plan: Any, label: str | None) -> dict[str, Any]:
        kind = simple_name(plan)
        if self.cache.lookupCachedData(self.jsession, plan).isDefined():
            return self.leaf(plan, label, cached=True)
        if kind in _PASS_THROUGH:
            name = label
            if kind == "SubqueryAlias":
                name = str(plan.alias())
            return self.node(plan.child(), name)
        handler = getattr(self, f"_{kind}", None)
        if handler is None:
            return self.leaf(plan, label)
        saved = (dict(self.refs), len(self.leaves), dict(self.udfs), self.qualifiers)
        try:
            return handler(plan)
        except Exception as why:  # noqa: BLE001 - Unsupported, or a plan this Spark version spells otherwise
            self.refs, kept, self.udfs, self.qualifiers = saved
            del self.leaves[kept:]
            self.opaque.append(f"{kind}: {str(why).splitlines()[0][:200] if str(why) else type(why).__name__}")
            return self.leaf(plan, label)

    def leaf(self, plan: Any, label: str | None, cached: bool = False) -> dict[str, Any]:
        number = len(self.leaves) + 1
        label = safe(label or leaf_label(plan))
        table = f"{LEAF_PREFIX}{label}_{number}"
        alias = f"t{number}"
        attributes = seq(plan.output())
        names: list[str] = []
        seen: set[str] = set()
        for i, attribute in enumerate(attributes):
            name = str(attribute.name())
            if not IDENT.match(name) or name.lower() in seen:
                name = f"c{i}_{safe(name)}"
            seen.add(name.lower())
            names.append(name)
            self.refs[attribute.exprId().id()] = f"{alias}.{name}"
        jdf = self.spark._jvm.org.apache.spark.sql.classic.Dataset.ofRows(self.jsession, plan)
        original = [str(a.name()) for a in attributes]
        columns = [
            (n, wire_type(python_type(self.spark, a.dataType()))) for n, a in zip(names, attributes, strict=True)
        ]
        rows = cached_row_count(self.cache.lookupCachedData(self.jsession, plan)) if cached else None
        rows = row_count(plan) if rows is None else rows
        self.leaves.append(Leaf(table, label, jdf, columns, original, rows, cached))
        return {"op": "scan", "table": table, "alias": alias}

    def _Filter(self, plan: Any) -> dict[str, Any]:
        child = self.node(plan.child(), None)
        return {"op": "filter", "predicate": self.expr(plan.condition()), "input": child}

    def _Project(self, plan: Any) -> dict[str, Any]:
        child = self.node(plan.child(), None)
        exprs = self.named_outputs(seq(plan.projectList()), lambda e: self.expr(e))
        return {"op": "project", "exprs": exprs, "input": child}

    def named_outputs(self, items: list[Any], write: Any, taken: set[str] | None = None) -> list[dict[str, Any]]:
        """``{"expr", "as"}`` per named expression, each output name unique (case-insensitively) and a plain
        identifier; the references above follow (a column passed through keeps its qualifier)."""
        out: list[dict[str, Any]] = []
        updates: dict[int, str] = {}
        taken = set() if taken is None else taken
        for i, item in enumerate(items):
            name = str(item.name())
            if not IDENT.match(name) or name.lower() in taken:
                name = f"c{i}_{safe(name)}"
                while name.lower() in taken:
                    name += "_"
            taken.add(name.lower())
            inner = item.child() if simple_name(item) == "Alias" else item
            expr = write(inner)
            ref = expr.get("col") if simple_name(item) == "AttributeReference" else None
            # the wire keeps a passed-through column's qualifier when its name stays
            updates[item.exprId().id()] = ref if isinstance(ref, str) and ref.rpartition(".")[2] == name else name
            out.append({"expr": expr, "as": name})
        self.refs.update(updates)
        return out

    def _Join(self, plan: Any) -> dict[str, Any]:
        kind = join_type(plan.joinType())
        left = self.side(plan.left())
        right = self.side(plan.right())
        node: dict[str, Any] = {"op": "join", "type": kind, "left": left, "right": right}
        condition = plan.condition()
        if condition.isDefined():
            node["on"] = self.expr(condition.get())
        elif kind not in ("cross", "inner"):
            raise Unsupported(f"a {kind} join without a condition")
        if kind == "inner" and "on" not in node:
            node["type"] = "cross"
        return node

    def side(self, plan: Any) -> dict[str, Any]:
        """A join input whose every column is read through a table qualifier (wrapped in an alias if not)."""
        node = self.node(plan, None)
        ids = [a.exprId().id() for a in seq(plan.output())]
        if all("." in self.refs[i] for i in ids):
            return node
        self.qualifiers += 1
        qualifier = f"q{self.qualifiers}"
        for i in ids:
            self.refs[i] = f"{qualifier}.{self.refs[i].rpartition('.')[2]}"
        return {"op": "alias", "name": qualifier, "input": node}

    def _Aggregate(self, plan: Any) -> dict[str, Any]:
        child = self.node(plan.child(), None)
        keys = seq(plan.groupingExpressions())
        group_by: list[Any] = []
        key_refs: list[str] = []
        taken: set[str] = set()
        for i, key in enumerate(keys):
            written = self.expr(key)
            if "col" in written:
                group_by.append(written)
                key_refs.append(written["col"])
                taken.add(written["col"].rpartition(".")[2].lower())
            else:
                name = f"g{i}__key"
                group_by.append({"expr": written, "as": name})
                key_refs.append(name)
                taken.add(name)
        aggregates: list[dict[str, Any]] = []

        def above(expr: Any) -> dict[str, Any]:
            for key, ref in zip(keys, key_refs, strict=True):
                if expr.semanticEquals(key):
                    return {"col": ref}
            if simple_name(expr) == "AggregateExpression":
                name = f"a{len(aggregates)}__agg"
                aggregates.append({"expr": self.aggregate(expr), "as": name})
                return {"col": name}
            if simple_name(expr) == "AttributeReference":
                raise Unsupported(f"{expr.name()} is neither grouped nor aggregated")
            return self.call(expr, above)

        items = seq(plan.aggregateExpressions())
        node: dict[str, Any] = {"op": "aggregate", "group_by": group_by, "aggregates": aggregates, "input": child}
        exprs = self.named_outputs(items, above)
        return {"op": "project", "exprs": exprs, "input": node}

    def _Window(self, plan: Any) -> dict[str, Any]:
        child = self.node(plan.child(), None)
        node: dict[str, Any] = {
            "op": "window",
            "partition_by": [self.expr(e) for e in seq(plan.partitionSpec())],
            "order_by": [self.sort_key(o) for o in seq(plan.orderSpec())],
            "functions": [],
            "input": child,
        }
        taken = {self.refs[a.exprId().id()].rpartition(".")[2].lower() for a in seq(plan.child().output())}
        for i, item in enumerate(seq(plan.windowExpressions())):
            inner = item.child() if simple_name(item) == "Alias" else item
            if simple_name(inner) != "WindowExpression":
                raise Unsupported(f"window expression {item.sql()}")
            function, kind = inner.windowFunction(), simple_name(inner.windowFunction())
            entry: dict[str, Any] = {}
            if kind == "AggregateExpression":
                entry["expr"] = self.aggregate(function)
                entry["frame"] = window_frame(inner.windowSpec().frameSpecification())
            elif kind in ("RowNumber", "Rank", "DenseRank", "PercentRank", "CumeDist"):
                entry["expr"] = {"fn": str(function.prettyName()).lower(), "args": []}
            else:
                raise Unsupported(f"window function {function.sql()}")
            name = str(item.name())
            if not IDENT.match(name) or name.lower() in taken:
                name = f"w{i}_{safe(name)}"
            taken.add(name.lower())
            entry["as"] = name
            node["functions"].append(entry)
            self.refs[item.exprId().id()] = name
        return node

    def _Generate(self, plan: Any) -> dict[str, Any]:
        generator = plan.generator()
        if simple_name(generator) not in ("Explode", "PosExplode") or not plan.unrequiredChildIndex().isEmpty():
            raise Unsupported(f"generator {generator.sql()}")
        child = self.node(plan.child(), None)
        written = self.builtin(generator, [self.expr(c) for c in seq(generator.children())])
        self.qualifiers += 1
        alias = f"g{self.qualifiers}"
        names: list[str] = []
        for attribute in seq(plan.generatorOutput()):
            name = str(attribute.name())
            if not IDENT.match(name) or name.lower() in {n.lower() for n in names}:
                raise Unsupported(f"generated column {name!r}")
            names.append(name)
            self.refs[attribute.exprId().id()] = f"{alias}.{name}"
        return {
            "op": "generate",
            "generator": written,
            "outer": bool(plan.outer()),
            "alias": alias,
            "columns": names,
            "input": child,
        }

    def _Sort(self, plan: Any) -> dict[str, Any]:
        if not getattr(plan, "global")():
            raise Unsupported("sortWithinPartitions")
        child = self.node(plan.child(), None)
        return {"op": "sort", "keys": [self.sort_key(o) for o in seq(plan.order())], "input": child}

    def _GlobalLimit(self, plan: Any) -> dict[str, Any]:
        local = plan.child()
        count = plan.limitExpr()
        if simple_name(local) != "LocalLimit" or simple_name(count) != "Literal":
            raise Unsupported("a limit that is not a literal")
        child = self.node(local.child(), None)
        return {"op": "limit", "count": int(count.value()), "input": child}

    def _Sample(self, plan: Any) -> dict[str, Any]:
        """``df.sample(fraction, seed)`` (``TABLESAMPLE``): a Bernoulli sample of ``upperBound - lowerBound`` of the
        rows, with Spark's seed (the SQL written back says ``REPEATABLE (seed)``, so Spark draws the same rows)."""
        lower, upper = float(plan.lowerBound()), float(plan.upperBound())
        if plan.withReplacement() or lower != 0.0 or not 0.0 < upper <= 1.0:
            raise Unsupported("a sample with replacement or of a range (randomSplit)")
        percent = format((Decimal(repr(upper)) * 100).normalize(), "f")
        if float(percent) / 100.0 != upper:  # the SQL written back would make Spark draw other rows: stays a leaf
            raise Unsupported(f"a sample fraction {upper!r} that no PERCENT in SQL reads back exactly")
        seed = plan.seed()
        if hasattr(seed, "isDefined"):  # Spark 4.1 keeps it as an Option
            seed = seed.get() if seed.isDefined() else None
        node: dict[str, Any] = {"op": "sample", "fraction": upper, "method": "bernoulli"}
        if seed is not None:
            node["seed"] = int(seed)
        node["input"] = self.node(plan.child(), None)
        return node

    def _Distinct(self, plan: Any) -> dict[str, Any]:
        return {"op": "distinct", "input": self.node(plan.child(), None)}

    def _Deduplicate(self, plan: Any) -> dict[str, Any]:
        keys = {k.exprId().id() for k in seq(plan.keys())}
        if keys != {a.exprId().id() for a in seq(plan.child().output())}:
            raise Unsupported("dropDuplicates on a subset of the columns")
        return self._Distinct(plan)

    def _Union(self, plan: Any) -> dict[str, Any]:
        if plan.byName() or plan.allowMissingCol():
            raise Unsupported("unionByName")
        inputs = [self.node(child, None) for child in seq(plan.children())]
        first = seq(seq(plan.children())[0].output())
        names = [self.refs[a.exprId().id()].rpartition(".")[2].lower() for a in first]
        if len(set(names)) != len(names):
            raise Unsupported("a union whose first input repeats a column name")
        for theirs, ours in zip(first, seq(plan.output()), strict=True):
            self.refs[ours.exprId().id()] = self.refs[theirs.exprId().id()].rpartition(".")[2]
        return {"op": "union", "all": True, "inputs": inputs}


def translate(df: Any, functions: Mapping[Any, Mapping[str, Any]] | None = None) -> Translation:
    """``df``'s analyzed plan as a wire plan, with its leaves and Python UDFs (see the module's docstring)."""
    return Translator(df.sparkSession, dict(functions or {})).translate(df._jdf)
