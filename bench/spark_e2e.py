"""End-to-end on Spark: TPC-H and an expensive-predicate workload as written, as we rewrite them, as Catalyst
pushes them, and exactly as the Spark runner runs them.

    python bench/spark_e2e.py [--scale 1] [--runs 5] [--queries q01,q03] [--workload w01,w07] [--timeout 300]

TPC-H at ``--scale`` is generated once with tpchgen-cli as Parquet into ``bench/.data/tpch-sf<scale>/<table>/``
(git-ignored; the layout bench/estimation.py uses, so both share it) and registered as temporary views.
Every query runs in each configuration in this one run, round-robin, each the median of ``--runs`` timed runs
after one untimed warm-up (the warm-up collects the rows the configurations are compared on):

  A   the original query with Catalyst's logical pushdown switched off (``spark.sql.optimizer.excludedRules``
      = the five rules in EXCLUDED_RULES); Parquet's scan-level filtering stays on;
  B   our rewritten plan (``mode: cost``) under A's settings, rendered without barriers (the old way);
  C   the original query under Spark's defaults;
  C2  C again, in the same round: C2/C is the noise the other ratios must be read against;
  D   exactly what the runner does: ``service.spark_runner.run_sql`` on this session from Spark's defaults
      (the answer's ``spark.sql`` with its per-predicate barriers, its ``spark.conf`` if any, the original's
      column names), written with the runner's own ``write``. The service call is made once per query, outside
      the timed runs, and its time reported apart.

A timed run executes the whole plan into Spark's ``noop`` sink. A run that exceeds ``--timeout`` seconds is
cancelled and reported as a timeout (a lower bound). Physical plans of A, B and C are inspected (scans'
PushedFilters and DataFilters, filters above joins, nested-loop joins) and anomalies printed.

The expensive-predicate workload (bench/spark_workload.py) declares its functions' costs to the service like a
SQL caller (``functions``). Targets (issue 13): TPC-H geometric mean D/C <= 1.00 and no query above 1.10;
workload geometric mean D/C <= 0.3 and no query slower than C (beyond the C2/C noise).

Writes bench/results/spark_e2e.json (or ``--output``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.spark_measure import EXCLUDED_RULES, Measured, compare_results  # noqa: E402
from bench.spark_plancheck import _pushed_by_table, check_plans, inspect_plan  # noqa: E402
from bench.spark_workload import WORKLOAD, ensure_doc_table, register_functions, workload_catalog  # noqa: E402
from service.client import Answer, PushdownClient  # noqa: E402
from service.settings import Settings  # noqa: E402
from service.spark_plan import to_sql  # noqa: E402
from service.spark_runner import SparkRun, run_sql  # noqa: E402
from service.sql import sql_to_plan  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TPCH = ROOT / "bench" / "tpch"
DATA = ROOT / "bench" / ".data"
RESULTS = ROOT / "bench" / "results" / "spark_e2e.json"
CATALOG: dict[str, Any] = json.loads((TPCH / "catalog.json").read_text())
TABLES: list[str] = list(CATALOG["tables"])
QUERIES: list[str] = sorted(p.stem for p in (TPCH / "queries").glob("q*.sql"))
CONFIGS = ("A", "B", "C", "C2", "D")
#: issue 13's targets
TPCH_GEOMEAN, TPCH_WORST, WORKLOAD_GEOMEAN = 1.00, 1.10, 0.3


# ------------------------------------------------------------------ data and Spark


def ensure_data(scale: float, root: Path = DATA) -> Path:
    """``root/tpch-sf<scale>/<table>/*.parquet``; only tables missing there are generated (atomically each)."""
    label = f"{scale:g}"
    target = root / f"tpch-sf{label}"
    missing = [t for t in TABLES if not any((target / t).glob("*.parquet"))]
    if not missing:
        return target
    tool = shutil.which("tpchgen-cli") or str(Path(sys.executable).with_name("tpchgen-cli"))
    if not Path(tool).exists():
        raise SystemExit("tpchgen-cli is not installed (pip install tpchgen-cli)")
    target.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".tpch-sf{label}-", dir=root))
    try:
        print(f"generating TPC-H sf{label} ({', '.join(missing)}) with tpchgen-cli ...", flush=True)
        subprocess.run(
            [tool, "parquet", "-s", label, "--tables", ",".join(missing), "--parts", "1", "--output-dir", str(staging)],
            check=True,
            capture_output=True,
        )
        for table in missing:
            if (target / table).exists():
                shutil.rmtree(target / table)
            (staging / table).rename(target / table)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def make_spark(master: str = "local[2]") -> SparkSession:
    """A session sized for a shared 2-core machine: 4g driver, 4 shuffle partitions, no UI."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName("spark-e2e-bench")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# ------------------------------------------------------------------ our service


class AnswerCache:
    """The runner's client, asked once per query: D's timed runs then measure Spark, not the service.

    In-process (``url`` None), as ``PushdownClient()``: the runner then sends no feedback after its actions."""

    url: str | None = None

    def __init__(self) -> None:
        self.client = PushdownClient(settings=Settings(data_dir=Path(tempfile.mkdtemp(prefix="spark-e2e-"))))
        self.answers: dict[str, Answer] = {}
        self.last_seconds = 0.0

    def optimize(self, sql: str | None = None, **kwargs: Any) -> Answer:
        key = json.dumps([sql, kwargs], sort_keys=True, default=str)
        if key not in self.answers:
            start = time.perf_counter()
            self.answers[key] = self.client.optimize(sql, detail="full", **kwargs)  # the bench reads the matrix
            self.last_seconds = time.perf_counter() - start
        return self.answers[key]


def runner(cache: AnswerCache, sql: str, catalog: dict[str, Any], functions: dict[str, Any] | None) -> Callable:
    def build(spark: SparkSession) -> SparkRun:
        return run_sql(spark, sql, client=cache, catalog=catalog, functions=functions, options={"mode": "cost"})  # type: ignore[arg-type]

    return build


def ratio(x: float | None, y: float | None) -> float | None:
    return None if x is None or y is None or y <= 0 else x / y


def geomean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def measure(spark: SparkSession, m: dict[str, Measured], runs: int, timeout: float) -> None:
    """Warm every configuration up, then ``runs`` rounds, round-robin; each round starts one configuration
    later than the one before, so that no configuration always runs in the same place (after the same other)."""
    for v in m.values():
        v.warm_up(spark, timeout, inspect_plan)
    configs = list(m.values())
    for round_ in range(runs):
        shift = round_ % len(configs)
        for v in configs[shift:] + configs[:shift]:
            v.run(spark, timeout)
    spark.conf.unset("spark.sql.optimizer.excludedRules")


def configurations(
    cache: AnswerCache, sql: str, catalog: dict[str, Any], functions: dict[str, Any] | None
) -> tuple[Answer, dict[str, Measured]]:
    answer = cache.optimize(
        sql, catalog=catalog, functions=functions, options={"mode": "cost"}, context=None, dialect="spark"
    )
    rewritten = to_sql(answer["plan"], catalog)
    return answer, {
        "A": Measured(sql, False),
        "B": Measured(rewritten, False),
        "C": Measured(sql, True),
        "C2": Measured(sql, True),
        "D": Measured(answer.get("spark", {}).get("sql", sql), True, runner(cache, sql, catalog, functions)),
    }


def ratios(m: dict[str, Measured]) -> dict[str, float | None]:
    c = m["C"].median
    return {
        "b_over_a": ratio(m["B"].median, m["A"].median),
        "b_over_c": ratio(m["B"].median, c),
        "d_over_c": ratio(m["D"].median, c),
        "c2_over_c": ratio(m["C2"].median, c),
    }


def _line(name: str, m: dict[str, Measured], r: dict[str, Any], timeout: float, note: str) -> str:
    times = "  ".join(f"{k} {m[k].shown(timeout):>8}" for k in CONFIGS)
    return f"{name}  {times}  D/C {_fmt(r['d_over_c'])}  C2/C {_fmt(r['c2_over_c'])}  B/C {_fmt(r['b_over_c'])}  {note}"


def run_tpch(
    spark: SparkSession, cache: AnswerCache, names: list[str], runs: int, timeout: float, show_plans: bool
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        sql = (TPCH / "queries" / f"{name}.sql").read_text()
        answer, m = configurations(cache, sql, CATALOG, None)
        measure(spark, m, runs, timeout)
        same, note = compare_results(m)
        issues = check_plans(name, m, sql_to_plan(sql, CATALOG), answer["plan"])
        actions = [d["action"] for d in answer["decisions"]]
        row: dict[str, Any] = {k: m[k].as_json() for k in CONFIGS}
        row.update(ratios(m))
        row.update(
            {
                "results_agree": same,
                "results": note,
                "anomalies": issues,
                "decisions": {a: actions.count(a) for a in ("pushed", "kept", "blocked")},
                "barriers": answer.get("spark", {}).get("barriers", []),
                "runner_conf": m["D"].conf,
                "service_ms": round(1000 * cache.last_seconds, 1),
            }
        )
        out[name] = row
        print(_line(name, m, row, timeout, note), flush=True)
        for k in ("A", "B", "C"):
            p = m[k].plan
            if p and "error" not in p:
                scans = " ".join(f"{t}:{'/'.join(map(str, n))}" for t, n in _pushed_by_table(p).items())
                print(
                    f"    {k} PushedFilters per scan [{scans}]  above joins {p['above_joins']}"
                    f"  join conditions {p['join_conditions']}  nested loops {p['nested_loop']}"
                )
        if show_plans:
            for k in CONFIGS:
                print(f"    {k}:\n      " + m[k].plan_text.replace("\n", "\n      "))
        for issue in issues:
            print(f"    ANOMALY {issue}")
        if same is False:
            print(f"    MISMATCH {note}")
    return out


# ------------------------------------------------------------------ expensive predicates


def run_workload(
    spark: SparkSession, cache: AnswerCache, names: list[str], runs: int, timeout: float
) -> dict[str, dict[str, Any]]:
    catalog = workload_catalog(CATALOG)
    out: dict[str, dict[str, Any]] = {}
    print("\nexpensive-predicate workload (functions declared to the service with their cost)")
    for query in [q for q in WORKLOAD if q.name in names]:
        answer, m = configurations(cache, query.sql, catalog, query.functions)
        measure(spark, m, runs, timeout)
        same, note = compare_results(m)
        kept = [d["predicate"] for d in answer["decisions"] if d["action"] == "kept"]
        row: dict[str, Any] = {k: m[k].as_json() for k in CONFIGS}
        row.update(ratios(m))
        row.update(
            {
                "what": query.what,
                "functions": query.functions,
                "kept": kept,
                "barriers": answer.get("spark", {}).get("barriers", []),
                "runner_conf": m["D"].conf,
                "model_savings_vs_baseline": answer["cost"].get("savings_vs_baseline"),
                "results_agree": same,
                "results": note,
            }
        )
        out[query.name] = row
        print(_line(query.name, m, row, timeout, note), flush=True)
        print(f"    {query.what}; kept above: {kept or 'nothing'}")
        if same is False:
            print(f"    MISMATCH {note}")
    return out


# ------------------------------------------------------------------ main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per query and configuration")
    parser.add_argument("--queries", default="", help="TPC-H subset, e.g. q01,q03 (default: all 22; 'none': skip)")
    parser.add_argument("--workload", default="", help="workload subset by prefix, e.g. w01,w07 ('none': skip)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a run is cancelled")
    parser.add_argument("--udf-loops", type=int, default=50, help="work per Python UDF call")
    parser.add_argument("--show-plans", action="store_true", help="print every physical plan")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--data-root", type=Path, default=DATA)
    parser.add_argument("--output", type=Path, default=RESULTS)
    return parser.parse_args(argv)


def _select(raw: str, known: list[str]) -> list[str]:
    if raw.strip() == "none":
        return []
    wanted = [q.strip() for q in raw.split(",") if q.strip()]
    if not wanted:
        return known
    picked = [k for k in known if any(k == w or k.startswith(w + "_") for w in wanted)]
    unknown = [w for w in wanted if not any(k == w or k.startswith(w + "_") for k in known)]
    if unknown:
        raise SystemExit(f"unknown {unknown}; known: {', '.join(known)}")
    return picked


def summarize(queries: dict[str, dict[str, Any]], workload: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Geometric means, worst ratios, noise and the issue's targets (None where nothing was measured)."""

    def stats(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
        d = {q: r["d_over_c"] for q, r in rows.items() if r["d_over_c"] is not None}
        noise = [abs(math.log(r["c2_over_c"])) for r in rows.values() if r["c2_over_c"]]
        return {
            "geomean_d_over_c": geomean(d.values()),
            "worst_d_over_c": max(d.items(), key=lambda kv: kv[1]) if d else None,
            "geomean_b_over_c": geomean(r["b_over_c"] for r in rows.values()),
            "geomean_c2_over_c": geomean(r["c2_over_c"] for r in rows.values()),
            "c2_over_c_spread": math.exp(max(noise)) - 1 if noise else None,
            "measured": len(d),
        }

    t, w = stats(queries), stats(workload)
    mismatches = sorted(q for q, r in {**queries, **workload}.items() if r["results_agree"] is False)
    noise = 1 + (w["c2_over_c_spread"] or 0.0)
    targets = {
        "tpch_geomean_d_over_c_at_most_1": None
        if t["geomean_d_over_c"] is None
        else t["geomean_d_over_c"] <= TPCH_GEOMEAN,
        "tpch_no_query_above_1_10": None if t["worst_d_over_c"] is None else t["worst_d_over_c"][1] <= TPCH_WORST,
        "workload_geomean_d_over_c_at_most_0_3": None
        if w["geomean_d_over_c"] is None
        else w["geomean_d_over_c"] <= WORKLOAD_GEOMEAN,
        "workload_no_query_slower_than_c": None if w["worst_d_over_c"] is None else w["worst_d_over_c"][1] <= noise,
        "zero_mismatches": not mismatches,
    }
    return {"tpch_summary": t, "workload_summary": w, "mismatches": mismatches, "targets": targets}


def main(argv: Sequence[str] | None = None, spark: SparkSession | None = None) -> dict[str, Any]:
    """Run the benchmark; ``spark``: an existing session to borrow (a new session on its context is used,
    so its temporary views, settings and UDFs stay untouched)."""
    args = parse_args(argv)
    names = _select(args.queries, QUERIES)
    work = _select(args.workload, [q.name for q in WORKLOAD])
    data = ensure_data(args.scale, args.data_root)
    session = (spark or make_spark(args.master)).newSession()
    session.conf.set("spark.sql.maxMetadataStringLength", "100000")  # printed plans: PushedFilters in full
    for table in TABLES:
        session.read.parquet(str(data / table)).createOrReplaceTempView(table)
    if work:
        session.read.parquet(str(ensure_doc_table(session, data))).createOrReplaceTempView("orders_doc")
        register_functions(session, args.udf_loops)
    print(
        f"TPC-H sf{args.scale:g} from {data}; Spark {session.version}, {session.sparkContext.master}, "
        f"{session.conf.get('spark.sql.shuffle.partitions')} shuffle partitions, {os.cpu_count()} CPUs; "
        f"{len(names)} queries + {len(work)} workload queries, median of {args.runs} warm runs, "
        f"timeout {args.timeout:g}s"
    )
    print(
        "times in seconds; A = original without Catalyst pushdown, B = our plan under A's settings, "
        "C (and C2) = original under Spark's defaults, D = the runner from Spark's defaults\n"
    )
    started = time.perf_counter()
    cache = AnswerCache()
    queries = run_tpch(session, cache, names, args.runs, args.timeout, args.show_plans)
    workload = run_workload(session, cache, work, args.runs, args.timeout)
    outcome = summarize(queries, workload)
    verdict = {True: "met", False: "MISSED", None: "not measured"}
    for part, rows in (("TPC-H", outcome["tpch_summary"]), ("workload", outcome["workload_summary"])):
        worst = rows["worst_d_over_c"]
        print(
            f"\n{part}: geomean D/C {_fmt(rows['geomean_d_over_c'])} over {rows['measured']} queries, worst "
            f"{worst[0] + ' ' + _fmt(worst[1]) if worst else '-'}; geomean B/C {_fmt(rows['geomean_b_over_c'])}; "
            f"noise: geomean C2/C {_fmt(rows['geomean_c2_over_c'])}, widest C2/C spread "
            f"{_fmt(rows['c2_over_c_spread'], '.1%') if rows['c2_over_c_spread'] is not None else '-'}"
        )
    for target, met in outcome["targets"].items():
        print(f"target {target}: {verdict[met]}")
    print(f"elapsed {time.perf_counter() - started:.0f}s")

    result = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "spark": session.version,
            "master": session.sparkContext.master,
            "shuffle_partitions": session.conf.get("spark.sql.shuffle.partitions"),
            "driver_memory": session.sparkContext.getConf().get("spark.driver.memory", "default"),
        },
        "scale": args.scale,
        "runs": args.runs,
        "timeout_s": args.timeout,
        "udf_loops": args.udf_loops,
        "excluded_rules_in_a_and_b": EXCLUDED_RULES,
        "queries": queries,
        "workload": workload,
        **outcome,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, default=str))
    print(f"wrote {args.output}")
    return result


if __name__ == "__main__":
    sys.exit(1 if main()["mismatches"] else 0)
