"""The corpus check: every query, in each statistics form, through the service and onto Spark's physical plan
and DuckDB.

For each query and statistics form (no statistics, row counts only, row counts and column statistics) the
request goes through the service in this process (``InProcessService``, what ``PushdownClient()`` without a URL
and ``POST /optimize`` run) and the answer is checked for:

- ``nested_loop``: more BroadcastNestedLoopJoin + CartesianProduct operators in the plan of the answer's
  ``spark.sql`` than in the original's;
- ``lost_filter``: a filter the original hands a scan (PushedFilters, PartitionFilters, including dynamic partition
  pruning, or DataFilters) that no scan of the same table gets in the answer's plan (multisets of
  (table, kind, filter) with attribute ids removed);
- ``extra_scan`` / ``extra_union_branch``: more scans of a table, or more UNION branches, than the original's;
- ``priced_above_baseline``: ``cost.savings_vs_baseline`` < 0 (the answer's own model prices it above rule-based
  pushdown);
- ``schema``: the answer's Spark output columns (names, types) differ from the original's;
- ``duckdb_rows`` / ``duckdb_columns`` / ``duckdb_error``: the answer's engine-neutral ``sql`` (written by the
  service in Spark's dialect, transpiled by sqlglot as the original is) returns other rows or column names than
  the original on DuckDB over small generated data;
- ``spark_error`` / ``service_error``: Spark refused the answer's SQL, or the service failed (other than a 422).

A query the service refuses (422) is not a violation (the caller runs it as written) but is counted and listed.

Spark's plans are read without running a job: the tables are empty Parquet tables (facts partitioned by their
sold-date key, so PartitionFilters and dynamic partition pruning appear), in a session of their own
(``newSession()``: its own temporary views, functions, current database and settings) with adaptive execution
OFF, so ``executedPlan`` is the final physical plan rather than AQE's initial one. Reused exchanges and reused
subqueries are not descended into (they scan nothing again).

``python -m tests.corpus.check [--only NAME ...] [--form none|stats]`` prints the report.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.corpus import schema
from tests.corpus.spark_plans import PlanFacts, compare_plans, spark_plan

HERE = Path(__file__).parent
DATABASE = "pushdown_corpus"
#: statistics forms (schema.catalog): columns and types only; with row counts; with row counts and column stats
FORMS = ("none", "rows", "stats")
#: Python UDFs some queries call: Spark's return type, the declaration sent in ``options.functions``, the body
FUNCTIONS: dict[str, dict[str, Any]] = {
    "score_profit": {"cost": 5000, "deterministic": True, "may_fail": False},
    "looks_valid": {"cost": 2000, "deterministic": True, "may_fail": False},
}


def score_profit(x: Any) -> float | None:
    return None if x is None else (abs(float(x)) % 97) / 97.0


def looks_valid(s: Any) -> bool | None:
    return None if s is None else ("@" in s and s.endswith(".com"))


UDF_BODIES = {"score_profit": (score_profit, "double"), "looks_valid": (looks_valid, "boolean")}


@dataclass(frozen=True)
class Query:
    name: str
    sql: str

    @property
    def functions(self) -> dict[str, dict[str, Any]]:
        low = self.sql.lower()
        return {n: spec for n, spec in FUNCTIONS.items() if n + "(" in low}


def load_corpus() -> list[Query]:
    """queries.sql (written by hand) and generated.sql (generate.py), in that order."""
    out: list[Query] = []
    for path in (HERE / "queries.sql", HERE / "generated.sql"):
        name, lines = None, []
        for line in path.read_text().splitlines() + ["-- name: <end>"]:
            if line.startswith("-- name:"):
                if name is not None:
                    out.append(Query(name, "\n".join(lines).strip()))
                name, lines = line.split(":", 1)[1].strip(), []
            elif name is not None and not line.startswith("--"):
                lines.append(line)
    names = [q.name for q in out]
    assert len(names) == len(set(names)), "query names repeat"
    return out


def request(query: Query, form: str) -> dict[str, Any]:
    """The ``POST /optimize`` body: Spark SQL, the catalog in the statistics form, cost mode, no feedback."""
    options: dict[str, Any] = {"mode": "cost", "feedback": False, "cache": False}
    if query.functions:
        options["functions"] = query.functions
    return {"sql": query.sql, "dialect": "spark", "catalog": schema.catalog(form), "options": options}


class Service:
    """The service's ``/optimize`` use case in this process, with its data (history) in a directory of its own."""

    def __init__(self) -> None:
        from service.in_process_client import InProcessService
        from service.settings import Settings

        self.data_dir = Path(tempfile.mkdtemp(prefix="pushdown-corpus-"))
        settings = Settings(api_token=None, data_dir=self.data_dir, history_enabled=False)
        self._service = InProcessService(settings, None)

    def optimize(self, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self._service.optimize(body))


# --- Spark ---------------------------------------------------------------------------------------------------------


def spark_session(base: Any = None) -> tuple[Any, Path]:
    """A session of its own over the empty corpus tables (and the UDFs), AQE off. Returns (session, table root)."""
    if base is None:
        from tests.spark_session import get_spark

        base = get_spark()
    spark = base.newSession()
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    spark.conf.set("spark.sql.shuffle.partitions", "4")
    root = Path(tempfile.mkdtemp(prefix="pushdown-corpus-tables-"))
    spark.sql(f"DROP DATABASE IF EXISTS {DATABASE} CASCADE")
    spark.sql(f"CREATE DATABASE {DATABASE} LOCATION '{root.as_uri()}'")
    spark.sql(f"USE {DATABASE}")
    for name in schema.TABLES:
        location = root / name
        location.mkdir()
        spark.sql(schema.spark_ddl(name, location.as_uri()))
    register_udfs(spark)
    return spark, root


def register_udfs(spark: Any) -> None:
    for name, (fn, returns) in UDF_BODIES.items():
        spark.udf.register(name, fn, returns)


# --- DuckDB --------------------------------------------------------------------------------------------------------


def duckdb_connection(scale: float = 0.05, seed: int = 7) -> Any:
    """An in-memory DuckDB with the corpus tables over ``schema.generate(scale, seed)`` and the UDFs."""
    import duckdb
    import pyarrow as pa

    con = duckdb.connect()
    data = schema.generate(scale, seed)
    for name, cols in schema.TABLES.items():
        con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {schema.duckdb_type(t)}' for c, t in cols)})")
        rows = data[name]
        if rows:
            arrow = pa.table({c: [r[i] for r in rows] for i, (c, _) in enumerate(cols)})
            con.register("_incoming", arrow)
            con.execute(f"INSERT INTO {name} SELECT * FROM _incoming")
            con.unregister("_incoming")
    from duckdb import sqltypes

    con.create_function("score_profit", score_profit, [sqltypes.DOUBLE], sqltypes.DOUBLE, null_handling="special")
    con.create_function("looks_valid", looks_valid, [sqltypes.VARCHAR], sqltypes.BOOLEAN, null_handling="special")
    return con


def to_duckdb(sql: str) -> str:
    import sqlglot

    return sqlglot.transpile(sql, read="spark", write="duckdb")[0]


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, Decimal):
        return round(float(value), 6)
    return value


def duckdb_rows(con: Any, sql: str) -> tuple[list[str], Counter[tuple[Any, ...]], float]:
    """Column names, rows as a multiset, seconds."""
    text = to_duckdb(sql)  # sqlglot's time is not DuckDB's
    start = time.perf_counter()
    cursor = con.execute(text)
    rows = cursor.fetchall()
    seconds = time.perf_counter() - start
    return [d[0] for d in cursor.description], Counter(tuple(_cell(v) for v in r) for r in rows), seconds


# --- the check -----------------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    query: str
    form: str
    violations: list[tuple[str, str]] = field(default_factory=list)
    savings_vs_baseline: float | None = None
    as_written: bool = False
    nested_loop: tuple[int, int] = (0, 0)
    plans: tuple[str, str] = ("", "")
    duckdb_seconds: tuple[float, float] | None = None
    answer_sql: str = ""
    spark_sql: str = ""
    #: why the service refused the query (the user then runs it as written: not a violation, but counted)
    refused: str = ""

    def describe(self, with_plans: bool = True) -> str:
        lines = [f"{self.query} [{self.form}]:"] + [f"  {kind}: {detail}" for kind, detail in self.violations]
        if with_plans and any(k in _PLAN_KINDS for k, _ in self.violations):
            lines += ["  -- plan diff (original -> answer's spark.sql) --", _indent(plan_diff(*self.plans))]
            lines += ["  -- answer's spark.sql --", _indent(self.spark_sql)]
        return "\n".join(lines)


_PLAN_KINDS = {"nested_loop", "lost_filter", "extra_scan", "extra_union_branch"}


_NOISE = re.compile(r"#\d+L?|\[plan_id=\d+\]|file:/\S+\]|\*\(\d+\) ")


def plan_diff(before: str, after: str) -> str:
    """A unified diff of two physical plans, without attribute ids, plan ids, codegen stage numbers and paths."""
    a = [_NOISE.sub("", line) for line in before.splitlines()]
    b = [_NOISE.sub("", line) for line in after.splitlines()]
    return "\n".join(difflib.unified_diff(a, b, "original", "answer", lineterm="", n=2))


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip().splitlines())


class Checker:
    """Holds the service, the Spark session and the DuckDB connection for a run over the corpus."""

    def __init__(self, spark: Any, duck: Any | None = None, service: Service | None = None) -> None:
        self.spark = spark
        self.duck = duck
        self.service = service or Service()
        self._original: dict[str, tuple[PlanFacts, list[tuple[str, str]]]] = {}
        self._duck_original: dict[str, Any] = {}

    def original_plan(self, query: Query) -> tuple[PlanFacts, list[tuple[str, str]]]:
        if query.name not in self._original:
            self._original[query.name] = spark_plan(self.spark, query.sql)
        return self._original[query.name]

    def check(self, query: Query, form: str) -> Outcome:
        out = Outcome(query.name, form)
        try:
            answer = self.service.optimize(request(query, form))
        except Exception as exc:
            if getattr(exc, "status", None) == 422:  # refused: the caller runs the query as written
                out.refused = str(exc)[:500]
            else:  # anything else is the service failing
                out.violations.append(("service_error", f"{type(exc).__name__}: {exc}"[:500]))
            return out
        target = answer.get("spark") or {}
        # DuckDB gets the engine-neutral rewrite (``sql_portable``); ``sql`` is the one to run on Spark, barriers in
        out.spark_sql, out.answer_sql = target.get("sql", ""), answer.get("sql_portable", answer.get("sql", ""))
        out.as_written = bool(target.get("as_written"))
        out.savings_vs_baseline = (answer.get("cost") or {}).get("savings_vs_baseline")
        if out.savings_vs_baseline is not None and out.savings_vs_baseline < -1e-9:
            cost = answer["cost"]
            out.violations.append(
                (
                    "priced_above_baseline",
                    f"savings_vs_baseline {out.savings_vs_baseline} (after {cost['after']['total']}, "
                    f"baseline {cost['baseline']['total']})",
                )
            )
        before, before_schema = self.original_plan(query)
        if out.as_written and out.spark_sql == query.sql and not target.get("conf"):
            after, after_schema = before, before_schema
        else:
            try:
                after, after_schema = spark_plan(self.spark, out.spark_sql, target.get("conf"))
            except Exception as exc:
                out.violations.append(("spark_error", f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"))
                after, after_schema = None, None
        if after is not None:
            out.nested_loop = (before.nested_loop, after.nested_loop)
            out.plans = (before.text, after.text)
            out.violations += compare_plans(before, after)
            if [(n.lower(), t) for n, t in after_schema] != [(n.lower(), t) for n, t in before_schema]:
                out.violations.append(("schema", f"{before_schema} -> {after_schema}"))
        if self.duck is not None and out.answer_sql:
            out.violations += self._duckdb(query, out, [n for n, _ in before_schema])
        return out

    def _duckdb(self, query: Query, out: Outcome, spark_names: list[str]) -> list[tuple[str, str]]:
        """The answer's ``sql`` against the original on DuckDB. Column names follow the request's dialect
        (Spark): an unnamed expression may take Spark's name for it (``count(1)``) where DuckDB names the original
        its own way (``count_star()``); either is the original's name."""
        if query.name not in self._duck_original:
            try:
                self._duck_original[query.name] = duckdb_rows(self.duck, query.sql)
            except Exception as exc:  # the original itself does not run on DuckDB: nothing to compare with
                self._duck_original[query.name] = exc
        original = self._duck_original[query.name]
        if isinstance(original, Exception):
            return []
        try:
            got = duckdb_rows(self.duck, out.answer_sql)
        except Exception as exc:
            return [("duckdb_error", f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}")]
        out.duckdb_seconds = (original[2], got[2])
        problems = []
        if len(got[0]) != len(original[0]) or any(
            name.lower() not in {duck.lower(), spark.lower()}
            for name, duck, spark in zip(got[0], original[0], spark_names or original[0], strict=False)
        ):
            problems.append(("duckdb_columns", f"{original[0]} -> {got[0]}"))
        if got[1] != original[1]:
            missing, extra = original[1] - got[1], got[1] - original[1]
            problems.append(
                (
                    "duckdb_rows",
                    f"{sum(original[1].values())} rows -> {sum(got[1].values())}; "
                    f"missing e.g. {list(missing)[:2]}, extra e.g. {list(extra)[:2]}",
                )
            )
        return problems

    def run(self, queries: Iterable[Query], forms: Iterable[str] = FORMS) -> list[Outcome]:
        forms = list(forms)
        return [self.check(q, form) for q in queries for form in forms]


def summary(outcomes: list[Outcome]) -> str:
    kinds = Counter(kind for o in outcomes for kind, _ in o.violations)
    added = sum(max(0, o.nested_loop[1] - o.nested_loop[0]) for o in outcomes)
    above = sum(1 for o in outcomes if any(k == "priced_above_baseline" for k, _ in o.violations))
    bad = [o for o in outcomes if o.violations]
    refused = [o for o in outcomes if o.refused]
    lines = [
        f"answers checked: {len(outcomes) - len(refused)} ({len({o.query for o in outcomes})} queries x "
        f"{len({o.form for o in outcomes})} statistics forms, {len(refused)} refused); "
        f"as written: {sum(o.as_written for o in outcomes)}",
        f"nested-loop joins added: {added} (in {kinds['nested_loop']} answers)",
        f"answers priced above the baseline: {above}",
        f"answers with a violation: {len(bad)}; by kind: {dict(sorted(kinds.items()))}",
        f"refused by the service: {len(refused)}" + "".join(f"\n  {o.query} [{o.form}]: {o.refused}" for o in refused),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="query names (prefixes)")
    parser.add_argument("--form", choices=FORMS, action="append")
    parser.add_argument("--plans", action="store_true", help="print the plans of violating answers")
    parser.add_argument("--no-duckdb", action="store_true")
    args = parser.parse_args(argv)
    queries = [q for q in load_corpus() if not args.only or any(q.name.startswith(p) for p in args.only)]
    spark, root = spark_session()
    try:
        checker = Checker(spark, None if args.no_duckdb else duckdb_connection())
        start = time.perf_counter()
        outcomes = checker.run(queries, args.form or FORMS)
        for o in outcomes:
            if o.violations:
                print(o.describe(with_plans=args.plans))
        print(summary(outcomes))
        print(f"{time.perf_counter() - start:.1f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if not any(o.violations for o in outcomes) else 1


@contextlib.contextmanager
def corpus_session(base: Any = None) -> Iterator[Any]:
    """``spark_session`` for a block; the tables' directory removed afterwards."""
    spark, root = spark_session(base)
    try:
        yield spark
    finally:
        with contextlib.suppress(Exception):
            spark.sql(f"DROP DATABASE IF EXISTS {DATABASE} CASCADE")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
