"""Random plans over small tables rich in NULLs, duplicates and skew, for differential testing.

Every generated subtree exposes uniquely qualified columns (scans get unique
aliases; projections, aggregates, windows and unions are wrapped in an alias
node), so any predicate built from the visible columns resolves.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

TABLES: dict[str, list[tuple[str, str]]] = {
    "t1": [("a", "int"), ("b", "int"), ("s", "string")],
    "t2": [("a", "int"), ("c", "int"), ("s", "string")],
    "t3": [("k", "int"), ("v", "int")],
}
JOIN_TYPES = ["inner", "left", "right", "full", "semi", "anti", "cross"]


def make_rows(rng: random.Random, table: str, count: int) -> list[tuple[Any, ...]]:
    rows = []
    for _ in range(count):
        row = []
        for _name, typ in TABLES[table]:
            if rng.random() < 0.2:
                row.append(None)
            elif typ == "int":
                # skew: a third of the values are 1
                row.append(1 if rng.random() < 0.33 else rng.randint(-2, 8))
            else:
                # some strings are numbers: CAST(s AS INT) works on those and raises on the rest
                row.append(rng.choice(["Alpha", "Avon", "Beta", "Boston", "Ceres", "alpha", "12", "7"]))
        rows.append(tuple(row))
    # duplicates
    rows.extend(rng.sample(rows, count // 5))
    return rows


def catalog(rows: dict[str, list[tuple[Any, ...]]]) -> dict[str, Any]:
    tables = {}
    for name, columns in TABLES.items():
        tables[name] = {"columns": [{"name": n, "type": t} for n, t in columns], "row_count": len(rows[name])}
    return {"tables": tables}


@dataclass
class Rel:
    plan: dict[str, Any]
    columns: list[tuple[str, str]]  # (qualified name, type)


class PlanGenerator:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.counter = 0

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # ------------------------------------------------------------ expressions

    def col(self, rel: Rel, typ: str | None = None) -> dict[str, Any] | None:
        options = [c for c, t in rel.columns if typ is None or t == typ]
        return {"col": self.rng.choice(options)} if options else None

    def int_lit(self) -> dict[str, Any]:
        if self.rng.random() < 0.08:
            return {"lit": None, "type": "int"}
        return {"lit": self.rng.randint(-1, 6), "type": "int"}

    def atom(self, rel: Rel) -> dict[str, Any]:
        rng = self.rng
        x = self.col(rel, "int")
        s = self.col(rel, "string")
        choice = rng.randrange(10)
        if x is None or (s is not None and choice == 9):
            assert s is not None
            return {"fn": "like", "args": [s, {"lit": rng.choice(["A%", "%a", "B_st%"]), "type": "string"}]}
        if choice <= 2:
            return {"fn": rng.choice(["=", "!=", "<", "<=", ">", ">="]), "args": [x, self.int_lit()]}
        if choice == 3:
            return {"fn": rng.choice(["is_null", "is_not_null"]), "args": [x]}
        if choice == 4:
            return {"fn": ">", "args": [{"fn": "coalesce", "args": [x, {"lit": 0, "type": "int"}]}, self.int_lit()]}
        if choice == 5:
            return {"fn": "in", "args": [x, self.int_lit(), self.int_lit(), self.int_lit()]}
        if choice == 6:
            y = self.col(rel, "int")
            return {"fn": rng.choice(["=", "<", "!="]), "args": [x, y]}
        if choice == 7:
            return {"fn": ">", "args": [{"fn": "+", "args": [x, self.col(rel, "int")]}, self.int_lit()]}
        if choice == 8:
            return {"fn": "between", "args": [x, self.int_lit(), self.int_lit()]}
        return {"fn": "not", "args": [{"fn": ">", "args": [x, self.int_lit()]}]}

    def subquery(self, rel: Rel) -> dict[str, Any] | None:
        """x IN (SELECT ...), or a correlated EXISTS / NOT EXISTS over t3."""
        x = self.col(rel, "int")
        if x is None:
            return None
        inner_alias = self.name("sq")
        inner_scan = {"op": "scan", "table": "t3", "alias": inner_alias}
        k, v = f"{inner_alias}.k", f"{inner_alias}.v"
        if self.rng.random() < 0.5:
            inner = {
                "op": "project",
                "exprs": [{"expr": {"col": k}, "as": "k"}],
                "input": {
                    "op": "filter",
                    "predicate": {"fn": ">", "args": [{"col": v}, self.int_lit()]},
                    "input": inner_scan,
                },
            }
            found = {"subquery": inner, "kind": "in", "args": [x]}
        else:
            correlated = {"fn": "=", "args": [{"col": k}, x]}
            inner = {"op": "filter", "predicate": correlated, "input": inner_scan}
            found = {"subquery": inner, "kind": "exists"}
        return {"fn": "not", "args": [found]} if self.rng.random() < 0.3 else found

    def predicate(self, rel: Rel, special: bool = True) -> dict[str, Any]:
        """A WHERE predicate; ``special`` adds subqueries and non-deterministic parts (not in a join's ON:
        engines refuse those there)."""
        roll = self.rng.random() if special else 0.1 + 0.9 * self.rng.random()
        if roll < 0.06:
            found = self.subquery(rel)
            if found is not None:
                return found
        if roll < 0.1:
            # non-deterministic, always true: it keeps every row, so results stay comparable, and it must stay put
            always = {"fn": "<", "args": [{"fn": "rand", "args": []}, {"lit": 2.0, "type": "double"}]}
            return {"fn": "and", "args": [always, self.atom(rel)]}
        if roll < 0.5:
            return self.atom(rel)
        if roll < 0.8:
            return {"fn": "and", "args": [self.atom(rel) for _ in range(self.rng.randint(2, 3))]}
        return {
            "fn": "or",
            "args": [
                {"fn": "and", "args": [self.atom(rel), self.atom(rel)]},
                {"fn": "and", "args": [self.atom(rel), self.atom(rel)]},
            ],
        }

    # ------------------------------------------------------------ relations

    def scan(self) -> Rel:
        table = self.rng.choice(sorted(TABLES))
        alias = self.name("x")
        return Rel({"op": "scan", "table": table, "alias": alias}, [(f"{alias}.{c}", t) for c, t in TABLES[table]])

    def wrap(self, plan: dict[str, Any], names: list[tuple[str, str]]) -> Rel:
        alias = self.name("q")
        return Rel({"op": "alias", "name": alias, "input": plan}, [(f"{alias}.{n}", t) for n, t in names])

    def relation(self, depth: int) -> Rel:
        if depth <= 0:
            return self.scan()
        kind = self.rng.choice(
            [
                "filter",
                "filter",
                "join",
                "join",
                "project",
                "aggregate",
                "union",
                "window",
                "topn",
                "distinct",
                "scan",
                "guarded",
            ]
        )
        if kind == "scan":
            return self.scan()
        if kind == "join":
            return self.join(depth)
        child = self.relation(depth - 1)
        if kind == "filter":
            return Rel({"op": "filter", "predicate": self.predicate(child), "input": child.plan}, child.columns)
        if kind == "guarded":
            # a cast that raises on most strings, above the filter that keeps only numeric ones: moving the
            # cast below its guard makes the rewritten plan fail where the original does not
            other_input = self.scan()
            lk, rk = self.col(child, "int"), self.col(other_input, "int")
            if lk is not None and rk is not None:
                child = Rel(
                    {
                        "op": "join",
                        "type": "inner",
                        "on": {"fn": "=", "args": [lk, rk]},
                        "left": child.plan,
                        "right": other_input.plan,
                    },
                    child.columns + other_input.columns,
                )
            s = self.col(child, "string")
            if s is None:
                return child
            numeric = {"fn": "in", "args": [s, {"lit": "12", "type": "string"}, {"lit": "7", "type": "string"}]}
            guard = numeric
            others = [c for c, _ in child.columns if c.split(".")[0] != s["col"].split(".")[0]]
            if others:
                # the same test, written so it reads another input too: it stays above a join while the cast,
                # reading one input, could go below it and meet the rows the guard removes
                other = {"col": self.rng.choice(others)}
                guard = {"fn": "case", "args": [{"fn": "is_null", "args": [other]}, numeric, numeric]}
            cast = {"fn": ">", "args": [{"fn": "cast", "args": [s], "type": "int"}, self.int_lit()]}
            guarded = {"op": "filter", "predicate": guard, "input": child.plan}
            return Rel({"op": "filter", "predicate": cast, "input": guarded}, child.columns)
        if kind == "project":
            exprs, names = [], []
            for i, (col, typ) in enumerate(child.columns):
                exprs.append({"expr": {"col": col}, "as": f"p{i}"})
                names.append((f"p{i}", typ))
            x = self.col(child, "int")
            if x is not None:
                exprs.append({"expr": {"fn": "+", "args": [x, {"lit": 1, "type": "int"}]}, "as": "e1"})
                exprs.append({"expr": {"fn": "coalesce", "args": [x, {"lit": -9, "type": "int"}]}, "as": "e2"})
                names += [("e1", "int"), ("e2", "int")]
            return self.wrap({"op": "project", "exprs": exprs, "input": child.plan}, names)
        if kind == "aggregate":
            keys = self.rng.sample(child.columns, k=min(len(child.columns), self.rng.randint(0, 2)))
            x = self.col(child, "int")
            aggs = [{"expr": {"fn": "count", "args": []}, "as": "n"}]
            names = [(k.rpartition(".")[2] + str(i), t) for i, (k, t) in enumerate(keys)]
            group_by = [{"expr": {"col": k}, "as": names[i][0]} for i, (k, _t) in enumerate(keys)]
            if x is not None:
                aggs.append({"expr": {"fn": "sum", "args": [x]}, "as": "total"})
            out = names + [("n", "int")] + ([("total", "int")] if x is not None else [])
            return self.wrap({"op": "aggregate", "group_by": group_by, "aggregates": aggs, "input": child.plan}, out)
        if kind == "union":
            other = self.relation(depth - 1)
            left_ints = [c for c, t in child.columns if t == "int"][:2]
            right_ints = [c for c, t in other.columns if t == "int"][:2]
            if len(left_ints) < 2 or len(right_ints) < 2:
                return child
            # the second branch swaps its columns
            left = {
                "op": "project",
                "exprs": [{"expr": {"col": left_ints[0]}, "as": "u1"}, {"expr": {"col": left_ints[1]}, "as": "u2"}],
                "input": child.plan,
            }
            right = {
                "op": "project",
                "exprs": [{"expr": {"col": right_ints[1]}, "as": "w1"}, {"expr": {"col": right_ints[0]}, "as": "w2"}],
                "input": other.plan,
            }
            op = self.rng.choice(["union", "union", "intersect", "except"])
            plan = {"op": op, "all": self.rng.random() < 0.6, "inputs": [left, right]}
            return self.wrap(plan, [("u1", "int"), ("u2", "int")])
        if kind == "window":
            part = self.col(child)
            order = [{"expr": {"col": c}, "desc": False, "nulls_first": True} for c, _ in child.columns]
            fn = self.rng.choice([{"fn": "row_number", "args": []}, {"fn": "count", "args": []}])
            wf = self.name("wf")
            function: dict[str, Any] = {"expr": fn, "as": wf}
            x = self.col(child, "int")
            if x is not None and self.rng.random() < 0.5:
                # a framed running sum: the frame must survive the rewrite (issue 18: it once ran unbounded)
                start = self.rng.choice(["1 preceding", "unbounded preceding", "current row"])
                end = self.rng.choice(["current row", "1 following"])
                frame = {"kind": "rows", "start": start, "end": end}
                function = {"expr": {"fn": "sum", "args": [x]}, "as": wf, "frame": frame}
            plan = {
                "op": "window",
                "partition_by": [part],
                "order_by": order,
                "functions": [function],
                "input": child.plan,
            }
            names = [(c.rpartition(".")[2] + str(i), t) for i, (c, t) in enumerate(child.columns)]
            project = {
                "op": "project",
                "exprs": [{"expr": {"col": c}, "as": names[i][0]} for i, (c, _t) in enumerate(child.columns)]
                + [{"expr": {"col": wf}, "as": wf}],
                "input": plan,
            }
            return self.wrap(project, names + [(wf, "int")])
        if kind == "topn":
            keys = [
                {"expr": {"col": c}, "desc": self.rng.random() < 0.5, "nulls_first": True} for c, _ in child.columns
            ]
            plan = {
                "op": "limit",
                "count": self.rng.randint(0, 6),
                "offset": self.rng.randint(0, 2),
                "input": {"op": "sort", "keys": keys, "input": child.plan},
            }
            return Rel(plan, child.columns)
        return Rel({"op": "distinct", "input": child.plan}, child.columns)

    def join(self, depth: int) -> Rel:
        left, right = self.relation(depth - 1), self.relation(depth - 1)
        jtype = self.rng.choice(JOIN_TYPES)
        both = Rel({}, left.columns + right.columns)
        on = None
        if jtype != "cross":
            lk, rk = self.col(left, "int"), self.col(right, "int")
            if lk is None or rk is None:
                jtype = "cross"
            else:
                parts = [{"fn": "=", "args": [lk, rk]}]
                if self.rng.random() < 0.5:
                    side = self.rng.choice([left, right])
                    parts.append(self.atom(side))
                if self.rng.random() < 0.2:
                    parts.append(self.predicate(both, special=False))
                on = parts[0] if len(parts) == 1 else {"fn": "and", "args": parts}
        plan = {"op": "join", "type": jtype, "on": on, "left": left.plan, "right": right.plan}
        if jtype in ("semi", "anti"):
            if jtype == "anti" and self.rng.random() < 0.3 and on is not None:
                plan["null_aware"] = True
                plan["on"] = on["args"][0] if on.get("fn") == "and" else on
            return Rel(plan, left.columns)
        return Rel(plan, left.columns + right.columns)

    def query(self) -> dict[str, Any]:
        rel = self.relation(self.rng.randint(1, 3))
        # a WHERE on top, then the visible columns
        plan = {"op": "filter", "predicate": self.predicate(rel), "input": rel.plan}
        if self.rng.random() < 0.5:
            plan = {"op": "filter", "predicate": self.predicate(rel), "input": plan}
        return {
            "op": "project",
            "exprs": [{"expr": {"col": c}, "as": f"o{i}"} for i, (c, _) in enumerate(rel.columns)],
            "input": plan,
        }
