"""Learning from what ran: a recurring TPC-H pipeline on local Spark, estimates before and after feedback.

    python bench/feedback.py [--scale 1] [--runs 10] [--sample-rows 2000] [--master local[2]] [--output FILE]

TPC-H at ``--scale`` (tpchgen-cli Parquet in ``bench/.data/tpch-sf<scale>/``, shared with bench/spark_e2e.py) is
analyzed by the service's own analyze job with a ``--sample-rows`` sample per table. A pipeline of WORKLOAD
queries, each a task, then runs ``--runs`` times through the service and the runner with feedback
(``pushdown_client.feedback.runner.run_and_report``: the answer's Spark SQL into Spark's ``noop`` sink, the counts read
from Spark's status store and posted to ``/feedback/{request_id}``). Each predicate defeats the sample in its own
way: correlated dates too rare for the sample to see together (so the estimate multiplies marginals), LIKE over
text the sample barely sees, a rare tail of a skewed price; ``shifting`` tasks move their literal every run, as a
daily pipeline does, so feedback comes from the task's previous run (same template), not the same predicate.

Per run and task: the scan's estimated rows against the true rows (``SELECT count(*)`` of the same predicate,
counted independently), the q-error and the estimate's source; the decisions and which changed from run 1 (the
run before any feedback); the query's time and the feedback's: what held the caller up (the listener wait and
copying the plan graphs out of the JVM) and what the background thread did (mapping and the POST).
Summary: p95 and median q-error of run 1 (sample) and of runs 2.. (feedback), decisions that changed, median
query time before and after, and feedback's cost as a share of the query's time (target < 5 %).

Writes bench/results/feedback.json (or ``--output``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from service.feedback.use_case import q_error  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "feedback.json"
PIPELINE = "tpch_feedback"

#: task -> (table, predicate template with {day} for the run's shift, query template, shifting)
WORKLOAD: dict[str, tuple[str, str, str, bool]] = {
    "early_shipments": (
        "lineitem",
        "l_shipdate < DATE '1992-02-01' AND l_receiptdate < DATE '1992-02-10'",
        "SELECT l_returnflag, count(*) AS n, sum(l_quantity) AS q FROM lineitem WHERE {p} GROUP BY l_returnflag",
        False,
    ),
    "daily_early_shipments": (
        "lineitem",
        "l_shipdate < DATE '1992-02-{day:02d}' AND l_receiptdate < DATE '1992-02-{day10:02d}'",
        "SELECT l_linestatus, count(*) AS n FROM lineitem WHERE {p} GROUP BY l_linestatus",
        True,
    ),
    "complaint_orders": (
        "orders",
        "o_comment LIKE '%unusual%deposits%'",
        "SELECT c_mktsegment, count(*) AS n FROM customer JOIN orders ON c_custkey = o_custkey "
        "WHERE {p} GROUP BY c_mktsegment",
        False,
    ),
    "big_orders": (
        "orders",
        "o_totalprice > 450000 AND o_orderpriority = '1-URGENT'",
        "SELECT o_orderstatus, count(*) AS n FROM orders WHERE {p} GROUP BY o_orderstatus",
        False,
    ),
    "forest_parts": (
        "part",
        "p_name LIKE 'forest%' AND p_size > 45",
        "SELECT p_brand, count(*) AS n FROM part JOIN partsupp ON p_partkey = ps_partkey WHERE {p} GROUP BY p_brand",
        False,
    ),
}
TABLES = ("lineitem", "orders", "customer", "part", "partsupp")


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"{name}_for_feedback", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def predicate_for(task: str, run: int) -> str:
    _, template, _, shifting = WORKLOAD[task]
    day = 2 + run if shifting else 1
    return template.format(day=day, day10=day + 9)


def scan_of(answer: dict[str, Any], table: str) -> dict[str, Any] | None:
    """The answer's scan of ``table`` that carries filters (where the predicate landed)."""
    stack = [answer["plan"]]
    while stack:
        node = stack.pop()
        if node.get("op") == "scan" and node.get("table") == table and node.get("filters"):
            return node
        stack.extend(node[k] for k in ("input", "left", "right") if k in node)
        stack.extend(node.get("inputs") or [])
    return None


def run_pipeline(
    spark: Any, http: Any, runs: int, catalog: dict[str, Any], resolved: dict[str, Any]
) -> list[dict[str, Any]]:
    """``catalog`` as requests send it (refs); ``resolved``: with the statistics, which vouch for NULL-free keys."""
    from pushdown_client.feedback.runner import run_and_report

    for task, (_, _, query, _) in WORKLOAD.items():  # warm-up, untimed: the first run is not paying for JIT
        spark.sql(query.format(p=predicate_for(task, 0))).write.format("noop").mode("overwrite").save()

    def send(request_id: str, body: dict[str, Any]) -> Any:
        response = http.post(f"/feedback/{request_id}", json=body)
        response.raise_for_status()
        return response.json()

    truths: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    for run in range(runs):
        for task, (table, _, query, _) in WORKLOAD.items():
            predicate = predicate_for(task, run)
            context = {"pipeline": PIPELINE, "task": task, "run": f"run-{run + 1:02d}"}
            answer = http.post(
                "/optimize",
                json={"sql": query.format(p=predicate), "catalog": catalog, "context": context, "detail": "full"},
            )
            answer.raise_for_status()
            answer = answer.json()
            if predicate not in truths:
                truths[predicate] = spark.sql(f"SELECT count(*) FROM {table} WHERE {predicate}").collect()[0][0]
            _, report = run_and_report(
                spark,
                answer,
                send,
                catalog=resolved,
                action=lambda frame: frame.write.format("noop").mode("overwrite").save(),
            )
            sent = report.result()  # the next task's answer may learn from this run: wait for the send
            scan = scan_of(answer, table)
            estimated = next(
                (n["rows_out"] for n in answer["cost"]["after"]["nodes"] if scan and n["id"] == scan["id"]), None
            )
            learned = (answer.get("feedback") or {}).get("conjunctions") or []
            sources = sorted({e["source"] for e in answer["estimates"]} | ({"feedback"} if learned else set()))
            rows.append(
                {
                    "run": run + 1,
                    "task": task,
                    "predicate": predicate,
                    "estimated_rows": estimated,
                    "true_rows": truths[predicate],
                    "q_error": q_error(estimated, truths[predicate]),
                    "sources": sources,
                    "decisions": {f"{d['predicate']} @ {d['operator']}": d["action"] for d in answer["decisions"]},
                    "changed_by_feedback": [
                        f"{d['predicate']} @ {d['operator']}: {d['without_feedback']} -> {d['action']}"
                        for d in answer["decisions"]
                        if d.get("changed_by_feedback")
                    ],
                    "query_s": round(report.query_s, 4),
                    "feedback_blocking_s": round(report.blocking_s, 4),
                    "feedback_background_s": round(sent.work_s, 4),
                    "mapped": len(sent.actual.nodes),
                    "unmapped": sent.actual.unmapped,
                }
            )
            print(
                f"run {run + 1:2d} {task:24s} est {estimated if estimated is None else round(estimated):>10} "
                f"true {truths[predicate]:>9} q {rows[-1]['q_error']!s:>9} {','.join(rows[-1]['sources']):16s} "
                f"query {report.query_s:6.2f}s feedback {report.blocking_s * 1000:5.1f}ms "
                f"(+{sent.work_s * 1000:.1f}ms in the background)",
                flush=True,
            )
    return rows


def p95(values: list[float]) -> float | None:
    """Nearest-rank 95th percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    first = [r for r in rows if r["run"] == 1]
    later = [r for r in rows if r["run"] > 1]
    before_q = [r["q_error"] for r in first if r["q_error"] is not None]
    after_q = [r["q_error"] for r in later if r["q_error"] is not None]
    decisions_changed = sorted({f"{r['task']}: {c}" for r in later for c in r["changed_by_feedback"]})
    per_task_time = {
        task: {
            "run1_s": next(r["query_s"] for r in first if r["task"] == task),
            "later_median_s": statistics.median([r["query_s"] for r in later if r["task"] == task]) if later else None,
        }
        for task in WORKLOAD
    }
    timed = [r for r in rows if r["query_s"] > 0]
    blocking = [r["feedback_blocking_s"] / r["query_s"] for r in timed]
    total = [(r["feedback_blocking_s"] + r["feedback_background_s"]) / r["query_s"] for r in timed]
    return {
        "before_feedback": {
            "p95_q_error": p95(before_q),
            "median_q_error": statistics.median(before_q) if before_q else None,
        },
        "after_feedback": {
            "p95_q_error": p95(after_q),
            "median_q_error": statistics.median(after_q) if after_q else None,
        },
        "target_p95_after": 1.1,
        "decisions_changed": decisions_changed,
        "query_time": per_task_time,
        "feedback_cost_share": {
            "what": "feedback's time / the query's time, per run: what held the caller up (listener wait, copying "
            "the plan graphs out of the JVM), and that plus the background thread's mapping and POST",
            "target": 0.05,
            "median": statistics.median(blocking) if blocking else None,
            "p95": p95(blocking),
            "max": max(blocking, default=None),
            "with_background_median": statistics.median(total) if total else None,
            "with_background_max": max(total, default=None),
        },
    }


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """The app on uvicorn in a thread, on a free local port: the runner talks HTTP as it would to a deployment."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, name="feedback-bench-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the service did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def main(argv: list[str] | None = None, spark: Any = None) -> dict[str, Any]:
    """Run the bench; ``spark``: a session to use instead of a new one (the smoke test's shared session)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--sample-rows", type=int, default=2000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--data-root", type=Path, default=None, help="where TPC-H Parquet lives (default bench/.data)")
    args = parser.parse_args(argv)
    if args.runs < 2:
        parser.error("--runs must be at least 2 (one run before feedback, one after)")

    import httpx

    from api.app import create_app
    from service.analyze import AnalyzeRequest, analyze_and_store
    from service.settings import Settings
    from service.statistics import resolve_catalog

    e2e = _load("spark_e2e")
    data = e2e.ensure_data(args.scale, args.data_root or e2e.DATA)
    spark = spark or e2e.make_spark(args.master)
    for table in TABLES:
        spark.read.parquet(str(data / table)).createOrReplaceTempView(table)
    workdir = Path(tempfile.mkdtemp(prefix="pushdown-feedback-bench-"))
    settings = Settings(data_dir=workdir, database_url=None, api_token=None)
    app = create_app(settings)
    analyze_started = time.perf_counter()
    for table in TABLES:
        request = AnalyzeRequest(name=table, path=str(data / table), sample_rows=args.sample_rows)
        analyze_and_store(spark, request, app.state.optimizer.store)
    analyze_s = time.perf_counter() - analyze_started
    catalog = {"tables": {table: {"ref": table} for table in TABLES}}
    resolved, _ = resolve_catalog(catalog, app.state.optimizer.store)
    with serving(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        rows = run_pipeline(spark, http, args.runs, catalog, resolved or {})
    app.state.history.close()
    result = {
        "bench": "feedback",
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version()},
        "settings": {"scale": args.scale, "runs": args.runs, "sample_rows": args.sample_rows, "master": args.master},
        "analyze_s": round(analyze_s, 2),
        "summary": summarize(rows),
        "rows": rows,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["summary"], indent=2))
    return result


if __name__ == "__main__":
    main()
