"""The engine's work in CPU instructions per TPC-H optimization, counted under valgrind (callgrind).

    python bench/engine_instructions.py [--engine DIR ...] [--path engine|plan|plan_full|sql] [--rounds 2]
        [--results PATH]

This VM's speed drifts by up to 2x within seconds, so two builds timed minutes apart compare two machines, and
a 5% change drowns in the drift. An instruction count does not drift: ``optimize_wire`` runs over the 22 TPC-H
plans ``rounds + 1`` times and once, each under callgrind, and the difference divided by ``rounds x 22`` is the
instructions one optimization costs (start-up and warm-up cancel out). Each ``--engine DIR`` (an unpacked
wheel or another checkout, as for the other benchmarks; none: this checkout) is counted in turn, so a change
is measured as ``before`` and ``after`` builds side by side. Instructions are not time (cache misses and branch
mispredictions are not counted), but the engine's time follows them within a few percent here. The count
repeats from run to run within a few thousand instructions (a few millionths), the whole request's too: the hash
seed is fixed, and the numerical libraries' thread pools are held to one thread (OpenBLAS's idle workers spin,
and their instructions, counted with the process's, moved a request's count by up to 5%). Each call runs once
before the count, then the collector collects and freezes what exists, as a served process does once started:
counted from a cold start (before 2026-11-28), the modules a first SQL request imports stayed in the young
generations for a while, and their walks added up to 7% to a SQL request's count (q15: 16.1M against 15.0M).

``--path`` says what one optimization is: ``engine`` (the default) is ``costmodel.optimize_wire`` alone; ``plan``
and ``sql`` are the service's whole request, bytes in and the answer's bytes out (``OptimizeService.answer``,
no cache), with the TPC-H plan or query: the figures ``plan`` and ``sql`` of bench/optimize_latency.py, where the
service's own Python and the SQL adapter count too; ``plan_full`` is ``plan`` with the full answer made as well
(as with the history on: ``plan_full`` of bench/optimize_latency.py). For these, give ``--engine`` an unpacked
wheel's whole directory (its ``service`` and ``api`` come with it, so two builds compare the service as well as
the engine).

Needs ``valgrind`` on the PATH. Writes bench/results/engine_instructions.json (``-plan``, ``-sql`` for those paths).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "engine_instructions.json"
TPCH = ROOT / "bench" / "tpch"

#: What makes a count repeat: a fixed hash seed (set and dict orders), and numerical libraries held to one thread
#: (numpy's OpenBLAS starts a worker per core whose spinning callgrind counts with the process's instructions).
STEADY = {"PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

#: What one optimization is (``--path``).
PATHS = ("engine", "plan", "plan_full", "sql")

#: What runs under callgrind: ``rounds`` rounds over the TPC-H plans (or queries) of ``optimize_wire`` (with the
#: baseline, as the service asks) or of the service's whole request, with the packages from the directory given
#: (or this checkout), the collector as the server's.
_RUN = r"""
import gc, json, sys
from pathlib import Path
engine, rounds, tpch, path, first = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], int(sys.argv[5])
if engine:
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("__editable__")]
    sys.path.insert(0, engine)
import costmodel
from service.collector import tune_collector
catalog = json.loads((tpch / "catalog.json").read_text())
plans = [json.loads(p.read_text()) for p in sorted((tpch / "plans").glob("q*.json"))][:first]
if path == "engine":
    calls = [lambda plan=plan: costmodel.optimize_wire(plan, catalog, baseline=True) for plan in plans]
else:
    try:
        from service.request import parse_ordinary_request
    except ImportError:  # checkouts before 2026-11-28 (c071ab2 and earlier) kept the request schema in api/
        from api.models import parse_ordinary_request
    from service.optimize import OptimizeService
    service = OptimizeService()
    queries = [p.read_text() for p in sorted((tpch / "queries").glob("q*.sql"))][:first]
    bodies = [{"sql": sql} for sql in queries] if path == "sql" else [{"plan": plan} for plan in plans]
    raws = [json.dumps({**body, "catalog": catalog}).encode() for body in bodies]
    made = {"full": True} if path == "plan_full" else {}  # builds before 2026-11-27 have no such argument
    calls = [
        lambda raw=raw: service.answer(parse_ordinary_request(raw, 2500), use_cache=False, **made).payload
        for raw in raws
    ]
for call in calls:  # warm, then collected and frozen: what a served process (and optimize_latency.py) measures
    call()
gc.collect()
tune_collector()
for _ in range(rounds):
    for call in calls:
        call()
print(Path(costmodel.__file__).parent)
"""

_COLLECTED = re.compile(r"Collected : (\d+)")


def count(engine: str, rounds: int, path: str = "engine", plans: int = 22) -> tuple[int, str]:
    """Instructions of a process running ``rounds`` rounds of the first ``plans`` TPC-H plans (or queries), and
    the directory the engine was imported from."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", _RUN]
        + [engine, str(rounds), str(TPCH), path, str(plans)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **STEADY},
    )
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind reported no count: {done.stderr[-500:]}")
    return int(found.group(1)), done.stdout.strip().splitlines()[-1]


def per_optimization(engine: str, rounds: int, plans: int, path: str = "engine") -> dict[str, object]:
    """Instructions per optimization for ``engine``: (``rounds + 1`` rounds minus one round) / (rounds x plans)."""
    one, source = count(engine, 1, path, plans)
    more, _ = count(engine, rounds + 1, path, plans)
    return {"engine": engine or "checkout", "from": source, "instructions": (more - one) // (rounds * plans)}


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", action="append", metavar="DIR", help="an engine to count (repeatable)")
    parser.add_argument("--path", choices=PATHS, default="engine", help="what one optimization is (default engine)")
    parser.add_argument("--plans", type=int, default=22, help="the first N TPC-H plans or queries (default all 22)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the 22 plans counted (default 2)")
    parser.add_argument("--results", type=Path, help="default: bench/results/engine_instructions[-PATH].json")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        out("valgrind is not installed: nothing to count")
        return 2
    plans = min(args.plans, len(list((TPCH / "plans").glob("q*.json"))))
    engines = args.engine or [""]
    rows = [per_optimization(str(Path(e).resolve()) if e else "", args.rounds, plans, args.path) for e in engines]
    first = rows[0]["instructions"]
    assert isinstance(first, int)
    for row in rows:
        instructions = row["instructions"]
        assert isinstance(instructions, int)
        share = instructions / first
        what = "optimization" if args.path == "engine" else f"{args.path} request"
        out(f"{row['engine']} ({row['from']}): {instructions:,} instructions per {what} ({share:.3f})")
    machine = {"python": platform.python_version()}
    result = {"machine": machine, "path": args.path, "rounds": args.rounds, "plans": plans, "engines": rows}
    target = args.results or (RESULTS if args.path == "engine" else RESULTS.with_stem(f"{RESULTS.stem}-{args.path}"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
