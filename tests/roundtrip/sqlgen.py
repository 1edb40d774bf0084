"""A generator of Spark SQL queries over the round-trip schema that reach every operator kind and field.

``QueryGen(seed).query(feature)`` writes one query that certainly uses ``feature`` (one of ``FEATURES``) and
maybe a few others, chosen at random. Going through the features in turn covers them all in ``len(FEATURES)``
queries; the test asserts coverage on the plans the adapter makes, not on what was asked for here.

Every query's result is deterministic: ORDER BY under a LIMIT lists every output column (rows that tie are
identical), ROWS frames order by the inputs' ``id`` columns last, RANGE frames with offsets order by one
number, and no function is random.

    >>> sql = QueryGen(1).query("window:range")
    >>> "RANGE BETWEEN" in sql
    True
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import costmodel.kinds  # noqa: F401  (registers every kind)
from costmodel.kinds.registry import kind_for_op
from tests.roundtrip.schema import COLUMNS, TABLES

JOINS = {
    "join:inner": "JOIN",
    "join:left": "LEFT JOIN",
    "join:right": "RIGHT JOIN",
    "join:full": "FULL OUTER JOIN",
    "join:cross": "CROSS JOIN",
    "join:semi": "LEFT SEMI JOIN",
    "join:anti": "LEFT ANTI JOIN",
}
SETOPS = {
    "union": "UNION",
    "union_all": "UNION ALL",
    "intersect": "INTERSECT",
    "intersect_all": "INTERSECT ALL",
    "except": "EXCEPT",
    "except_all": "EXCEPT ALL",
}
HINTS = ("BROADCAST", "MERGE", "SHUFFLE_HASH", "SHUFFLE_REPLICATE_NL")
SHAPES = ("group_by", "group_expr", "having", "count_distinct", "grouping_sets", "rollup", "cube")
WINDOWS = ("window:rows", "window:range", "window:range_offset", "window:no_frame", "window:rank")
PREDICATES = ("where", "exists", "in_subquery", "not_in", "scalar_subquery", "correlated_scalar")
ORDERS = ("order:asc", "order:desc", "nulls:first", "nulls:last", "order:input", "limit", "offset")
FROMS = (
    "derived",
    "derived_columns",
    "derived_aggregate",
    "derived_window",
    "derived_setop",
    "derived_limit",
    "cte",
    "self_join",
)
#: LATERAL VIEW explode, once the engine has a kind for it. OUTER only over arrays that are never NULL or empty:
#: the oracle (the query transpiled to DuckDB by sqlglot) drops OUTER, so it cannot judge a row OUTER keeps.
LATERAL = ("lateral_view", "lateral_view_outer") if kind_for_op("generate") is not None else ()
FEATURES: tuple[str, ...] = (
    *LATERAL,
    *JOINS,
    *SETOPS,
    *SHAPES,
    *WINDOWS,
    *PREDICATES,
    *ORDERS,
    *FROMS,
    "distinct",
    "project_expr",
    "hint:join",
    "hint:repartition",
)

#: literals per column type, NULL-free (NULLs come from the data)
_LITERALS = {
    "int": ["0", "1", "2", "3", "5", "-1"],
    "double": ["0.5", "2.25", "-1.0", "4.0"],
    "string": ["'a'", "'b'", "''", "'dd'"],
    "date": ["DATE '2020-06-01'", "DATE '2020-12-31'", "DATE '2021-03-15'"],
}


@dataclass
class Col:
    ref: str  # as written in the query: ``a.k``
    type: str  # int, double, string or date


@dataclass
class From:
    sql: str
    cols: list[Col]
    ids: list[str]  # the unique-up-to-duplicates columns, for total orders
    aliases: list[str] = field(default_factory=list)


@dataclass
class Block:
    sql: str
    cols: list[Col]  # output columns, by name


class QueryGen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self._n = 0
        self._hints = Counter[str]()  # hints are taken in turn, so a few queries show every one

    # ---- entry points
    def query(self, feature: str) -> str:
        """One query that uses ``feature`` (and maybe others)."""
        want = {feature} | {self.rng.choice(FEATURES) for _ in range(self.rng.randint(0, 2))}
        for group in (JOINS, SHAPES, WINDOWS):  # one of a group is used: the asked-for one, if it is in it
            if feature in group:
                want -= set(group) - {feature}
        if feature in SETOPS:
            want -= set(SETOPS) - {feature}
            return self._setop_query(feature, want)
        if want & set(SETOPS):  # only asked for by chance: keep one, as a derived table
            want = (want - set(SETOPS)) | {"derived_setop"}
        return self._select(want, top=True).sql

    # ---- building blocks
    def _alias(self, prefix: str = "q") -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def _table(self, alias: str) -> From:
        name = self.rng.choice(TABLES)
        return From(f"{name} AS {alias}", [Col(f"{alias}.{c}", t) for c, t in COLUMNS], [f"{alias}.id"], [alias])

    def _from_item(self, want: set[str], alias: str) -> From:
        """A table, or a derived table (plain, with column names, over an aggregate, a window or a set operation)."""
        kinds = [k for k in FROMS if k.startswith("derived") and k in want]
        if not kinds:
            return self._table(alias)
        kind = kinds[0]
        want.discard(kind)
        if kind == "derived_setop":
            inner = self._setop_block(self.rng.choice(list(SETOPS)))
        elif kind == "derived_aggregate":
            inner = self._select({self.rng.choice(SHAPES)}, top=False)
        elif kind == "derived_limit":  # ORDER BY every output, LIMIT: nothing may pass below it
            inner = self._select(
                {"limit", "keep_id", self.rng.choice(["offset", "order:desc", "nulls:last"])}, top=True
            )
        elif kind == "derived_window":
            inner = self._select({self.rng.choice(WINDOWS), "keep_id"}, top=False)
        else:
            inner = self._select({"keep_id"} if self.rng.random() < 0.7 else set(), top=False)
        if kind == "derived_columns":
            names = [f"{c.ref.split('.')[-1]}_{alias}" for c in inner.cols]
            cols = [Col(f"{alias}.{n}", c.type) for n, c in zip(names, inner.cols, strict=True)]
            text = f"({inner.sql}) AS {alias}({', '.join(names)})"
        else:
            cols = [Col(f"{alias}.{c.ref.split('.')[-1]}", c.type) for c in inner.cols]
            text = f"({inner.sql}) AS {alias}"
        ids = [c.ref for c in cols if c.ref.split(".")[-1].startswith("id")]
        return From(text, cols, ids or [c.ref for c in cols], [alias])

    def _from(self, want: set[str]) -> From:
        joins = [j for j in JOINS if j in want]
        if want & {"self_join", "hint:join"}:
            joins = joins or ["join:inner"]
        left = self._from_item(want, "a")
        if not joins:
            return left
        if "self_join" in want and left.sql.startswith("t"):  # the same table twice
            table = left.sql.split(" ")[0]
            right = From(f"{table} AS b", [Col(f"b.{c}", t) for c, t in COLUMNS], ["b.id"], ["b"])
        else:
            right = self._from_item(want, "b")
        keyed = _join_keys(left, right)
        for _ in range(20):  # two derived tables may share no column type: another right side
            if keyed:
                break
            right = self._from_item(want, "b")
            keyed = _join_keys(left, right)
        if not keyed:
            raise ValueError(f"no column type in common between {left.sql} and {right.sql}")
        lk, rk = self.rng.choice(keyed)
        join = JOINS[joins[0]]
        on = f"{lk.ref} = {rk.ref}"
        if self.rng.random() < 0.4:
            on += f" AND {self._atom(self.rng.choice(right.cols))}"
        text = f"{left.sql} {join} {right.sql}" + ("" if join == "CROSS JOIN" else f" ON {on}")
        if joins[0] in ("join:semi", "join:anti"):
            return From(text, left.cols, left.ids, left.aliases + right.aliases)
        return From(text, left.cols + right.cols, left.ids + right.ids, left.aliases + right.aliases)

    def _lateral(self, want: set[str], src: From) -> From:
        """``LATERAL VIEW [OUTER] explode(array(...)) e AS v`` after the FROM list: one row per element."""
        if not want & {"lateral_view", "lateral_view_outer"}:
            return src
        ints = [c.ref for c in src.cols if c.type == "int"] or ["1"]
        e, v = self._alias("e"), self._alias("v")
        outer = "OUTER " if "lateral_view_outer" in want else ""
        items = ", ".join(self.rng.sample(ints, min(len(ints), self.rng.randint(1, 3))))
        text = f"{src.sql} LATERAL VIEW {outer}explode(array({items})) {e} AS {v}"
        return From(text, [*src.cols, Col(f"{e}.{v}", "int")], [*src.ids, f"{e}.{v}"], src.aliases)

    # ---- expressions
    def _lit(self, col: Col) -> str:
        return self.rng.choice(_LITERALS[col.type])

    def _atom(self, col: Col) -> str:
        forms = ["{c} = {l}", "{c} <> {l}", "{c} < {l}", "{c} >= {l}", "{c} IS NULL", "{c} IS NOT NULL"]
        forms += ["{c} IN ({l}, {m})", "NOT ({c} = {l})", "coalesce({c}, {l}) = {m}"]
        if col.type == "string":
            forms += ["{c} LIKE 'a%'", "{c} NOT LIKE '%d'"]
        else:
            forms += ["{c} BETWEEN {l} AND {m}"]
        lo, hi = sorted([self._lit(col), self._lit(col)], key=lambda s: (len(s), s))
        return self.rng.choice(forms).format(c=col.ref, l=lo, m=hi)

    def _predicate(self, cols: list[Col], depth: int = 2) -> str:
        if depth == 0 or self.rng.random() < 0.4:
            return self._atom(self.rng.choice(cols))
        op = self.rng.choice(["AND", "OR"])
        parts = [self._predicate(cols, depth - 1) for _ in range(self.rng.randint(2, 3))]
        return "(" + f" {op} ".join(parts) + ")"

    def _subquery_predicate(self, kind: str, cols: list[Col]) -> str:
        outer = self.rng.choice([c for c in cols if c.type == "int"] or cols)
        inner = self.rng.choice(TABLES)
        z = self._alias("z")
        same = {"int": "k", "double": "n", "string": "s", "date": "d"}[outer.type]  # a column of outer's type
        if kind == "exists":
            neg = "NOT " if self.rng.random() < 0.3 else ""
            also = self._atom(Col(f"{z}.x", "int"))
            return f"{neg}EXISTS (SELECT 1 FROM {inner} AS {z} WHERE {z}.{same} = {outer.ref} AND {also})"
        if kind == "in_subquery":
            return f"{outer.ref} IN (SELECT {z}.{same} FROM {inner} AS {z} WHERE {self._atom(Col(f'{z}.s', 'string'))})"
        if kind == "not_in":
            null_free = f" WHERE {z}.{same} IS NOT NULL" if self.rng.random() < 0.6 else ""
            return f"{outer.ref} NOT IN (SELECT {z}.{same} FROM {inner} AS {z}{null_free})"
        if kind == "scalar_subquery":
            where = self._atom(Col(f"{z}.n", "double"))
            return f"{outer.ref} > (SELECT max({z}.{same}) FROM {inner} AS {z} WHERE {where})"
        return f"{outer.ref} >= (SELECT min({z}.{same}) FROM {inner} AS {z} WHERE {z}.{same} = {outer.ref})"

    def _computed(self, col: Col) -> tuple[str, str]:
        """An expression over ``col`` and its type."""
        if col.type == "int":
            return self.rng.choice(
                [
                    (f"{col.ref} + 1", "int"),
                    (f"{col.ref} * 2 - 3", "int"),
                    (f"CASE WHEN {col.ref} > 2 THEN 'hi' ELSE 'lo' END", "string"),
                ]
            )
        if col.type == "double":
            return self.rng.choice([(f"{col.ref} * 2", "double"), (f"abs({col.ref})", "double")])
        if col.type == "string":
            return self.rng.choice(
                [
                    (f"coalesce({col.ref}, 'none')", "string"),
                    (f"upper({col.ref})", "string"),
                    (f"length({col.ref})", "int"),
                ]
            )
        return (f"year({col.ref})", "int")

    # ---- one SELECT
    def _select(self, want: set[str], top: bool) -> Block:
        with_clause = ""
        if "cte" in want and top:
            name = self._alias("w")
            inner = self._select({"keep_id"}, top=False)
            with_clause = f"WITH {name} AS ({inner.sql}) "
            src = From(f"{name} AS a", [Col(f"a.{c.ref.split('.')[-1]}", c.type) for c in inner.cols], ["a.id"], ["a"])
            other = From(
                f"{name} AS b", [Col(f"b.{c.ref.split('.')[-1]}", c.type) for c in inner.cols], ["b.id"], ["b"]
            )
            src = From(
                f"{src.sql} JOIN {other.sql} ON a.id = b.id", src.cols + other.cols, src.ids + other.ids, ["a", "b"]
            )
        else:
            src = self._lateral(want, self._from(want))
        conds = []
        if "where" in want or self.rng.random() < 0.5:
            conds.append(self._predicate(src.cols))
        for kind in ("exists", "in_subquery", "not_in", "scalar_subquery", "correlated_scalar"):
            if kind in want:
                conds.append(self._subquery_predicate(kind, src.cols))
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        shape = [s for s in SHAPES if s in want]
        windows = [w for w in WINDOWS if w in want]
        if shape:
            items, tail = self._aggregate(shape[0], src, want)
        elif windows:
            items, tail = self._window(windows[0], src, want), ""
        else:
            items, tail = self._plain(src, want), ""
        distinct = "DISTINCT " if "distinct" in want else ""
        hint = self._hint(want, src)
        select = ", ".join(f"{expr} AS {name}" for expr, name, _ in items)
        sql = f"{with_clause}SELECT {hint}{distinct}{select} FROM {src.sql}{where}{tail}"
        cols = [Col(name, t) for _, name, t in items]
        if top:
            sql += self._order(want, cols, src, bool(shape) or bool(distinct))
        return Block(sql, cols)

    def _hint(self, want: set[str], src: From) -> str:
        hints = []
        if "hint:join" in want and len(src.aliases) > 1:
            for alias in src.aliases[:2]:  # one hint on each side: two queries show all four
                self._hints["join"] += 1
                hints.append(f"{HINTS[self._hints['join'] % len(HINTS)]}({alias})")
        if "hint:repartition" in want:
            self._hints["partition"] += 1
            hints.append(("REPARTITION(2)", "COALESCE(1)")[self._hints["partition"] % 2])
        return f"/*+ {', '.join(hints)} */ " if hints else ""

    def _plain(self, src: From, want: set[str]) -> list[tuple[str, str, str]]:
        cols = self.rng.sample(src.cols, min(len(src.cols), self.rng.randint(1, 4)))
        if "keep_id" in want:
            cols = [Col(src.ids[0], "int"), *[c for c in cols if c.ref != src.ids[0]]]
        items = []
        for i, col in enumerate(cols, 1):
            name = "id" if "keep_id" in want and i == 1 else f"c{i}"
            if "project_expr" in want and i > 1 and self.rng.random() < 0.7:
                expr, t = self._computed(col)
                items.append((expr, name, t))
            else:
                items.append((col.ref, name, col.type))
        return items

    def _aggregate(self, shape: str, src: From, want: set[str]) -> tuple[list[tuple[str, str, str]], str]:
        keyable = [c for c in src.cols if c.ref.split(".")[-1][0] in "ksd"]
        keys = self.rng.sample(keyable or src.cols, min(self.rng.randint(1, 2), len(keyable or src.cols)))
        key_exprs = [(k.ref, k.type) for k in keys]
        if shape == "group_expr":
            num = [c for c in src.cols if c.type == "int"] or src.cols
            key_exprs.append(self._computed(self.rng.choice(num)))
        items = [(e, f"g{i}", t) for i, (e, t) in enumerate(key_exprs, 1)]
        nums = [c for c in src.cols if c.type in ("int", "double")] or src.cols
        least = self.rng.choice(src.cols)
        aggs = [("count(*)", "int"), _sum(self.rng.choice(nums)), (f"min({least.ref})", least.type)]
        if shape == "count_distinct" or self.rng.random() < 0.2:
            aggs.append((f"count(DISTINCT {self.rng.choice(src.cols).ref})", "int"))
        group = ", ".join(e for e, _ in key_exprs)
        if shape in ("grouping_sets", "rollup", "cube"):
            if shape == "grouping_sets":
                sets = [f"({group})", f"({key_exprs[0][0]})", "()"]
                group = f"GROUPING SETS ({', '.join(sets)})"
            else:
                group = f"{shape.upper()} ({group})"
            aggs.append((f"grouping({key_exprs[0][0]})", "int"))
        items += [(a, self._alias("m"), t) for a, t in self.rng.sample(aggs, self.rng.randint(1, len(aggs)))]
        having = ""
        if shape == "having" or self.rng.random() < 0.25:
            having = self.rng.choice([" HAVING count(*) > 1", f" HAVING {_sum(nums[0])[0]} > 0 OR count(*) = 1"])
        return items, f" GROUP BY {group}{having}"

    def _window(self, kind: str, src: From, want: set[str]) -> list[tuple[str, str, str]]:
        items = self._plain(src, want)
        nums = [c for c in src.cols if c.type in ("int", "double")] or src.cols
        partition = ""
        keys = [c for c in src.cols if c.type != "double"]  # a source may have only doubles (a derived sum)
        if keys and (self.rng.random() < 0.6 or kind == "window:no_frame"):
            partition = f"PARTITION BY {self.rng.choice(keys).ref} "
        if kind == "window:range_offset":  # RANGE with offsets: one ORDER BY key, a number
            number = next((i for i in src.ids if i in {c.ref for c in src.cols if c.type == "int"}), nums[0].ref)
            order = f"ORDER BY {number}{self._direction(want)}"
        else:
            first = self.rng.choice(src.cols)
            order = f"ORDER BY {first.ref}{self._direction(want)}, " + ", ".join(src.ids)
        if kind == "window:rank":
            fn, t = self.rng.choice([("row_number()", "int"), ("rank()", "int"), ("dense_rank()", "int")])
            items.append((f"{fn} OVER ({partition}{order})", self._alias("w"), t))
            return items
        most = self.rng.choice(src.cols)
        fn, t = self.rng.choice(
            [
                _sum(self.rng.choice(nums)),
                (f"count({most.ref})", "int"),
                (f"max({most.ref})", most.type),
            ]
        )
        if kind == "window:no_frame":
            spec = partition.strip() if self.rng.random() < 0.5 else f"{partition}{order}"
        else:
            start = self.rng.choice(["UNBOUNDED PRECEDING", f"{self.rng.randint(1, 3)} PRECEDING", "CURRENT ROW"])
            end = self.rng.choice(["CURRENT ROW", f"{self.rng.randint(1, 3)} FOLLOWING", "UNBOUNDED FOLLOWING"])
            frame_kind = "ROWS" if kind == "window:rows" else "RANGE"
            if kind == "window:range":  # several ORDER BY keys: RANGE takes no offsets then
                start = self.rng.choice(["UNBOUNDED PRECEDING", "CURRENT ROW"])
                end = self.rng.choice(["CURRENT ROW", "UNBOUNDED FOLLOWING"])
            spec = f"{partition}{order} {frame_kind} BETWEEN {start} AND {end}"
        items.append((f"{fn} OVER ({spec.strip()})", self._alias("w"), t))
        return items

    def _direction(self, want: set[str]) -> str:
        desc = " DESC" if "order:desc" in want or ("order:asc" not in want and self.rng.random() < 0.5) else ""
        if "order:asc" in want and self.rng.random() < 0.5:
            desc = " ASC"
        nulls = self.rng.choice(["", " NULLS FIRST", " NULLS LAST"])
        if "nulls:first" in want:
            nulls = " NULLS FIRST"
        elif "nulls:last" in want:
            nulls = " NULLS LAST"
        return desc + nulls

    def _order(self, want: set[str], cols: list[Col], src: From, grouped: bool) -> str:
        ordered = want & {"order:asc", "order:desc", "nulls:first", "nulls:last", "order:input", "limit", "offset"}
        if not ordered and self.rng.random() < 0.7:
            return ""
        if "order:input" in want and not grouped:
            keys = [f"{self.rng.choice(src.cols).ref}{self._direction(want)}", *src.ids]
            # the output columns last: rows tying on every input id are identical, so the order is total
            keys += [c.ref for c in cols]
        else:
            keys = [f"{c.ref}{self._direction(want)}" for c in self.rng.sample(cols, len(cols))]
        sql = f" ORDER BY {', '.join(keys)}"
        if want & {"limit", "offset"} or self.rng.random() < 0.3:
            sql += f" LIMIT {self.rng.randint(1, 8)}"
            if "offset" in want or self.rng.random() < 0.3:
                sql += f" OFFSET {self.rng.randint(1, 4)}"
        return sql

    # ---- set operations
    def _setop_block(self, op: str) -> Block:
        """``b1 OP b2 [OP b3]``: blocks of one shape (an int, a string), as a query term."""
        blocks = [self._branch() for _ in range(3 if op in ("union", "union_all") and self.rng.random() < 0.4 else 2)]
        sql = f" {SETOPS[op]} ".join(b.sql for b in blocks)
        return Block(sql, [Col("c1", "int"), Col("c2", "string")])

    def _branch(self) -> Block:
        t = self.rng.choice(TABLES)
        alias = self._alias("s")
        if self.rng.random() < 0.3:
            return Block(f"SELECT {alias}.k AS c1, min({alias}.s) AS c2 FROM {t} AS {alias} GROUP BY {alias}.k", [])
        cols = [Col(f"{alias}.{c}", ty) for c, ty in COLUMNS]
        where = f" WHERE {self._predicate(cols, 1)}" if self.rng.random() < 0.6 else ""
        first = self.rng.choice([f"{alias}.k", f"{alias}.x"])
        return Block(f"SELECT {first} AS c1, {alias}.s AS c2 FROM {t} AS {alias}{where}", [])

    def _setop_query(self, op: str, want: set[str]) -> str:
        block = self._setop_block(op)
        sql = block.sql
        if want & {"order:asc", "order:desc", "nulls:first", "nulls:last", "limit", "offset"}:
            sql += self._order(want - {"order:input"}, block.cols, From("", [], []), True)
        return sql


def _is_key(col: Col) -> bool:
    return col.ref.split(".")[-1].startswith("k")


def _join_keys(left: From, right: From) -> list[tuple[Col, Col]]:
    """Pairs of one column from each side that a join may compare: key columns of one type first, else any two
    columns of one type; empty when the sides share no type."""
    keyed = [(lc, rc) for lc in left.cols for rc in right.cols if lc.type == rc.type and _is_key(lc) and _is_key(rc)]
    return keyed or [(lc, rc) for lc in left.cols for rc in right.cols if lc.type == rc.type]


def _sum(col: Col) -> tuple[str, str]:
    """``sum`` of a column and its type: a number's own, a string's (or date's) length, since DuckDB has no
    ``sum(VARCHAR)`` (Spark would cast it), and a derived table may keep only strings."""
    if col.type in ("int", "double"):
        return f"sum({col.ref})", "double"
    return f"sum(length(CAST({col.ref} AS STRING)))", "int"
