"""Engine scaling: time per plan node from 10 to 10,000 nodes, per plan shape, and the log-log slope.

Builds wire plans in-process (a flat OR chain in one filter, a flat AND chain,
a left-deep join chain with a filter above each join, a UNION ALL of filtered
branches, a deep chain of projects and filters) and answers each through
``OptimizeService.optimize``, the function ``POST /optimize`` calls. A plan's
size is its node count: plan nodes plus expression nodes. The slope of
log(time) against log(size) is 1.0 for linear work (issue 19's target: at most
1.2 from 10 to 10,000 nodes). Writes bench/results/scaling.json and the
log-log plot docs/scaling.svg.

    python bench/scaling.py [--quick] [--shapes or_chain,join_chain] [--clock wall|cpu]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from costmodel import optimize_wire  # noqa: E402
from service.optimize import OptimizeInput, OptimizeService  # noqa: E402

SIZES = (10, 30, 100, 300, 1_000, 3_000, 10_000)
QUICK_SIZES = (10, 30, 100, 300, 1_000)
#: Slope target of issue 19 (time against size, log-log, from the smallest to the largest size).
TARGET_SLOPE = 1.2
Plan = dict[str, Any]


def _column(name: str) -> dict[str, Any]:
    return {"name": name, "type": "int"}


def _table(columns: list[str], rows: int = 100_000) -> dict[str, Any]:
    stats = {c: {"ndv": 1000, "min": 0, "max": 10_000, "null_count": 0} for c in columns}
    return {"columns": [_column(c) for c in columns], "row_count": rows, "column_stats": stats}


def _cmp(fn: str, col: str, value: int) -> dict[str, Any]:
    return {"fn": fn, "args": [{"col": col}, {"lit": value, "type": "int"}]}


def _scan(table: str = "t") -> Plan:
    return {"op": "scan", "table": table}


ONE_TABLE = {"tables": {"t": _table(["a", "b", "c"])}}


def or_chain(size: int) -> tuple[Plan, dict[str, Any]]:
    """One filter whose predicate is ``a = 0 OR a = 1 OR ...`` (3 expression nodes per term)."""
    terms = [_cmp("=", "a", i) for i in range(max(2, size // 3))]
    return {"op": "filter", "predicate": {"fn": "or", "args": terms}, "input": _scan()}, ONE_TABLE


def and_chain(size: int) -> tuple[Plan, dict[str, Any]]:
    """One filter over a projection whose predicate is ``a <> 0 AND b <> 1 AND ...``: each conjunct is placed."""
    cols = ["a", "b", "c"]
    terms = [_cmp("!=", cols[i % 3], i) for i in range(max(2, size // 3))]
    project = {"op": "project", "exprs": [{"expr": {"col": c}, "as": c} for c in cols], "input": _scan()}
    return {"op": "filter", "predicate": {"fn": "and", "args": terms}, "input": project}, ONE_TABLE


def join_chain(size: int) -> tuple[Plan, dict[str, Any]]:
    """``((t0 ⋈ t1) ⋈ t2) ...``, a filter on the newest table above each join (13 nodes per join)."""
    joins = max(1, size // 13)
    tables = {f"t{i}": _table(["k", "v"], rows=1000 + 10 * i) for i in range(joins + 1)}
    plan: Plan = _scan("t0")
    for i in range(1, joins + 1):
        on = {"fn": "=", "args": [{"col": f"t{i - 1}.k"}, {"col": f"t{i}.k"}]}
        join = {"op": "join", "type": "inner", "on": on, "left": plan, "right": _scan(f"t{i}")}
        plan = {"op": "filter", "predicate": _cmp(">", f"t{i}.v", i), "input": join}
    return plan, {"tables": tables}


def union_branches(size: int) -> tuple[Plan, dict[str, Any]]:
    """A filter above a UNION ALL of filtered scans (5 nodes per branch)."""
    branches = [{"op": "filter", "predicate": _cmp(">", "a", i), "input": _scan()} for i in range(max(2, size // 5))]
    union = {"op": "union", "all": True, "inputs": branches}
    return {"op": "filter", "predicate": _cmp("<", "a", 5000), "input": union}, ONE_TABLE


def deep_chain(size: int) -> tuple[Plan, dict[str, Any]]:
    """Projects and filters stacked alternately (10 nodes per pair): a deep, narrow plan. Each project draws
    ``r = rand()`` and the filter above reads it, so each predicate stays where it is (a nondeterministic column)
    and the answer stays linear in size; a predicate that travels the whole depth is logged at every operator it
    passes, which makes the answer itself quadratic for a chain of pushed filters."""
    plan: Plan = _scan()
    for _ in range(max(1, size // 10)):
        exprs = [
            {"expr": {"col": "a"}, "as": "a"},
            {"expr": {"col": "b"}, "as": "b"},
            {"expr": {"fn": "rand", "args": []}, "as": "r"},
        ]
        plan = {"op": "project", "exprs": exprs, "input": plan}
        plan = {"op": "filter", "predicate": {"fn": ">", "args": [{"col": "r"}, {"lit": 0.5}]}, "input": plan}
    return plan, ONE_TABLE


SHAPES: dict[str, Callable[[int], tuple[Plan, dict[str, Any]]]] = {
    "or_chain": or_chain,
    "and_chain": and_chain,
    "join_chain": join_chain,
    "union_branches": union_branches,
    "deep_chain": deep_chain,
}


def node_count(value: Any) -> int:
    """Plan nodes and expression nodes in a wire plan (objects with op, fn, col, lit or subquery)."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            count += any(k in item for k in ("op", "fn", "col", "lit", "subquery"))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


#: The clock timed: wall time (``perf_counter``, the figure on a quiet machine) or this process's CPU time
#: (``process_time``: on a machine shared with other work, wall time measures the others too).
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}


def time_one(answer: Callable[[], object], budget_s: float, clock: str = "wall") -> tuple[float, str]:
    """Best time of a few runs of ``answer`` within ``budget_s`` (one run at least), and the outcome."""
    best, spent, outcome = math.inf, 0.0, "ok"
    now = CLOCKS[clock]
    while spent < budget_s or best == math.inf:
        start = now()
        try:
            answer()
        except Exception as exc:  # reported, not hidden: a size the engine refuses or fails on
            outcome = f"{type(exc).__name__}: {str(exc)[:120]}"
        elapsed = now() - start
        best, spent = min(best, elapsed), spent + elapsed
        if outcome != "ok" or elapsed > budget_s / 3:
            break
    return best, outcome


def slope(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(time) against log(size)."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else None


def answerer(stage: str, plan: Plan, catalog: dict[str, Any]) -> Callable[[], object]:
    """The call timed: the engine alone (``costmodel.optimize_wire``) or the whole use case of POST /optimize."""
    if stage == "engine":
        return lambda: optimize_wire(plan, catalog)
    service = OptimizeService()
    return lambda: service.optimize(OptimizeInput(plan=plan, catalog=catalog))


def run(shapes: list[str], sizes: tuple[int, ...], budget_s: float, stage: str, clock: str = "wall") -> dict[str, Any]:
    results: dict[str, Any] = {}
    warm_plan, warm_catalog = SHAPES["or_chain"](10)
    time_one(answerer(stage, warm_plan, warm_catalog), 0.0, clock)  # imports and first-call costs out of the figures
    for name in shapes:
        rows: list[dict[str, Any]] = []
        for size in sizes:
            plan, catalog = SHAPES[name](size)
            nodes = node_count(plan)
            seconds, outcome = time_one(answerer(stage, plan, catalog), budget_s, clock)
            row = {"target": size, "nodes": nodes, "seconds": round(seconds, 6), "outcome": outcome}
            row["us_per_node"] = round(seconds / nodes * 1e6, 2)
            rows.append(row)
            print(
                f"{stage:7} {name:15} {nodes:>7} nodes {seconds * 1000:>10.1f} ms "
                f"{row['us_per_node']:>8} us/node  {outcome}"
            )
        ok = [(r["nodes"], r["seconds"]) for r in rows if r["outcome"] == "ok"]
        fitted = slope(ok)
        results[name] = {
            "doc": (SHAPES[name].__doc__ or "").strip(),
            "sizes": rows,
            "slope": None if fitted is None else round(fitted, 3),
            "meets_target": fitted is not None and fitted <= TARGET_SLOPE and len(ok) == len(rows),
        }
        print(f"{stage:7} {name:15} slope {results[name]['slope']}")
    return results


COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def plot_svg(results: dict[str, Any], title: str) -> str:
    """A log-log plot of seconds against nodes, one line per shape, with a slope-1 reference line."""
    width, height, left, right, top, bottom = 720, 460, 70, 190, 40, 50
    pts = [(r["nodes"], r["seconds"]) for s in results.values() for r in s["sizes"] if r["outcome"] == "ok"]
    if not pts:
        return ""
    lx0, lx1 = math.floor(math.log10(min(n for n, _ in pts))), math.ceil(math.log10(max(n for n, _ in pts)))
    ly0, ly1 = math.floor(math.log10(min(t for _, t in pts))), math.ceil(math.log10(max(t for _, t in pts)))
    lx1, ly1 = max(lx1, lx0 + 1), max(ly1, ly0 + 1)

    def x(n: float) -> float:
        return left + (math.log10(n) - lx0) / (lx1 - lx0) * (width - left - right)

    def y(t: float) -> float:
        return height - bottom - (math.log10(t) - ly0) / (ly1 - ly0) * (height - top - bottom)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        'font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="14">{title}</text>',
    ]
    for e in range(lx0, lx1 + 1):
        out.append(f'<line x1="{x(10**e):.1f}" y1="{top}" x2="{x(10**e):.1f}" y2="{height - bottom}" stroke="#ddd"/>')
        out.append(f'<text x="{x(10**e):.1f}" y="{height - bottom + 18}" text-anchor="middle">10^{e}</text>')
    for e in range(ly0, ly1 + 1):
        out.append(f'<line x1="{left}" y1="{y(10**e):.1f}" x2="{width - right}" y2="{y(10**e):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(10**e) + 4:.1f}" text-anchor="end">10^{e} s</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">plan nodes</text>')
    # slope-1 reference through the smallest point of the first shape
    n0, t0 = min(pts)
    n1 = 10**lx1
    out.append(
        f'<line x1="{x(n0):.1f}" y1="{y(t0):.1f}" x2="{x(n1):.1f}" y2="{y(t0 * n1 / n0):.1f}" stroke="#999" '
        'stroke-dasharray="5,4"/>'
    )
    legend_y = top + 10
    for i, (name, shape) in enumerate(results.items()):
        colour = COLOURS[i % len(COLOURS)]
        line = [(r["nodes"], r["seconds"]) for r in shape["sizes"] if r["outcome"] == "ok"]
        if line:
            path = " ".join(f"{x(n):.1f},{y(t):.1f}" for n, t in line)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
            out.extend(f'<circle cx="{x(n):.1f}" cy="{y(t):.1f}" r="3" fill="{colour}"/>' for n, t in line)
        lx = width - right + 12
        out.append(
            f'<line x1="{lx}" y1="{legend_y}" x2="{lx + 20}" y2="{legend_y}" stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text x="{lx + 26}" y="{legend_y + 4}">{name} ({shape["slope"]})</text>')
        legend_y += 20
    out.append(
        f'<line x1="{width - right + 12}" y1="{legend_y}" x2="{width - right + 32}" y2="{legend_y}" '
        'stroke="#999" stroke-dasharray="5,4"/>'
    )
    out.append(f'<text x="{width - right + 38}" y="{legend_y + 4}">slope 1</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="sizes up to 1,000 nodes (a check, not the figure)")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes to run")
    parser.add_argument(
        "--stage",
        choices=("engine", "service", "both"),
        default="both",
        help="time the engine alone (costmodel.optimize_wire), the whole POST /optimize use case, or both",
    )
    parser.add_argument("--budget", type=float, default=1.0, help="seconds spent per size (best of the runs)")
    parser.add_argument(
        "--clock",
        choices=tuple(CLOCKS),
        default="wall",
        help="wall time (a quiet machine's figure) or this process's CPU time (a machine busy with other work)",
    )
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "scaling.json"))
    parser.add_argument("--plot", default=str(ROOT / "docs" / "scaling.svg"))
    args = parser.parse_args()
    sizes = QUICK_SIZES if args.quick else SIZES
    shapes = [s for s in args.shapes.split(",") if s]
    stages = ("engine", "service") if args.stage == "both" else (args.stage,)
    results = {stage: run(shapes, sizes, args.budget, stage, args.clock) for stage in stages}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    report = {
        "what": (
            "in-process, best of runs per size: 'engine' is costmodel.optimize_wire (wire plan in, answer out), "
            "'service' is OptimizeService.optimize, the function POST /optimize calls (adds the baseline run, "
            "the summary and the Spark SQL rendering)"
        ),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "settings": {
            "sizes": list(sizes),
            "budget_s": args.budget,
            "quick": args.quick,
            "clock": args.clock,
            "load_avg_1m": load,
        },
        "target_slope": TARGET_SLOPE,
        "recursion_limit": sys.getrecursionlimit(),
        "stages": results,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    plotted = results.get("engine") or results[stages[0]]
    title = f"Engine {args.clock} time against plan size, log-log (load {load:.1f}, {os.cpu_count()} cores)"
    svg = plot_svg(plotted, title)
    if svg:
        Path(args.plot).write_text(svg)
    print(f"wrote {args.out} and {args.plot}")


if __name__ == "__main__":
    main()
