"""Random PySpark DataFrame pipelines over small tables rich in NULLs, duplicates and skew, for the differential
campaign of ``optimize_dataframe`` (original against optimized on Spark).

The operator kinds are the SQL generator's (``tests/correctness/plangen.py``), written the way the DataFrame API
writes them: filters early and late (built-ins, ``F.udf`` and ``pandas_udf`` predicates declared expensive or
cheap, one undeclared, one non-deterministic by declaration), joins of every type (a cross join with a condition
too, a UDF in an inner join's condition), ``groupBy().agg()``, windows, unions, ``distinct``/``dropDuplicates``,
``explode``, ``orderBy`` with ``limit``, ``withColumn`` and ``select``.

Every pipeline's result is a deterministic multiset by construction, so original and optimized rows can be compared
exactly: a ``limit`` comes only after an ``orderBy`` over every column, a window orders by every column of its
input (ties are then identical rows), ``dropDuplicates`` on a subset is followed by a ``select`` of that subset,
the only non-deterministic expression is ``rand() < 2`` (always true), and no expression can fail (no cast of a
string, no division) so Catalyst's freedom to reorder cannot turn an error on or off. Doubles in the data are
multiples of 1/4, so sums are exact whatever the order of addition.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd  # the pandas UDFs' type hints are read from this module's names

#: column kinds the generator builds expressions for, with their Spark DDL types
KINDS = {"int": "INT", "long": "BIGINT", "double": "DOUBLE", "string": "STRING", "bool": "BOOLEAN"}

#: the tables (temporary views), each column's kind; ``k`` is the skewed join key of every table
TABLES: dict[str, list[tuple[str, str]]] = {
    "dfg_t1": [("k", "int"), ("a", "int"), ("b", "long"), ("s", "string"), ("x", "double")],
    "dfg_t2": [("k", "int"), ("c", "int"), ("s", "string"), ("y", "double")],
    "dfg_t3": [("k", "int"), ("v", "int"), ("flag", "bool"), ("note", "string")],
}
WORDS = ["Alpha", "Avon", "Beta", "Boston", "Ceres", "alpha", "beta gamma", "", "a,b,a", "Ann,Bo"]
JOINS = ["inner", "left", "right", "full", "left_semi", "left_anti", "cross"]
#: the declared cost of the expensive UDFs and of the cheap ones (``functions`` of ``optimize_dataframe``)
EXPENSIVE = {"cost": 5000}
CHEAP = {"cost": 0.1}


def make_rows(rng: random.Random, table: str, count: int) -> list[tuple[Any, ...]]:
    """``count`` rows, a fifth of every column NULL, a third of the numbers 1, then a fifth of them again."""
    rows = []
    for _ in range(count):
        row: list[Any] = []
        for _name, kind in TABLES[table]:
            if rng.random() < 0.2:
                row.append(None)
            elif kind in ("int", "long"):
                row.append(1 if rng.random() < 0.33 else rng.randint(-2, 8))
            elif kind == "double":
                row.append(1.25 if rng.random() < 0.3 else rng.randint(-8, 40) / 4)
            elif kind == "bool":
                row.append(rng.random() < 0.6)
            else:
                row.append(rng.choice(WORDS))
        rows.append(tuple(row))
    rows.extend(rng.sample(rows, count // 5))
    return rows


def register_tables(spark: Any, root: Path, seed: int = 20261129, count: int = 30) -> dict[str, list[tuple[Any, ...]]]:
    """Write the tables as Parquet files under ``root`` and register each as a temporary view over its file (a
    scan in the JVM: in-memory rows from Python would be a Python RDD, read by Python workers on every scan)."""
    rng = random.Random(seed)
    data = {}
    for table, columns in TABLES.items():
        data[table] = make_rows(rng, table, count)
        ddl = ", ".join(f"{name} {KINDS[kind]}" for name, kind in columns)
        location = str(root / table)
        spark.createDataFrame(data[table], ddl).coalesce(1).write.mode("overwrite").parquet(location)
        spark.read.parquet(location).createOrReplaceTempView(table)
    return data


@dataclass
class Udfs:
    """The UDFs pipelines call, made once per session, and the declarations ``optimize_dataframe`` gets."""

    odd_length: Any  # F.udf, string -> bool, declared expensive
    small: Any  # F.udf, int -> bool, declared cheap
    pandas_odd: Any  # pandas_udf, string -> bool, declared expensive
    pandas_positive: Any  # pandas_udf, int -> bool, declared cheap
    undeclared: Any  # F.udf, string -> bool, no declaration
    shaky: Any  # F.udf, int -> bool, declared expensive and non-deterministic (it is not, so rows compare)
    mix: Any  # F.udf, (int, int) -> int, a value for withColumn, declared expensive
    functions: dict[Any, dict[str, Any]] = field(default_factory=dict)


def make_udfs() -> Udfs:
    """The UDFs, defined here (not at module level) so that they are pickled by value for Spark's workers."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, IntegerType

    def odd_length(text):  # no type hints: PySpark would read them as a pandas UDF's
        return None if text is None else len(text) % 2 == 1

    def small(value):
        return None if value is None else value < 4

    def has_a(text):
        return text is not None and "a" in text

    def shaky(value):
        return value is not None and value % 2 == 0

    def mix(first, second):
        return (first or 0) * 3 + (second or 0)

    def pandas_odd(texts: pd.Series) -> pd.Series:
        return texts.fillna("").str.len() % 2 == 1

    def pandas_positive(values: pd.Series) -> pd.Series:
        return values.fillna(0) > 0

    udfs = Udfs(
        odd_length=F.udf(odd_length, BooleanType()),
        small=F.udf(small, BooleanType()),
        pandas_odd=F.pandas_udf(pandas_odd, BooleanType()),
        pandas_positive=F.pandas_udf(pandas_positive, BooleanType()),
        undeclared=F.udf(has_a, BooleanType()),
        shaky=F.udf(shaky, BooleanType()).asNondeterministic(),
        mix=F.udf(mix, IntegerType()),
    )
    udfs.functions = {
        udfs.odd_length: EXPENSIVE,
        udfs.small: CHEAP,
        udfs.pandas_odd: EXPENSIVE,
        udfs.pandas_positive: CHEAP,
        udfs.shaky: EXPENSIVE,
        udfs.mix: EXPENSIVE,
    }
    return udfs


@dataclass
class Rel:
    """A DataFrame and its columns (name, kind), the names unique within it."""

    df: Any
    columns: list[tuple[str, str]]

    def of(self, *kinds: str) -> list[str]:
        return [n for n, k in self.columns if k in kinds]


@dataclass
class Pipeline:
    """A generated pipeline: its DataFrame and what it is made of (operator kinds, join types, UDFs)."""

    seed: int
    df: Any
    ops: list[str]


class DataFrameGenerator:
    """One pipeline per seed: ``DataFrameGenerator(spark, udfs, seed).pipeline()``."""

    def __init__(self, spark: Any, udfs: Udfs, seed: int) -> None:
        from pyspark.sql import functions as F

        self.F = F
        self.spark = spark
        self.udfs = udfs
        self.seed = seed
        self.rng = random.Random(seed)
        self.counter = 0
        self.ops: list[str] = []

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # ------------------------------------------------------------ expressions

    def int_lit(self) -> int:
        return self.rng.randint(-1, 6)

    def atom(self, rel: Rel, in_join: bool = False) -> Any:
        """One predicate over ``rel``'s columns: a comparison, a NULL test, ``IN``, ``LIKE``, a built-in, a UDF.
        ``in_join``: for a join's condition, where Spark refuses non-deterministic expressions and Python UDFs
        (but in an inner join's, which ``join`` adds itself)."""
        F, rng = self.F, self.rng
        numbers, strings = rel.of("int", "long"), rel.of("string")
        doubles, bools = rel.of("double"), rel.of("bool")
        roll = rng.random()
        if roll < 0.22 and not in_join:
            return self.udf_atom(rel)
        if roll < 0.3 and strings:
            s = F.col(rng.choice(strings))
            return rng.choice(
                [
                    lambda: s.like(rng.choice(["A%", "%a", "B_st%", "%,%"])),
                    lambda: F.upper(s) == "ALPHA",
                    lambda: s.isin("Alpha", "Beta", ""),
                    lambda: F.length(s) > rng.randint(0, 5),
                    lambda: s.startswith("B"),
                    lambda: s.rlike("^[AB]"),
                ]
            )()
        if roll < 0.36 and doubles:
            x = F.col(rng.choice(doubles))
            return rng.choice([x > rng.randint(-2, 8) + 0.5, x.isNull(), F.coalesce(x, F.lit(0.0)) <= 2.25])
        if roll < 0.4 and bools:
            flag = F.col(rng.choice(bools))
            return rng.choice([flag, ~flag, flag.isNull(), F.coalesce(flag, F.lit(False))])
        if not numbers:
            return F.col(rel.columns[0][0]).isNotNull()
        x = F.col(rng.choice(numbers))
        y = F.col(rng.choice(numbers))
        choice = rng.randrange(11)
        if choice <= 2:
            return rng.choice([x == self.int_lit(), x != self.int_lit(), x < self.int_lit(), x >= self.int_lit()])
        if choice == 3:
            return rng.choice([x.isNull(), x.isNotNull()])
        if choice == 4:
            return F.coalesce(x, F.lit(0)) > self.int_lit()
        if choice == 5:
            return x.isin(self.int_lit(), self.int_lit(), self.int_lit())
        if choice == 6:
            return rng.choice([x == y, x < y, x != y])
        if choice == 7:
            return (x + y) > self.int_lit()
        if choice == 8:
            return x.between(self.int_lit(), self.int_lit())
        if choice == 9:
            return (x % 3) == 1
        if rng.random() < 0.3 and not in_join:
            return (F.rand(self.seed) < 2.0) & (x > self.int_lit())  # non-deterministic, always true: stays put
        return ~(x > self.int_lit())

    def udf_atom(self, rel: Rel) -> Any:
        F, rng, u = self.F, self.rng, self.udfs
        strings, numbers = rel.of("string"), rel.of("int")
        options: list[tuple[str, Callable[[], Any]]] = []
        if strings:
            expensive = [
                ("udf_expensive", lambda: u.odd_length(F.col(rng.choice(strings)))),
                ("pandas_udf_expensive", lambda: u.pandas_odd(F.col(rng.choice(strings)))),
            ]
            options += [*expensive, *expensive, ("udf_undeclared", lambda: u.undeclared(F.col(rng.choice(strings))))]
        if numbers:
            options += [
                ("udf_cheap", lambda: u.small(F.col(rng.choice(numbers)))),
                ("pandas_udf_cheap", lambda: u.pandas_positive(F.col(rng.choice(numbers)))),
                ("udf_nondeterministic", lambda: u.shaky(F.col(rng.choice(numbers)))),
            ]
        if not options:
            return F.col(rel.columns[0][0]).isNull()
        what, make = rng.choice(options)
        self.ops.append(what)
        return make()

    def predicate(self, rel: Rel) -> Any:
        roll = self.rng.random()
        if roll < 0.55:
            return self.atom(rel)
        if roll < 0.85:
            parts = [self.atom(rel) for _ in range(self.rng.randint(2, 3))]
            out = parts[0]
            for part in parts[1:]:
                out = out & part
            return out
        return (self.atom(rel) & self.atom(rel)) | (self.atom(rel) & self.atom(rel))

    # ------------------------------------------------------------ relations

    def scan(self) -> Rel:
        table = self.rng.choice(sorted(TABLES))
        self.ops.append("scan")
        rel = Rel(self.spark.table(table), list(TABLES[table]))
        if self.rng.random() < 0.3:  # a filter written early, right on the table
            self.ops.append("early_filter")
            rel = self.filter(rel)
        return rel

    def filter(self, rel: Rel) -> Rel:
        self.ops.append("filter")
        return Rel(rel.df.filter(self.predicate(rel)), rel.columns)

    def relation(self, depth: int) -> Rel:
        if depth <= 0:
            return self.scan()
        kind = self.rng.choice(
            ["filter", "filter", "join", "join", "join", "select", "with_column", "aggregate", "window", "union"]
            + ["distinct", "explode", "limit", "sort"]
        )
        if kind == "join":
            return self.join(depth)
        if kind == "union":
            return self.union(depth)
        child = self.relation(depth - 1)
        return getattr(self, kind)(child)

    def select(self, rel: Rel) -> Rel:
        """A subset of the columns in another order, some renamed."""
        self.ops.append("select")
        F, rng = self.F, self.rng
        chosen = rng.sample(rel.columns, rng.randint(1, len(rel.columns)))
        exprs, columns = [], []
        for name, kind in chosen:
            if rng.random() < 0.3:
                new = self.name(f"{name}_")
                exprs.append(F.col(name).alias(new))
                columns.append((new, kind))
            else:
                exprs.append(F.col(name))
                columns.append((name, kind))
        return Rel(rel.df.select(*exprs), columns)

    def with_column(self, rel: Rel) -> Rel:
        """A computed column: arithmetic, ``coalesce``, ``CASE``, string functions, a UDF's value; sometimes
        replacing a column of the same name."""
        self.ops.append("with_column")
        F, rng = self.F, self.rng
        ints, strings = rel.of("int"), rel.of("string")
        options: list[tuple[str, Any]] = []
        if ints:
            x, y = F.col(rng.choice(ints)), F.col(rng.choice(ints))
            options += [("int", x + 1), ("int", F.coalesce(x, F.lit(-9))), ("int", F.when(x > 2, x).otherwise(y))]
            options.append(("udf_value", self.udfs.mix(x, y)))
        if strings:
            s = F.col(rng.choice(strings))
            options += [("string", F.upper(s)), ("string", F.concat(s, F.lit("!")))]
        if not options:
            return rel
        what, value = rng.choice(options)
        if what == "udf_value":
            self.ops.append(what)
        kind = "string" if what == "string" else "int"
        same = [n for n, k in rel.columns if k == kind]
        name = rng.choice(same) if same and rng.random() < 0.3 else self.name("w")
        if name in dict(rel.columns):  # replaced where it stood
            columns = [(n, kind if n == name else k) for n, k in rel.columns]
        else:
            columns = [*rel.columns, (name, kind)]
        return Rel(rel.df.withColumn(name, value), columns)

    def aggregate(self, rel: Rel) -> Rel:
        self.ops.append("aggregate")
        F, rng = self.F, self.rng
        keys = rng.sample(rel.columns, min(len(rel.columns), rng.randint(0, 2)))
        count = self.name("n")
        aggs = [F.count("*").alias(count)]
        columns = [*keys, (count, "long")]
        numbers, doubles, strings = rel.of("int"), rel.of("double"), rel.of("string")
        if numbers and rng.random() < 0.7:
            name = self.name("total")
            aggs.append(F.sum(rng.choice(numbers)).alias(name))
            columns.append((name, "long"))
        if numbers and rng.random() < 0.3:
            name = self.name("kinds")
            aggs.append(F.countDistinct(rng.choice(numbers)).alias(name))
            columns.append((name, "long"))
        if doubles and rng.random() < 0.5:
            name = self.name("mean")
            aggs.append(F.avg(rng.choice(doubles)).alias(name))
            columns.append((name, "double"))
        if strings and rng.random() < 0.4:
            name = self.name("least")
            aggs.append(F.min(rng.choice(strings)).alias(name))
            columns.append((name, "string"))
        frame = rel.df.groupBy(*[F.col(n) for n, _ in keys]).agg(*aggs)
        return Rel(frame, columns)

    def window(self, rel: Rel) -> Rel:
        """A window function partitioned by a column and ordered by every column (ties are identical rows)."""
        self.ops.append("window")
        from pyspark.sql import Window

        F, rng = self.F, self.rng
        part = rng.choice(rel.columns)[0]
        order = [
            (F.col(n).desc_nulls_last() if rng.random() < 0.5 else F.col(n).asc_nulls_first()) for n, _ in rel.columns
        ]
        ordered = Window.partitionBy(part).orderBy(*order)
        numbers = rel.of("int")
        options: list[tuple[str, Callable[[], Any]]] = [
            ("int", lambda: F.row_number().over(ordered)),
            ("int", lambda: F.rank().over(ordered)),
            ("int", lambda: F.dense_rank().over(ordered)),
            ("long", lambda: F.count("*").over(Window.partitionBy(part))),
        ]
        if numbers:
            x = rng.choice(numbers)
            options += [
                ("long", lambda: F.sum(x).over(ordered.rowsBetween(-1, 0))),
                ("long", lambda: F.sum(x).over(ordered.rowsBetween(Window.unboundedPreceding, Window.currentRow))),
                ("int", lambda: F.max(x).over(Window.partitionBy(part))),
            ]
        kind, make = rng.choice(options)
        name = self.name("wf")
        return Rel(rel.df.withColumn(name, make()), [*rel.columns, (name, kind)])

    def distinct(self, rel: Rel) -> Rel:
        F, rng = self.F, self.rng
        roll = rng.random()
        if roll < 0.35:
            self.ops.append("distinct")
            return Rel(rel.df.distinct(), rel.columns)
        if roll < 0.7:
            self.ops.append("drop_duplicates")
            return Rel(rel.df.dropDuplicates(), rel.columns)
        # on a subset: which row is kept is Spark's choice, so only the subset is kept
        self.ops.append("drop_duplicates_subset")
        subset = rng.sample(rel.columns, rng.randint(1, len(rel.columns)))
        return Rel(rel.df.dropDuplicates([n for n, _ in subset]).select(*[F.col(n) for n, _ in subset]), subset)

    def explode(self, rel: Rel) -> Rel:
        F, rng = self.F, self.rng
        strings = rel.of("string")
        if not strings:
            return rel
        words = F.split(F.col(rng.choice(strings)), rng.choice([",", " ", "a"]))
        name = self.name("e")
        if rng.random() < 0.2:
            self.ops.append("posexplode")
            position = self.name("pos")
            frame = rel.df.select("*", F.posexplode_outer(words).alias(position, name))
            return Rel(frame, [*rel.columns, (position, "int"), (name, "string")])
        outer = rng.random() < 0.4
        self.ops.append("explode_outer" if outer else "explode")
        generated = F.explode_outer(words) if outer else F.explode(words)
        return Rel(rel.df.withColumn(name, generated), [*rel.columns, (name, "string")])

    def total_order(self, rel: Rel) -> list[Any]:
        F, rng = self.F, self.rng
        keys = list(rel.columns)
        rng.shuffle(keys)
        return [
            rng.choice([F.col(n).asc_nulls_first(), F.col(n).asc_nulls_last(), F.col(n).desc_nulls_last()])
            for n, _ in keys
        ]

    def limit(self, rel: Rel) -> Rel:
        """``orderBy`` over every column, then ``limit``: the rows kept are the same whatever the plan."""
        self.ops.append("limit")
        return Rel(rel.df.orderBy(*self.total_order(rel)).limit(self.rng.randint(0, 8)), rel.columns)

    def sort(self, rel: Rel) -> Rel:
        self.ops.append("sort")
        return Rel(rel.df.orderBy(*self.total_order(rel)[:2]), rel.columns)

    def union(self, depth: int) -> Rel:
        """Two inputs cut to (a number, a string), the second's columns named otherwise: by position."""
        F, rng = self.F, self.rng
        left, right = self.relation(depth - 1), self.relation(depth - 1)
        sides = []
        for rel in (left, right):
            numbers, strings = rel.of("int", "long"), rel.of("string")
            if not numbers or not strings:
                return left
            sides.append((rel, rng.choice(numbers), rng.choice(strings)))
        first, second = self.name("u"), self.name("u")
        (lrel, ln, ls), (rrel, rn, rs) = sides
        a = lrel.df.select(F.col(ln).cast("long").alias(first), F.col(ls).alias(second))
        b = rrel.df.select(F.col(rn).cast("long").alias(self.name("v")), F.col(rs).alias(self.name("v")))
        if rng.random() < 0.15:
            self.ops.append("union_by_name")
            b = rrel.df.select(F.col(rs).alias(second), F.col(rn).cast("long").alias(first))
            return Rel(a.unionByName(b), [(first, "long"), (second, "string")])
        self.ops.append("union")
        return Rel(a.union(b), [(first, "long"), (second, "string")])

    def join(self, depth: int) -> Rel:
        F, rng = self.F, self.rng
        left, right = self.relation(depth - 1), self.relation(depth - 1)
        how = rng.choice(JOINS)
        taken = {n.lower() for n, _ in left.columns}
        clashes = [n for n, _ in right.columns if n.lower() in taken]
        same_key = clashes == ["k"] and dict(left.columns)["k"] == dict(right.columns)["k"] == "int"
        if how in ("inner", "left", "right", "full") and same_key and rng.random() < 0.5:
            self.ops.append(f"join_{how}_using")  # join(other, "k"): the key first and once (coalesced if full)
            frame = left.df.join(right.df, "k", how)
            rest = [c for c in left.columns if c[0] != "k"] + [c for c in right.columns if c[0] != "k"]
            return Rel(frame, [("k", "int"), *rest])
        renamed = right.df
        right_columns = []
        for name, kind in right.columns:
            if name.lower() in taken:
                new = self.name(f"{name}_r")
                renamed = renamed.withColumnRenamed(name, new)
                right_columns.append((new, kind))
            else:
                right_columns.append((name, kind))
        right = Rel(renamed, right_columns)
        both = Rel(None, left.columns + right.columns)
        lk, rk = left.of("int", "long"), right.of("int", "long")
        if how == "cross" and rng.random() < 0.3 and depth <= 1:
            self.ops.append("join_cross_unconditioned")
            return Rel(left.df.crossJoin(right.df), both.columns)
        if not lk or not rk:
            self.ops.append("join_cross_unconditioned")
            return Rel(left.df.crossJoin(right.df), both.columns)
        on = F.col(rng.choice(lk)) == F.col(rng.choice(rk))
        if rng.random() < 0.4:
            on = on & self.atom(rng.choice([left, right]), in_join=True)
        if rng.random() < 0.2:
            on = on & (F.col(rng.choice(lk)) <= F.col(rng.choice(rk)))
        if how == "inner" and rng.random() < 0.15:
            strings = right.of("string") or left.of("string")
            if strings:
                self.ops.append("udf_in_join_condition")
                on = on & self.udfs.odd_length(F.col(rng.choice(strings)))
        self.ops.append(f"join_{how}")
        frame = left.df.join(right.df, on, how)
        return Rel(frame, left.columns if how in ("left_semi", "left_anti") else both.columns)

    def pipeline(self) -> Pipeline:
        depth = self.rng.randint(1, 3)
        # half the pipelines end in a join, the shape a filter can be held above or pulled up past
        rel = self.join(depth) if self.rng.random() < 0.5 else self.relation(depth)
        if self.rng.random() < 0.75:  # a filter written late, on top of everything; often with a UDF in it
            self.ops.append("late_filter")
            rel = self.filter(rel)
            if self.rng.random() < 0.5:
                self.ops.append("filter")
                rel = Rel(rel.df.filter(self.udf_atom(rel)), rel.columns)
        if self.rng.random() < 0.3:
            rel = self.select(rel)
        return Pipeline(self.seed, rel.df, self.ops)
