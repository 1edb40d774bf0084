"""The SQL round-trip campaign at bench size: generated Spark SQL through the adapter, the engine and back.

    python bench/sql_roundtrip.py [--queries 5000] [--seed 1] [--quick]

The same check as tests/roundtrip (see tests/roundtrip/check.py), on many more queries: each goes SQL -> plan ->
SQL -> plan (no field lost or invented), through the engine's wire round trip, and is run on DuckDB as written,
as rendered and as optimized in ``always`` and ``cost`` modes (rows, column names and types). Prints and writes
bench/results/sql_roundtrip.json: queries, time per query, the queries with a problem (the first ones in full),
and how often each kind and field was generated. ``--quick`` runs 200 queries.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.roundtrip.facts import missing, required_facts  # noqa: E402
from tests.roundtrip.schema import connect  # noqa: E402
from tests.roundtrip.test_sql_plan_sql import check_all, generated  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "sql_roundtrip.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="200 queries")
    args = parser.parse_args()
    count = 200 if args.quick else args.queries
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    started = time.perf_counter()
    checked = check_all(generated(count, args.seed), connect())
    seconds = time.perf_counter() - started
    facts = sum((c.facts for c in checked), Counter())
    engine = sum((c.engine_facts for c in checked), Counter())
    bad = [c for c in checked if c.problems]
    result = {
        "queries": count,
        "seed": args.seed,
        "seconds": round(seconds, 1),
        "ms_per_query": round(1000 * seconds / max(count, 1), 1),
        "with_problems": len(bad),
        "problems": [{"sql": c.sql, "problems": c.problems} for c in bad[:20]],
        "not_generated": [list(f) for f in missing(required_facts(), facts)],
        "facts": {" ".join(f).strip(): n for f, n in sorted(facts.items())},
        "scan_filters_placed_by_the_engine": engine[("scan", "filters", "")],
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{count} queries in {seconds:.1f} s ({result['ms_per_query']} ms each), {len(bad)} with problems")
    print(f"not generated: {result['not_generated'] or 'nothing'}")
    for c in bad[:3]:
        print("\n" + c.sql + "\n" + "\n".join(f"  - {p}" for p in c.problems))
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
