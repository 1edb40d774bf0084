"""SELECT -> plan: WHERE, aggregation, HAVING, windows, projection, DISTINCT, ORDER BY.

The plan shape for one SELECT is fixed bottom to top:
scan/join tree -> filter (WHERE) -> aggregate -> filter (HAVING) -> window* ->
project -> distinct -> sort -> limit.
"""

from __future__ import annotations

import re
from typing import Any, Final

from sqlglot import exp

from service.sql.common import TypeKinds, child_nodes
from service.sql.errors import SqlError
from service.sql.grouping import grouping_keys
from service.sql.parse import position, unsupported
from service.sql.plan_expr import Expr, Node, Subst, same
from service.sql.plan_names import visible_names
from service.sql.plan_query import QueryBuilder
from service.sql.survey import AGGREGATE_CALLS

# Select arguments that change meaning and that the wire format cannot carry.
_REFUSED_SELECT_ARGS: dict[str, str] = {
    "qualify": "QUALIFY",
    "windows": "named WINDOW clause",
    "pivots": "PIVOT",
    "connect": "CONNECT BY",
    "sort": "SORT BY",
    "cluster": "CLUSTER BY",
    "distribute": "DISTRIBUTE BY",
    "into": "SELECT INTO",
    "prewhere": "PREWHERE",
    "sample": "TABLESAMPLE after an alias, or USING SAMPLE",
    "match": "MATCH_RECOGNIZE",
    "locks": "FOR UPDATE",
    "exclude": "SELECT * EXCLUDE",
}


#: what the scope walks below do with a node, by its type
_OTHER: Final = 0
_NESTED: Final = 1
_AGGREGATE: Final = 2
_WINDOW: Final = 3
_SCOPE_KIND: Final = TypeKinds(
    [((exp.Query, exp.Subquery), _NESTED), (AGGREGATE_CALLS, _AGGREGATE), ((exp.Window,), _WINDOW)], default=_OTHER
)


def _aggregates_in(e: exp.Expr) -> list[exp.AggFunc]:
    """Aggregate calls of this scope in pre-order; a window's own function is not one. A loop: a nested function
    that calls itself is a reference cycle, left for the cyclic collector on every call."""
    found: list[exp.AggFunc] = []
    stack: list[tuple[exp.Expr, bool]] = [(e, False)]  # (node, whether it is a window's own function)
    while stack:
        node, is_window_fn = stack.pop()
        kind = _SCOPE_KIND(node)
        if kind == _NESTED:
            continue
        if kind == _AGGREGATE and not is_window_fn:
            found.append(node)  # type: ignore[arg-type]  # its kind says so
            continue
        window = kind == _WINDOW
        for child in reversed(child_nodes(node)):
            stack.append((child, window and child is node.this))
    return found


def _windows_in(e: exp.Expr) -> list[exp.Window]:
    """Window calls of this scope in pre-order, nested queries not entered; a loop: generators cost a step a level."""
    found: list[exp.Window] = []
    stack = [e]
    while stack:
        node = stack.pop()
        if _SCOPE_KIND(node) == _WINDOW:
            found.append(node)  # type: ignore[arg-type]
        inner = [c for c in child_nodes(node) if _SCOPE_KIND(c) != _NESTED]
        stack.extend(reversed(inner))
    return found


def _order_input(o: exp.Ordered, names: list[str], raws: list[exp.Expr]) -> exp.Expr:
    """What an ORDER BY key sorts by: the select item it names by its alias, else the key itself."""
    key = o.this
    if isinstance(key, exp.Column) and not key.table and key.name in names:
        return raws[names.index(key.name)]
    return key


class FreshNames:
    """Names ``prefix1``, ``prefix2``, ... not yet taken in one SELECT block.

    >>> fresh = FreshNames({"_a1"})
    >>> fresh("_a"), fresh("_a"), fresh("_g")
    ('_a2', '_a3', '_g1')
    """

    def __init__(self, used: set[str]) -> None:
        self.used = used

    def __call__(self, prefix: str) -> str:
        i = 1
        while f"{prefix}{i}" in self.used:
            i += 1
        self.used.add(f"{prefix}{i}")
        return f"{prefix}{i}"


def _output_name(
    node: exp.Expr, raws: list[exp.Expr], names: list[str], taken: set[str], fresh: FreshNames, prefix: str
) -> str:
    """``node``'s select alias unless an output took it (``taken``: lower case), else a fresh name; now taken."""
    for r, n in zip(raws, names, strict=True):
        if same(r, node) and n.lower() not in taken:
            taken.add(n.lower())
            return n
    name = fresh(prefix)
    taken.add(name.lower())
    return name


class SelectBuilder(QueryBuilder):
    """The SELECT block of the plan builder."""

    def _select(self, sel: exp.Select, ctes: dict[str, exp.CTE]) -> Node:
        for arg, what in _REFUSED_SELECT_ARGS.items():
            if sel.args.get(arg):
                raise unsupported(what, sel.args[arg] if isinstance(sel.args[arg], exp.Expr) else sel)
        if sel.args.get("kind"):
            raise unsupported(f"SELECT AS {sel.args['kind']}", sel)
        distinct = sel.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise unsupported("DISTINCT ON", distinct)

        node = self._from_tree(sel, ctes)
        for lateral in sel.args.get("laterals") or []:
            node = self._generate(lateral, node)
        where = sel.args.get("where")
        if where is not None:
            node = {"op": "filter", "predicate": self.expr(where.this), "input": node}

        items = list(sel.expressions)
        for item in items:
            if isinstance(item.unalias(), exp.Star) or (
                isinstance(item.unalias(), exp.Column) and isinstance(item.unalias().this, exp.Star)
            ):
                raise unsupported("SELECT * without a catalog", item)
        names = [item.alias_or_name for item in items]
        for item in items:
            if isinstance(item, exp.Subquery) and item.args.get("alias") is not None:
                item.set("alias", None)  # qualify named it (_col_N) as a table alias; the name is in ``names``
        raws = [item.unalias() for item in items]
        # What the caller sees: the engine's own names for the outermost SELECT, internal names elsewhere.
        out_names = self.output_names(sel, items) or names
        order = sel.args.get("order")
        order_items = list(order.expressions) if order is not None else []
        having = sel.args.get("having")
        group = sel.args.get("group")

        subst: Subst = []
        fresh = FreshNames({n.lower() for n in names})

        # -- aggregation
        aggs: list[exp.AggFunc] = []
        if self.has_aggregates:  # the survey saw an aggregate call somewhere in the query: look for this block's
            for e in [
                *raws,
                *([having.this] if having is not None else []),
                *(_order_input(o, names, raws) for o in order_items),
            ]:
                for a in _aggregates_in(e):
                    if not any(a == seen for seen in aggs):
                        aggs.append(a)
        grouped: frozenset[str] = frozenset()
        if group is not None or aggs:
            sources = [sel.args["from_"].this, *(j.this for j in sel.args.get("joins") or [])]
            grouped = frozenset(s.alias_or_name for s in sources)
            node = self._aggregate(node, group, aggs, raws, names, subst, fresh)
            if having is not None:
                node = {"op": "filter", "predicate": self.expr(having.this, subst, grouped=grouped), "input": node}
        elif having is not None:
            raise unsupported("HAVING without aggregation", having)

        # -- windows: one node per distinct (PARTITION BY, ORDER BY)
        windows: list[exp.Window] = []
        for e in [*raws, *(_order_input(o, names, raws) for o in order_items)] if self.has_windows else ():
            for w in _windows_in(e):
                if not any(w == seen for seen in windows):
                    windows.append(w)
        if windows:
            node = self._windows(node, windows, raws, names, subst, fresh, grouped)

        project: Node = {
            "op": "project",
            "exprs": [
                {"expr": self.expr(r, subst, grouped=grouped), "as": n} for r, n in zip(raws, out_names, strict=True)
            ],
        }

        # -- ORDER BY: above the project when every key is an output, else below it
        output_keys: list[Expr] = []
        for o in order_items:
            key = o.this
            name: str | None = None
            if isinstance(key, exp.Column) and not key.table and key.name in names:
                name = out_names[names.index(key.name)]
            else:
                for r, n in zip(raws, out_names, strict=True):
                    if same(key, r):
                        name = n
                        break
            if name is None or "." in name or out_names.count(name) > 1:
                # Not an output, or an output a wire column cannot name unambiguously: sort below the project.
                break
            desc, nulls_first = bool(o.args.get("desc")), bool(o.args.get("nulls_first"))
            output_keys.append({"expr": {"col": name}, "desc": desc, "nulls_first": nulls_first})
        out_keys = output_keys if len(output_keys) == len(order_items) else None

        if order_items and out_keys is None:
            if distinct is not None:
                raise unsupported("ORDER BY an expression that is not in the SELECT DISTINCT list", order)
            keys = [
                {
                    "expr": self.expr(_order_input(o, names, raws), subst, grouped=grouped),
                    "desc": bool(o.args.get("desc")),
                    "nulls_first": bool(o.args.get("nulls_first")),
                }
                for o in order_items
            ]
            node = {"op": "sort", "keys": keys, "input": node}
            node = self._limit(sel, node)
            project["input"] = node
            return project

        project["input"] = node
        node = project
        if distinct is not None:
            node = {"op": "distinct", "input": node}
        if order_items:
            node = {"op": "sort", "keys": out_keys, "input": node}
        return self._limit(sel, node)

    def _generate(self, lateral: exp.Lateral, node: Node) -> Node:
        """``LATERAL VIEW [OUTER] explode(x) alias AS col, ...``: a ``generate`` node, a barrier to filters."""
        gen = lateral.this
        if not lateral.args.get("view"):
            raise unsupported("LATERAL subquery", lateral)
        if not isinstance(gen, exp.Explode) or isinstance(gen, exp.Posexplode) or gen.expressions:
            raise unsupported(f"LATERAL VIEW {gen.sql_name() if isinstance(gen, exp.Func) else gen.key}", lateral)
        alias = lateral.args.get("alias")
        if not isinstance(alias, exp.TableAlias) or not alias.name or not alias.columns:
            raise unsupported("LATERAL VIEW without an alias and column names", lateral)
        return {
            "op": "generate",
            "generator": self.expr(gen),
            "outer": bool(lateral.args.get("outer")),
            "alias": alias.name,
            "columns": [c.name for c in alias.columns],
            "input": node,
        }

    def _aggregate(
        self,
        node: Node,
        group: exp.Group | None,
        aggs: list[exp.AggFunc],
        raws: list[exp.Expr],
        names: list[str],
        subst: Subst,
        fresh: FreshNames,
    ) -> Node:
        keys: list[Any] = []
        key_exprs, sets = grouping_keys(group)
        taken = {g.name.lower() for g in key_exprs if isinstance(g, exp.Column)}  # output names, lower case
        for g in key_exprs:
            if isinstance(g, exp.Column):
                wire = self.expr(g)
                keys.append(wire)
                subst.append((g, wire))
                continue
            if isinstance(g, exp.Literal):
                raise unsupported("GROUP BY a constant", g)
            name = _output_name(g, raws, names, taken, fresh, "_g")
            keys.append({"expr": self.expr(g), "as": name})
            subst.append((g, {"col": name}))
        outputs: list[Expr] = []
        for a in aggs:
            name = _output_name(a, raws, names, taken, fresh, "_a")
            if isinstance(a, (exp.Grouping, exp.GroupingId)) and sets is None:
                raise SqlError("invalid_query", f"{a.sql()} needs GROUP BY ROLLUP, CUBE or GROUPING SETS", *position(a))
            wire = self.expr(a, agg_ok=True)
            if isinstance(a, exp.GroupingId) and not a.expressions:  # grouping_id(): every key, in order
                wire = {"fn": "grouping_id", "args": [self.expr(g) for g in key_exprs]}
            outputs.append({"expr": wire, "as": name})
            subst.append((a, {"col": name}))
        node = {"op": "aggregate", "group_by": keys, "aggregates": outputs, "input": node}
        if sets is not None:
            node["grouping_sets"] = [list(g) for g in sets]
        return node

    def _windows(
        self,
        node: Node,
        windows: list[exp.Window],
        raws: list[exp.Expr],
        names: list[str],
        subst: Subst,
        fresh: FreshNames,
        grouped: frozenset[str],
    ) -> Node:
        groups: dict[tuple[str, str], list[exp.Window]] = {}
        for w in windows:
            if w.args.get("alias"):
                raise unsupported("named window reference", w)
            if isinstance(w.this, (exp.IgnoreNulls, exp.RespectNulls)):
                raise unsupported("IGNORE NULLS / RESPECT NULLS", w)
            if not isinstance(w.this, exp.Func):
                raise unsupported("this window form", w)
            if w.args.get("over") not in (None, "OVER") or w.args.get("first") is not None:
                raise unsupported("this window form", w)
            spec = (
                "|".join(p.sql() for p in w.args.get("partition_by") or []),
                w.args["order"].sql() if w.args.get("order") else "",
            )
            groups.setdefault(spec, []).append(w)
        new_subst: Subst = []
        for ws in groups.values():
            first = ws[0]
            fns: list[Expr] = []
            beside = visible_names(node, self.tables) or frozenset()  # the input's columns stay visible
            for w in ws:
                name = None
                for r, n in zip(raws, names, strict=True):
                    if same(r, w) and n.lower() not in beside:
                        name = n
                        break
                name = name or fresh("_w")
                while name.lower() in beside:
                    name = fresh("_w")
                item: Expr = {"expr": self.expr(w.this, subst, skip_top=True, grouped=grouped), "as": name}
                frame = self._frame(w.args.get("spec"))
                if frame is not None:
                    item["frame"] = frame
                fns.append(item)
                new_subst.append((w, {"col": name}))
            order = first.args.get("order")
            node = {
                "op": "window",
                "partition_by": [self.expr(p, subst, grouped=grouped) for p in first.args.get("partition_by") or []],
                "order_by": [self._sort_key(o, subst, grouped=grouped) for o in (order.expressions if order else [])],
                "functions": fns,
                "input": node,
            }
        subst.extend(new_subst)
        return node

    @staticmethod
    def _frame(spec: exp.Expr | None) -> dict[str, str] | None:
        """A window frame as the wire extension ``{"kind", "start", "end"}``."""
        if spec is None:
            return None
        if spec.args.get("exclude"):
            raise unsupported("window frame EXCLUDE", spec)

        def bound(value: Any, side: Any) -> str:
            if isinstance(value, str):
                text = value.lower()
                if text == "current row":
                    return text
                if text == "unbounded":
                    return f"unbounded {str(side).lower()}"
            if isinstance(value, exp.Literal) and not value.is_string and re.fullmatch(r"\d+", value.this):
                return f"{value.this} {str(side).lower()}"
            raise unsupported("window frame bound that is not a literal row count", spec)

        kind = str(spec.args.get("kind") or "").lower()
        if kind not in ("rows", "range"):
            raise unsupported(f"{kind.upper()} window frame", spec)
        start = bound(spec.args.get("start"), spec.args.get("start_side"))
        end = bound(spec.args.get("end"), spec.args.get("end_side")) if spec.args.get("end") else "current row"
        return {"kind": kind, "start": start, "end": end}

    def _sort_key(
        self, o: exp.Ordered, subst: Subst, output_scope: bool = False, grouped: frozenset[str] = frozenset()
    ) -> Expr:
        key = o.this
        if output_scope:
            # Set-operation ORDER BY names the output columns of the first input.
            key = key.transform(lambda n: exp.column(n.name) if isinstance(n, exp.Column) else n)
        return {
            "expr": self.expr(key, subst, grouped=grouped),
            "desc": bool(o.args.get("desc")),
            "nulls_first": bool(o.args.get("nulls_first")),
        }

    # ---- expressions ---------------------------------------------------
