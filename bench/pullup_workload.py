"""Pull-up on Spark: an expensive Python UDF written EARLY (a CTE, a derived table, a temporary view, an inner
join's ON, DataFrame-style nesting) over a TPC-H star, below a selective join, as written and as the runner runs
the answer.

    python bench/pullup_workload.py [--scale 0.1] [--runs 3] [--queries p01,n02] [--udf-loops 50]
                                    [--form sql|dataframe|both]

TPC-H at ``--scale`` comes from bench/spark_e2e.py's generation (tpchgen-cli, ``bench/.data/tpch-sf<scale>/``);
the service gets the TPC-H catalog with row counts and key statistics scaled to it. ``expensive_check`` (about
``--udf-loops`` multiply-adds per call, true for about 90% of strings) is a Python UDF registered in the session,
counting its calls in an accumulator, and declared to the service with cost 5000. Per query, round-robin, the
median of ``--runs`` timed runs (into the ``noop`` sink) after one warm-up (a collect, whose UDF calls are
counted and whose rows are compared):

  C   the query as written, Spark's defaults;
  C2  C again in the same rounds: C2/C is the noise;
  D   ``service.spark_runner.run_sql`` on the same session (the answer's ``spark.sql``, its barriers).

``joined``: the rows that reach the UDF when it sits above every selective join (the same query without the
UDF, counted before any aggregate). A query is "pulled up" when D's executed plan evaluates the UDF above a join
and nowhere below one. Queries ``pNN`` are written so that pulling up pays; ``nNN`` so that it does not (the join
keeps every row, or the dimension filter keeps nearly all).

``F`` (floor, informational): the ``joined`` count itself, the same scans and joins with no UDF at all, median
of ``--runs``: no placement of the UDF beats it, so F/C bounds what D/C can reach. D pays on top of it what any
query with a Python UDF pays whatever its calls (the Python worker, the BatchEvalPython stage outside whole-stage
code generation) and the runner's own work per run (analysis of the original and the answer, view inlining,
UDF detection: 0.2-0.8 s on a loaded machine).

The UDF's weight. The service is told cost 5000 units a call, a comparison being 1; ``--udf-loops`` sets what a
call really costs. bench/udf_weight.py measures both on local Spark: one unit with
``pushdown_client.calibration.calibrate`` (a comparison filter over ``spark.range``, priced 3 units a row), a
call as the slope of a count filtered by the UDF over 49-character strings. At a load average of about 20 (a
shared 2-core machine) three calibrations put the declared 5000 units at 115 loops (a 16M-row unit, the steadiest:
9.4 ns a unit, 48 us a call at 100 loops) and at 187 and 570 loops (4M-row units of 23 and 39 ns, mostly job
overhead); at 50 loops a call was 700-1400 units, a quarter of what is declared. So the workload's results are
reported at 50 loops (bench/results/pullup_workload.json) and at 120, the UDF about as costly as declared
(bench/results/pullup_workload_loops120.json); at sf0.1 likewise (pullup_workload_sf0.1.json,
pullup_workload_sf0.1_loops120.json).

Targets (issue "place every predicate where it costs least"): geometric mean D/C over the paying queries <= 0.3,
calls D == joined rows on each; the no-pay queries' D/C within the C2/C noise.

``--form dataframe`` (or ``both``, the SQL form first): the same queries written with the DataFrame API
(bench/pullup_dataframes.py: ``spark.table``, the filter early with an ``F.udf`` never registered by name,
``.join``, ``.groupBy().agg``), the UDF declared to the service by its object with the same cost. C is the
DataFrame as written (a fresh one per run) into the ``noop`` sink, C2 again, D the DataFrame
``pushdown_client.dataframe.run_dataframe`` returns (built per run, the answer asked once per query, as the SQL
form's runner); rows compared with C's. ``joined`` and the floor F are the SQL form's (the same scans and joins).
At sf0.05, 50 loops (bench/results/pullup_workload_dataframe.json, load about 4): every query's rows agree; eight
of the ten paying queries are pulled up with calls D == joined; p06 and p10 were not (issue 42). Their
``o_orderdate.between`` two dates reaches the service as ``o_orderdate >= d1 AND o_orderdate <= d2`` (PySpark's
``Column.between``), where the SQL form says BETWEEN; the estimator multiplied the two halves (0.52 x 0.48: a
quarter of the orders, where the interval keeps 0.08%), so the join looked unselective and the UDF went onto
the customer scan. Bounds on one column are now one interval (docs/estimation.md); both forms pull it up
(bench/results/pullup_workload_dataframe_p06_p10-s28.json, sf0.1, 120 loops).

Writes bench/results/pullup_workload.json (or ``--output``); the DataFrame form
bench/results/pullup_workload_dataframe.json (or ``--dataframe-output``).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.spark_e2e import CATALOG, DATA, TABLES, AnswerCache, ensure_data, geomean, make_spark, ratio, runner  # noqa: E402
from bench.spark_measure import Measured, compare_results, timed_noop  # noqa: E402
from bench.spark_workload import make_check  # noqa: E402
from pushdown_client.dataframe import DataFrameRun, run_dataframe  # noqa: E402
from pushdown_client.spark_runner import SparkRun  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

RESULTS = ROOT / "bench" / "results" / "pullup_workload.json"
RESULTS_DATAFRAME = ROOT / "bench" / "results" / "pullup_workload_dataframe.json"
FORMS = ("sql", "dataframe")
UDF = "expensive_check"
FUNCTIONS = {UDF: {"cost": 5000}}
CONFIGS = ("C", "C2", "D")
TARGET_GEOMEAN = 0.3
#: a temporary view with the expensive filter in its definition (query p08)
VIEW = "checked_orders"
VIEW_SQL = f"SELECT * FROM orders WHERE {UDF}(o_comment)"
#: selective customer filters: one segment of five and one nation of 25 (0.8% of customers)
SEG7 = "c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 7"
JOIN_C = "JOIN customer c ON o.o_custkey = c.c_custkey"


@dataclass(frozen=True)
class PullupQuery:
    name: str
    form: str
    sql: str
    joined: str  # count(*) of the rows reaching the UDF when it sits above the selective joins
    pays: bool = True


QUERIES: list[PullupQuery] = [
    PullupQuery(
        "p01_cte",
        "CTE",
        f"WITH checked AS (SELECT * FROM orders WHERE {UDF}(o_comment)) SELECT count(*) AS n, "
        f"sum(o.o_totalprice) AS total FROM checked o {JOIN_C} WHERE {SEG7}",
        f"SELECT count(*) FROM orders o {JOIN_C} WHERE {SEG7}",
    ),
    PullupQuery(
        "p02_derived_star",
        "derived table (SELECT *)",
        f"SELECT p.p_type, count(*) AS n FROM (SELECT * FROM lineitem WHERE {UDF}(l_comment)) l JOIN part p "
        "ON l.l_partkey = p.p_partkey WHERE p.p_brand = 'Brand#23' AND p.p_container = 'MED BOX' GROUP BY p.p_type",
        "SELECT count(*) FROM lineitem l JOIN part p ON l.l_partkey = p.p_partkey "
        "WHERE p.p_brand = 'Brand#23' AND p.p_container = 'MED BOX'",
    ),
    PullupQuery(
        "p03_derived_columns",
        "derived table (columns, the UDF's kept)",
        "SELECT o.o_orderpriority, count(*) AS n FROM (SELECT o_orderkey, o_custkey, o_orderpriority, o_comment "
        f"FROM orders WHERE {UDF}(o_comment)) o {JOIN_C} "
        "WHERE c.c_mktsegment = 'AUTOMOBILE' AND c.c_nationkey = 3 GROUP BY o.o_orderpriority",
        f"SELECT count(*) FROM orders o {JOIN_C} WHERE c.c_mktsegment = 'AUTOMOBILE' AND c.c_nationkey = 3",
    ),
    PullupQuery(
        "p04_derived_projects_away",
        "derived table (the UDF's column not selected)",
        f"SELECT count(*) AS n FROM (SELECT o_orderkey, o_custkey FROM orders WHERE {UDF}(o_comment)) o {JOIN_C} "
        f"WHERE {SEG7}",
        f"SELECT count(*) FROM orders o {JOIN_C} WHERE {SEG7}",
    ),
    PullupQuery(
        "p05_on_clause",
        "inner join ON",
        f"SELECT count(*) AS n, max(o.o_orderdate) AS last FROM orders o JOIN customer c "
        f"ON o.o_custkey = c.c_custkey AND {UDF}(o.o_comment) "
        "WHERE c.c_mktsegment = 'MACHINERY' AND c.c_nationkey = 11",
        f"SELECT count(*) FROM orders o {JOIN_C} WHERE c.c_mktsegment = 'MACHINERY' AND c.c_nationkey = 11",
    ),
    PullupQuery(
        "p06_on_clause_dimension_udf",
        "inner join ON (UDF on the dimension)",
        f"SELECT c.c_mktsegment, count(*) AS n FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
        f"AND {UDF}(c.c_comment) WHERE o.o_orderdate BETWEEN DATE '1995-03-01' AND DATE '1995-03-03' "
        "GROUP BY c.c_mktsegment",
        f"SELECT count(*) FROM orders o {JOIN_C} WHERE o.o_orderdate BETWEEN DATE '1995-03-01' AND DATE '1995-03-03'",
    ),
    PullupQuery(
        "p07_view",
        "temporary view",
        f"SELECT count(*) AS n, sum(o.o_totalprice) AS total FROM {VIEW} o {JOIN_C} WHERE {SEG7}",
        f"SELECT count(*) FROM orders o {JOIN_C} WHERE {SEG7}",
    ),
    PullupQuery(
        "p08_dataframe_nesting",
        "nested derived tables (DataFrame style)",
        "SELECT t3.o_orderpriority, count(*) AS n FROM (SELECT t2.o_orderkey, t2.o_custkey, t2.o_orderpriority, "
        "t2.o_comment FROM (SELECT t1.* FROM (SELECT * FROM orders) t1 WHERE "
        f"{UDF}(t1.o_comment)) t2) t3 JOIN customer c ON t3.o_custkey = c.c_custkey WHERE {SEG7} "
        "GROUP BY t3.o_orderpriority",
        f"SELECT count(*) FROM orders o {JOIN_C} WHERE {SEG7}",
    ),
    PullupQuery(
        "p09_cte_two_dimensions",
        "CTE (fact, two dimension joins)",
        f"WITH l AS (SELECT * FROM lineitem WHERE {UDF}(l_comment)) SELECT s.s_name, count(*) AS n FROM l "
        "JOIN part p ON l.l_partkey = p.p_partkey JOIN supplier s ON l.l_suppkey = s.s_suppkey "
        "WHERE p.p_size = 15 AND p.p_type LIKE '%BRASS' AND s.s_nationkey = 3 GROUP BY s.s_name",
        "SELECT count(*) FROM lineitem l JOIN part p ON l.l_partkey = p.p_partkey JOIN supplier s "
        "ON l.l_suppkey = s.s_suppkey WHERE p.p_size = 15 AND p.p_type LIKE '%BRASS' AND s.s_nationkey = 3",
    ),
    PullupQuery(
        "p10_cte_dimension_udf",
        "CTE (UDF on the dimension)",
        f"WITH cc AS (SELECT * FROM customer WHERE {UDF}(c_comment)) SELECT cc.c_mktsegment, count(*) AS n "
        "FROM orders o JOIN cc ON o.o_custkey = cc.c_custkey "
        "WHERE o.o_orderdate BETWEEN DATE '1995-03-01' AND DATE '1995-03-03' GROUP BY cc.c_mktsegment",
        f"SELECT count(*) FROM orders o {JOIN_C} WHERE o.o_orderdate BETWEEN DATE '1995-03-01' AND DATE '1995-03-03'",
    ),
    PullupQuery(
        "n01_cte_join_keeps_all",
        "CTE, join keeps every row",
        f"WITH checked AS (SELECT * FROM orders WHERE {UDF}(o_comment)) SELECT count(*) AS n FROM checked o {JOIN_C}",
        f"SELECT count(*) FROM orders o {JOIN_C}",
        pays=False,
    ),
    PullupQuery(
        "n02_derived_unselective",
        "derived table, dimension filter keeps ~99%",
        f"SELECT count(*) AS n FROM (SELECT * FROM orders WHERE {UDF}(o_comment)) o {JOIN_C} WHERE c.c_acctbal > -900",
        f"SELECT count(*) FROM orders o {JOIN_C} WHERE c.c_acctbal > -900",
        pays=False,
    ),
    PullupQuery(
        "n03_on_clause_keeps_all",
        "inner join ON, join keeps every row",
        f"SELECT n.n_name, count(*) AS k FROM customer c JOIN nation n ON c.c_nationkey = n.n_nationkey "
        f"AND {UDF}(c.c_comment) GROUP BY n.n_name",
        "SELECT count(*) FROM customer c JOIN nation n ON c.c_nationkey = n.n_nationkey",
        pays=False,
    ),
]

_KEY_SUFFIXES = ("custkey", "orderkey", "partkey", "suppkey")
_FIXED = ("nation", "region")


def scaled_catalog(scale: float) -> dict[str, Any]:
    """The SF1 catalog at ``scale``: row counts, and the keys' distinct counts and maxima, scaled; plus the view."""
    out = copy.deepcopy(CATALOG)
    for name, table in out["tables"].items():
        if name in _FIXED:
            continue
        table["row_count"] = max(1, round(table["row_count"] * scale))
        for column, stats in table.get("column_stats", {}).items():
            if column.endswith(_KEY_SUFFIXES) and not column.endswith("nationkey"):
                for key in ("ndv", "max"):
                    if isinstance(stats.get(key), int | float):
                        stats[key] = max(1, round(stats[key] * scale))
    out["tables"][VIEW] = copy.deepcopy(out["tables"]["orders"])  # the service sees a view as a table
    return out


class Calls:
    """``expensive_check`` on the session, its calls counted in an accumulator: registered by name for the SQL
    form, and as ``dataframe_udf``, an ``F.udf`` of the same function never registered, for the DataFrame form."""

    def __init__(self, spark: SparkSession, loops: int) -> None:
        from pyspark.sql import functions as F
        from pyspark.sql.types import BooleanType

        self.acc = spark.sparkContext.accumulator(0)
        acc, check = self.acc, make_check(loops)

        def expensive_check(text: str | None) -> bool | None:
            acc.add(1)
            return check(text)

        spark.udf.register(UDF, expensive_check, BooleanType())
        with warnings.catch_warnings():  # PySpark 4 tries the type hints for an Arrow UDF first, and says so
            warnings.simplefilter("ignore", UserWarning)
            self.dataframe_udf = F.udf(expensive_check, BooleanType())

    def during(self, action: Any) -> int:
        start = self.acc.value
        action()
        return int(self.acc.value - start)


# ------------------------------------------------------------------ plans


def _kids(node: Any) -> list[Any]:
    kind = node.getClass().getSimpleName()
    if kind == "AdaptiveSparkPlanExec":
        return [node.executedPlan()]
    if kind.endswith("QueryStageExec"):
        return [node.plan()]
    kids = node.children()
    return [kids.apply(i) for i in range(kids.size())]


def udf_placement(root: Any) -> dict[str, Any]:
    """Each Python UDF evaluation of a physical plan: "above" a join (one in its subtree) or "below" (under one)."""
    evals: list[str] = []

    def walk(node: Any, under_join: bool) -> bool:
        kind = node.getClass().getSimpleName()
        is_join = "Join" in kind or kind == "CartesianProductExec"
        has_join = False
        for kid in _kids(node):
            has_join = walk(kid, under_join or is_join) or has_join
        if kind in ("BatchEvalPythonExec", "ArrowEvalPythonExec"):
            evals.append("above" if has_join else "below" if under_join else "no join")
        return has_join or is_join

    walk(root, False)
    return {"udf_evals": evals}


# ------------------------------------------------------------------ measuring


def measure_query(
    spark: SparkSession,
    cache: AnswerCache,
    calls: Calls,
    q: PullupQuery,
    catalog: dict[str, Any],
    runs: int,
    timeout: float,
) -> dict[str, Any]:
    build = runner(cache, q.sql, catalog, FUNCTIONS)
    # the answer the runner runs: what a user's run_sql sends (temporary views inlined, UDFs detected)
    answer = build(spark).answer
    target = answer.get("spark", {})
    m = {
        "C": Measured(q.sql, True),
        "C2": Measured(q.sql, True),
        "D": Measured(target.get("sql", q.sql), True, build),
    }
    return {"sql": q.sql, **_measured(spark, calls, q, m, answer, runs, timeout)}


class DataFrameAnswers(AnswerCache):
    """The ``AnswerCache`` for ``run_dataframe``, which asks with ``detail="full"`` itself: one answer per plan."""

    def optimize(self, sql: str | None = None, **kwargs: Any) -> Any:
        kwargs.pop("detail", None)
        return super().optimize(sql, **kwargs)


def measure_dataframe_query(
    spark: SparkSession,
    cache: DataFrameAnswers,
    calls: Calls,
    q: PullupQuery,
    make: Callable[[], DataFrame],
    catalog: dict[str, Any],
    runs: int,
    timeout: float,
) -> dict[str, Any]:
    """``q`` in DataFrame form: C the DataFrame ``make`` builds, as written; D what ``run_dataframe`` returns."""
    functions = {calls.dataframe_udf: FUNCTIONS[UDF]}

    def as_written(spark: SparkSession) -> SparkRun:
        return SparkRun(spark, cast("Any", {}), make())

    def optimized(spark: SparkSession) -> DataFrameRun:
        return run_dataframe(make(), client=cache, functions=functions, catalog=catalog, options={"mode": "cost"})  # type: ignore[arg-type]

    first = optimized(spark)
    asked = len(cache.answers)
    m = {"C": Measured(q.name, True, as_written), "C2": Measured(q.name, True, as_written)}
    m["D"] = Measured(first.answer.get("spark", {}).get("sql", q.name), True, optimized)
    row = _measured(spark, calls, q, m, first.answer, runs, timeout)
    return {
        "sql_form": q.sql,
        **row,
        "as_written": first.as_written,
        "fallback": first.fallback,
        "leaves": [leaf.label for leaf in first.translation.leaves] if first.translation else [],
        "answers_asked_again": len(cache.answers) - asked,  # 0: every D run built the same plan, one answer
    }


def _measured(
    spark: SparkSession,
    calls: Calls,
    q: PullupQuery,
    m: dict[str, Measured],
    answer: Any,
    runs: int,
    timeout: float,
) -> dict[str, Any]:
    """Warm up, time ``runs`` rounds round-robin, compare rows, count calls and joined rows, place the UDF."""
    target = answer.get("spark", {})
    counted = {k: calls.during(lambda v=v: v.warm_up(spark, timeout, udf_placement)) for k, v in m.items()}
    for round_ in range(runs):
        shift = round_ % len(CONFIGS)
        for k in CONFIGS[shift:] + CONFIGS[:shift]:
            m[k].run(spark, timeout)
    same, note = compare_results(m)
    joined = spark.sql(q.joined).first()[0]
    # the same scans and joins with no UDF at all: what no placement of the UDF can beat (where D's time goes)
    floor = statistics.median(timed_noop(spark, q.joined, timeout) for _ in range(max(runs, 1)))
    d_evals = m["D"].plan.get("udf_evals", [])
    pulled = bool(d_evals) and all(e == "above" for e in d_evals)
    udf_decisions = [
        {k: d.get(k) for k in ("predicate", "operator", "action", "reason")}
        for d in answer.get("decisions", [])
        if UDF in d.get("predicate", "")
    ]
    return {
        "form": q.form,
        "pays": q.pays,
        **{k: m[k].as_json() for k in CONFIGS},
        "d_over_c": ratio(m["D"].median, m["C"].median),
        "c2_over_c": ratio(m["C2"].median, m["C"].median),
        "floor_s": round(floor, 4),
        "floor_over_c": ratio(floor, m["C"].median),
        "calls_c": counted["C"],
        "calls_d": counted["D"],
        "joined_rows": joined,
        "pulled_up": pulled,
        "udf_evals_c": m["C"].plan.get("udf_evals", []),
        "udf_evals_d": d_evals,
        "as_written": bool(target.get("as_written")),
        "barriers": target.get("barriers", []),
        "spark_sql": target.get("sql"),
        "udf_decisions": udf_decisions,
        "results_agree": same,
        "results": note,
    }


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def summarize(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    paying = {k: r for k, r in rows.items() if r["pays"]}
    nopay = {k: r for k, r in rows.items() if not r["pays"]}
    noise = [abs(math.log(r["c2_over_c"])) for r in rows.values() if r["c2_over_c"]]
    spread = math.exp(max(noise)) - 1 if noise else None
    pulled = {k: r for k, r in paying.items() if r["pulled_up"]}
    geo = geomean(r["d_over_c"] for r in paying.values())
    return {
        "geomean_d_over_c_paying": geo,
        "geomean_d_over_c_pulled_up": geomean(r["d_over_c"] for r in pulled.values()),
        "geomean_floor_over_c_paying": geomean(r["floor_over_c"] for r in paying.values()),
        "paying": len(paying),
        "pulled_up": sorted(pulled),
        "not_pulled_up": sorted(set(paying) - set(pulled)),
        "calls_d_equal_joined": sorted(k for k, r in paying.items() if r["calls_d"] == r["joined_rows"]),
        "c2_over_c_spread": spread,
        "nopay_d_over_c": {k: r["d_over_c"] for k, r in nopay.items()},
        "mismatches": sorted(k for k, r in rows.items() if r["results_agree"] is False),
        "targets": {
            "geomean_d_over_c_at_most_0_3": None if geo is None else geo <= TARGET_GEOMEAN,
            "every_paying_query_calls_d_equal_joined": all(r["calls_d"] == r["joined_rows"] for r in paying.values()),
            "nopay_within_noise": all(
                r["d_over_c"] is not None and abs(math.log(r["d_over_c"])) <= math.log(1 + (spread or 0))
                for r in nopay.values()
            ),
        },
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=3, help="timed runs per query and configuration")
    parser.add_argument("--queries", default="", help="subset by prefix, e.g. p01,n02 (default: all)")
    parser.add_argument("--udf-loops", type=int, default=50, help="work per UDF call")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--form", choices=(*FORMS, "both"), default="sql", help="the queries as SQL, as DataFrames")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--dataframe-output", type=Path, default=RESULTS_DATAFRAME)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The chosen form's result (``both``: the DataFrame form's, with the SQL form's figures ``beside_sql``)."""
    args = parse_args(argv)
    wanted = [w.strip() for w in args.queries.split(",") if w.strip()]
    chosen = [q for q in QUERIES if not wanted or any(q.name.startswith(w) for w in wanted)]
    data = ensure_data(args.scale, DATA)
    spark = make_spark(args.master).newSession()
    for table in TABLES:
        spark.read.parquet(str(data / table)).createOrReplaceTempView(table)
    calls = Calls(spark, args.udf_loops)
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {VIEW} AS {VIEW_SQL}")
    catalog = scaled_catalog(args.scale)
    forms = FORMS if args.form == "both" else (args.form,)
    results = {form: run_form(spark, calls, form, chosen, catalog, args) for form in forms}
    result = results[forms[-1]]
    if len(results) > 1:
        sql = results["sql"]
        result["beside_sql"] = {
            "d_over_c": {k: r["d_over_c"] for k, r in sql["queries"].items()},
            **{k: sql[k] for k in ("geomean_d_over_c_paying", "pulled_up", "calls_d_equal_joined", "mismatches")},
        }
        args.dataframe_output.write_text(json.dumps(result, indent=2, default=str))
        print("\nD/C per query, SQL form and DataFrame form")
        for name, r in result["queries"].items():
            print(f"  {name:28} {_fmt(sql['queries'][name]['d_over_c']):>6} {_fmt(r['d_over_c']):>6}")
    return result


def run_form(
    spark: SparkSession,
    calls: Calls,
    form: str,
    chosen: list[PullupQuery],
    catalog: dict[str, Any],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Measure ``chosen`` in one form (``sql`` or ``dataframe``), print the table, write the form's results."""
    from bench.pullup_dataframes import DATAFRAME_VIEW, builders, create_view

    dataframe = form == "dataframe"
    if dataframe:
        create_view(spark, calls.dataframe_udf)
        makers = builders(spark, calls.dataframe_udf)
    output = args.dataframe_output if dataframe else args.output
    print(
        f"{'DataFrame' if dataframe else 'SQL'} form. TPC-H sf{args.scale:g}; Spark {spark.version} "
        f"{spark.sparkContext.master}, "
        f"{spark.conf.get('spark.sql.shuffle.partitions')} shuffle partitions; {UDF}: {args.udf_loops} loops per "
        f"call, declared cost {FUNCTIONS[UDF]['cost']}; median of {args.runs} runs (seconds)\n"
    )
    print(
        f"{'query':28} {'form':44} {'C':>7} {'D':>7} {'D/C':>6} {'C2/C':>6} {'F/C':>6} {'calls C':>8} "
        f"{'calls D':>8} {'joined':>7}  up"
    )
    started = time.perf_counter()
    load_before = os.getloadavg()
    rows: dict[str, dict[str, Any]] = {}
    cache = DataFrameAnswers() if dataframe else AnswerCache()
    for q in chosen:
        if dataframe:
            assert isinstance(cache, DataFrameAnswers)
            r = measure_dataframe_query(spark, cache, calls, q, makers[q.name], catalog, args.runs, args.timeout)
        else:
            r = measure_query(spark, cache, calls, q, catalog, args.runs, args.timeout)
        rows[q.name] = r
        print(
            f"{q.name:28} {q.form[:44]:44} {_fmt(r['C']['median_s']):>7} {_fmt(r['D']['median_s']):>7} "
            f"{_fmt(r['d_over_c']):>6} {_fmt(r['c2_over_c']):>6} {_fmt(r['floor_over_c']):>6} {r['calls_c']:>8} "
            f"{r['calls_d']:>8} "
            f"{r['joined_rows']:>7}  {'yes' if r['pulled_up'] else 'no'}",
            flush=True,
        )
        if r["results_agree"] is not True:
            print(f"    RESULTS {r['results']}")
        if r.get("fallback"):
            print(f"    run_dataframe fell back to the DataFrame as written: {r['fallback']}")
        if q.pays and not r["pulled_up"]:
            print(f"    not pulled up: as_written={r['as_written']} udf evals in D {r['udf_evals_d']}")
            for d in r["udf_decisions"]:
                print(f"      {d}")
    outcome = summarize(rows)
    print(
        f"\ngeomean D/C over {outcome['paying']} paying queries {_fmt(outcome['geomean_d_over_c_paying'])}; over the "
        f"{len(outcome['pulled_up'])} pulled up {_fmt(outcome['geomean_d_over_c_pulled_up'])}; floor (no UDF) over C "
        f"{_fmt(outcome['geomean_floor_over_c_paying'])}; widest C2/C spread "
        f"{_fmt(outcome['c2_over_c_spread'], '.1%') if outcome['c2_over_c_spread'] is not None else '-'}"
    )
    for target, met in outcome["targets"].items():
        print(f"target {target}: {'met' if met else 'MISSED'}")
    print(f"elapsed {time.perf_counter() - started:.0f}s\n")
    result = {
        "form_api": form,
        "scale": args.scale,
        "runs": args.runs,
        "udf_loops": args.udf_loops,
        "functions": FUNCTIONS,
        "spark": spark.version,
        "master": spark.sparkContext.master,
        "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        "view": {DATAFRAME_VIEW: "orders filtered by the DataFrame UDF"} if dataframe else {VIEW: VIEW_SQL},
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
        "queries": rows,
        **outcome,
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(result, indent=2, default=str))
    print(f"wrote {output}")
    return result


if __name__ == "__main__":
    outcome = main()
    sys.exit(1 if outcome["mismatches"] or outcome.get("beside_sql", {}).get("mismatches") else 0)
