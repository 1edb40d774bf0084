"""The runner's own cost on one TPC-H query that runs as written: C (the SQL, Spark's defaults) against D (the
runner: analysis, the service's answer, the write), alternating C, D then D, C for ``--runs`` pairs.

    python bench/spark_runner_overhead.py --query q20 --runs 15 --data-root bench/.data

bench/spark_e2e.py takes medians of 5 runs over 22 queries; a short query's single D/C there moves by +-30 %.
This repeats one query many times, so a fixed overhead of the runner shows apart from the noise. Prints and
writes bench/results/spark_runner_overhead-<query>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.spark_e2e import CATALOG, DATA, TABLES, AnswerCache, ensure_data, make_spark, runner  # noqa: E402
from bench.spark_measure import timed_noop  # noqa: E402


def main() -> dict[str, object]:
    parser = argparse.ArgumentParser()
    parser.add_argument("--query", default="q20")
    parser.add_argument("--runs", type=int, default=15, help="alternating (C, D) pairs")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--data-root", type=Path, default=DATA)
    args = parser.parse_args()
    spark = make_spark("local[2]").newSession()
    data = ensure_data(args.scale, args.data_root)
    for table in TABLES:
        spark.read.parquet(str(data / table)).createOrReplaceTempView(table)
    sql = (ROOT / "bench" / "tpch" / "queries" / f"{args.query}.sql").read_text()
    build = runner(AnswerCache(), sql, CATALOG, None)

    def noop(writer: object) -> None:
        writer.format("noop").mode("overwrite").save()  # type: ignore[attr-defined]

    for _ in range(3):  # warm-up
        timed_noop(spark, sql, 120)
        build(spark).write(noop)
    c: list[float] = []
    d: list[float] = []
    d_runner: list[float] = []
    for i in range(args.runs):
        for config in ("C", "D") if i % 2 == 0 else ("D", "C"):
            if config == "C":
                c.append(timed_noop(spark, sql, 120))
                continue
            start = time.perf_counter()
            run = build(spark)
            asked = time.perf_counter()
            run.write(noop)
            d.append(time.perf_counter() - start)
            d_runner.append(asked - start)
    med = statistics.median
    out: dict[str, object] = {
        "query": args.query,
        "scale": args.scale,
        "pairs": args.runs,
        "spark": spark.version,
        "median_c_s": round(med(c), 4),
        "median_d_s": round(med(d), 4),
        "d_over_c": round(med(d) / med(c), 4),
        "median_runner_before_the_action_s": round(med(d_runner), 4),
        "c_runs_s": [round(x, 4) for x in c],
        "d_runs_s": [round(x, 4) for x in d],
    }
    print(json.dumps(out, indent=1))
    path = ROOT / "bench" / "results" / f"spark_runner_overhead-{args.query}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
