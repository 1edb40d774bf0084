"""The corpus, timed: each query of tests/corpus as written (C) and as the service answers it (D), on local Spark
over generated Parquet data, with C again (C2) for noise; and on DuckDB, the original against the answer's
engine-neutral ``sql``.

    python bench/corpus_spark.py [--scale 1] [--seed 7] [--form stats] [--runs 3] [--only h02 g_comma]
                                 [--timeout 300] [--run-as-written] [--no-duckdb] [--duckdb-scale 1]
                                 [--output PATH]

Data: ``tests/corpus/schema.py``'s seeded generator at ``--scale`` (1 = about 370,000 fact rows; NULL keys and
measures, repeated rows, skewed items, customers and days), written once with pyarrow as Parquet under
``bench/.data/corpus-sf<scale>-s<seed>/`` (git-ignored), fact tables partitioned by their sold-date key, and
declared as tables of a database of their own (``corpus_bench``) in one local session (``local[2]``, 4 shuffle
partitions, Spark's defaults otherwise, adaptive execution on as a user runs it).

Per query the service is asked once (in this process, tests/corpus/check.py's request in the ``--form``
statistics form), outside the timed runs. Then, round-robin, C, D (the answer's ``spark.sql`` under its
``spark.conf``) and C2 each run ``--runs`` times after one untimed warm-up that collects the rows compared; each
timed run writes the whole result to Spark's ``noop`` sink. An answer ``as_written`` is the original query
itself: it is not run again unless ``--run-as-written`` (D/C is then 1 by definition, reported as such).
DuckDB (in memory, the same generator at ``--duckdb-scale``, default 1: its runs take milliseconds at Spark's small
scales): the original (transpiled from Spark SQL by sqlglot, outside the timing), the answer's ``sql`` (the same
way) and the original again for noise, round-robin, medians of ``--runs`` (at least 5) after a warm-up, same rows
checked. Before the first timed run the first five queries
are collected once, untimed (the JVM's JIT and the file listings).

Writes bench/results/corpus_spark.json (or ``--output``) and prints a table: per query D/C, C2/C, DuckDB's
answer/original, and the geometric means. The issue's bar: no D/C above 1.2 beyond the noise C2/C shows, and on
DuckDB the answer within 1.2x of the original.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.spark_e2e import make_spark  # noqa: E402
from bench.spark_measure import Timeout, multiset, run_action, timed_noop  # noqa: E402
from service.spark_runner import session_settings  # noqa: E402
from tests.corpus import schema  # noqa: E402
from tests.corpus.check import (  # noqa: E402
    FORMS,
    Query,
    Service,
    duckdb_connection,
    duckdb_rows,
    load_corpus,
    register_udfs,
    request,
)

DATABASE = "corpus_bench"
RESULTS = ROOT / "bench" / "results" / "corpus_spark.json"
#: DuckDB's runs take milliseconds: at least this many per side
DUCKDB_RUNS = 5
#: queries collected untimed before the first timed run (the JVM's JIT and the file listings warm up)
WARM_UP = 5


def write_data(scale: float, seed: int) -> Path:
    """The generated tables as Parquet (facts partitioned by sold date), once per scale and seed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = ROOT / "bench" / ".data" / f"corpus-sf{scale:g}-s{seed}"
    if (target / "_done").exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    types = {"int": pa.int32(), "bigint": pa.int64(), "string": pa.string(), "date": pa.date32()}
    data = schema.generate(scale, seed)
    for name, cols in schema.TABLES.items():
        fields = []
        for col, spark_type in cols:
            if spark_type.startswith("decimal"):
                precision, places = (int(x) for x in spark_type[8:-1].split(","))
                fields.append(pa.field(col, pa.decimal128(precision, places)))
            else:
                fields.append(pa.field(col, types[spark_type]))
        rows = data[name]
        table = pa.table({c: [r[i] for r in rows] for i, (c, _) in enumerate(cols)}, schema=pa.schema(fields))
        if name in schema.PARTITIONS:
            pq.write_to_dataset(
                table, str(target / name), partition_cols=[schema.PARTITIONS[name]], max_partitions=4096
            )
        else:
            (target / name).mkdir(parents=True)
            pq.write_table(table, str(target / name / "part-0.parquet"))
    (target / "_done").write_text("")
    return target


def declare_tables(spark: Any, data: Path) -> None:
    spark.sql(f"DROP DATABASE IF EXISTS {DATABASE} CASCADE")
    spark.sql(f"CREATE DATABASE {DATABASE}")
    spark.sql(f"USE {DATABASE}")
    for name in schema.TABLES:
        spark.sql(schema.spark_ddl(name, (data / name).as_uri()))
    register_udfs(spark)


def _median(times: list[float]) -> float | None:
    return statistics.median(times) if times else None


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def spark_times(spark: Any, query: Query, answer: dict[str, Any], runs: int, timeout: float, run_same: bool) -> dict:
    """C, D and C2 round-robin; rows compared on the warm-up."""
    target = answer.get("spark") or {}
    d_sql, conf = target.get("sql", ""), target.get("conf") or {}
    same = bool(target.get("as_written")) and d_sql == query.sql and not conf
    out: dict[str, Any] = {"as_written": bool(target.get("as_written")), "barriers": len(target.get("barriers", []))}
    configs: dict[str, tuple[str, dict[str, str]]] = {"C": (query.sql, {}), "C2": (query.sql, {})}
    if not same or run_same:
        configs["D"] = (d_sql, conf)
    rows: dict[str, Any] = {}
    times: dict[str, list[float]] = {k: [] for k in configs}
    failed: dict[str, str] = {}
    for key, (sql, settings) in configs.items():
        try:
            with session_settings(spark, settings):
                rows[key] = multiset(run_action(spark, spark.sql(sql).collect, timeout))
        except Timeout:
            failed[key] = "timeout"
        except Exception as exc:
            failed[key] = str(exc).strip().splitlines()[0][:200]
    for _ in range(runs):
        for key, (sql, settings) in configs.items():
            if key in failed:
                continue
            try:
                with session_settings(spark, settings):
                    times[key].append(timed_noop(spark, sql, timeout))
            except Timeout:
                failed[key] = "timeout"
    med = {k: _median(v) for k, v in times.items()}
    out.update({f"{k.lower()}_s": None if v is None else round(v, 4) for k, v in med.items()})
    out["rows"] = len(rows["C"]) if "C" in rows else None
    out["rows_agree"] = rows.get("D", rows.get("C")) == rows.get("C") if "C" in rows else None
    out["d_over_c"] = ratio(med.get("D"), med["C"]) if "D" in configs else 1.0
    out["c2_over_c"] = ratio(med["C2"], med["C"])
    if failed:
        out["failed"] = failed
    return out


def duckdb_times(con: Any, query: Query, answer: dict[str, Any], runs: int) -> dict[str, Any]:
    sql = answer.get("sql_portable", answer.get("sql"))  # the engine-neutral rewrite: no Spark barriers
    if not sql:
        return {"error": "no sql in the answer"}
    try:
        original, rewritten = duckdb_rows(con, query.sql), duckdb_rows(con, sql)
    except Exception as exc:
        return {"error": str(exc).strip().splitlines()[0][:200]}
    t_orig: list[float] = []
    t_new: list[float] = []
    t_again: list[float] = []
    for _ in range(max(runs, DUCKDB_RUNS)):
        t_orig.append(duckdb_rows(con, query.sql)[2])
        t_new.append(duckdb_rows(con, sql)[2])
        t_again.append(duckdb_rows(con, query.sql)[2])
    a, b, c = _median(t_orig), _median(t_new), _median(t_again)
    return {
        "original_s": round(a or 0, 5),
        "answer_s": round(b or 0, 5),
        "answer_over_original": ratio(b, a),
        "original_again_over_original": ratio(c, a),
        "rows_agree": original[1] == rewritten[1],
        # an unnamed expression takes Spark's name in the answer (``count(1)``) where DuckDB names the original its
        # own way (``count_star()``): listed, not counted as a row difference (tests/corpus/check.py accepts either)
        "names": None
        if [c.lower() for c in original[0]] == [c.lower() for c in rewritten[0]]
        else {"original": original[0], "answer": rewritten[0]},
    }


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v]
    return round(math.exp(sum(math.log(v) for v in values) / len(values)), 3) if values else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--form", choices=FORMS, default="stats")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--only", nargs="*", help="query names (prefixes)")
    parser.add_argument("--run-as-written", action="store_true", help="time D also when the answer is as written")
    parser.add_argument("--no-duckdb", action="store_true")
    parser.add_argument(
        "--duckdb-scale", type=float, default=1.0, help="DuckDB's data (in memory, generated apart): default 1"
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    queries = [q for q in load_corpus() if not args.only or any(q.name.startswith(p) for p in args.only)]
    started = time.perf_counter()
    data = write_data(args.scale, args.seed)
    print(f"data: {data} ({time.perf_counter() - started:.1f} s)")
    spark = make_spark()
    declare_tables(spark, data)
    con = None if args.no_duckdb else duckdb_connection(args.duckdb_scale, args.seed)
    service = Service()
    for query in queries[:WARM_UP]:
        spark.sql(query.sql).collect()
    results: dict[str, Any] = {}
    print(f"{'query':44} {'D/C':>6} {'C2/C':>6} {'C s':>8} {'D s':>8} {'duck':>6}  note")
    for query in queries:
        entry: dict[str, Any] = {}
        start = time.perf_counter()
        try:
            answer = service.optimize(request(query, args.form))
        except Exception as exc:
            entry["refused"] = str(exc)[:300]
            results[query.name] = entry
            print(f"{query.name:44} refused: {entry['refused'][:60]}")
            continue
        entry["service_s"] = round(time.perf_counter() - start, 4)
        entry["savings_vs_baseline"] = (answer.get("cost") or {}).get("savings_vs_baseline")
        entry["spark"] = spark_times(spark, query, answer, args.runs, args.timeout, args.run_as_written)
        if con is not None:
            entry["duckdb"] = duckdb_times(con, query, answer, args.runs)
        results[query.name] = entry
        s, dk = entry["spark"], entry.get("duckdb", {})
        note = ("as written " if s["as_written"] else "") + ("ROWS DIFFER " if s["rows_agree"] is False else "")
        note += " ".join(f"{k}:{v}" for k, v in s.get("failed", {}).items())
        print(
            f"{query.name:44} {s['d_over_c'] or '-':>6} {s['c2_over_c'] or '-':>6} {s.get('c_s') or '-':>8} "
            f"{s.get('d_s') or '-':>8} {dk.get('answer_over_original') or '-':>6}  {note}"
        )
    spark_entries = [e["spark"] for e in results.values() if "spark" in e]
    duck_entries = [e["duckdb"] for e in results.values() if "answer_over_original" in e.get("duckdb", {})]
    rewritten = [s for s in spark_entries if "d_s" in s]
    summary = {
        "queries": len(queries),
        "answers": len(spark_entries),
        "as_written": sum(1 for s in spark_entries if s["as_written"]),
        "timed_d": len(rewritten),
        "geomean_d_over_c": geomean([s["d_over_c"] for s in rewritten]),
        "max_d_over_c": max((s["d_over_c"] or 0 for s in rewritten), default=None),
        "d_over_c_above_1_2": sorted(n for n, e in results.items() if (e.get("spark") or {}).get("d_over_c", 0) > 1.2),
        "geomean_c2_over_c": geomean([s["c2_over_c"] for s in spark_entries]),
        "rows_differ": sorted(n for n, e in results.items() if (e.get("spark") or {}).get("rows_agree") is False),
        "priced_above_baseline": sorted(n for n, e in results.items() if (e.get("savings_vs_baseline") or 0) < 0),
        "duckdb_geomean_answer_over_original": geomean([d["answer_over_original"] for d in duck_entries]),
        "duckdb_geomean_noise": geomean([d["original_again_over_original"] for d in duck_entries]),
        "duckdb_above_1_2": sorted(
            n for n, e in results.items() if ((e.get("duckdb") or {}).get("answer_over_original") or 0) > 1.2
        ),
        "duckdb_rows_differ": sorted(
            n for n, e in results.items() if (e.get("duckdb") or {}).get("rows_agree") is False
        ),
        "duckdb_names_differ": {
            n: e["duckdb"]["names"] for n, e in results.items() if (e.get("duckdb") or {}).get("names")
        },
        "seconds": round(time.perf_counter() - started, 1),
    }
    report = {
        "scale": args.scale,
        "duckdb_scale": args.duckdb_scale,
        "seed": args.seed,
        "form": args.form,
        "runs": args.runs,
        "spark_settings": "local[2], 4 shuffle partitions, adaptive execution on (Spark's default)",
        "summary": summary,
        "queries": results,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=1, sort_keys=False, default=str) + "\n")
    print(json.dumps(summary, indent=1))
    print(f"wrote {args.output}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
