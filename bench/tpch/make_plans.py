"""Write bench/tpch/plans/qNN.json from queries/qNN.sql.

Benchmarks load these wire plans directly, so they need neither sqlglot nor
this adapter at run time. Re-run after changing a query or the adapter:

    python -m bench.tpch.make_plans
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from service.sql import sql_to_plan  # noqa: E402


def main() -> int:
    """Convert every query; report each file written."""
    catalog = json.loads((HERE / "catalog.json").read_text())
    out_dir = HERE / "plans"
    out_dir.mkdir(exist_ok=True)
    for path in sorted((HERE / "queries").glob("q*.sql")):
        plan = sql_to_plan(path.read_text(), catalog, "spark")
        target = out_dir / f"{path.stem}.json"
        target.write_text(json.dumps(plan, indent=2) + "\n")
        print(f"wrote {target.relative_to(HERE.parents[1])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
