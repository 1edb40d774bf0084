"""Row-group pruning on TPC-H lineitem: ours against the ideal, min/max's limit, pyarrow and DataFusion.

    python bench/pruning.py [--scale 1] [--row-groups 64] [--cache-dir bench/.data] [--results FILE]

Data: lineitem from ``tpchgen-cli`` (generated once into the cache dir), written
as two Parquet files of about ``--row-groups`` row groups with statistics: one
sorted by l_shipdate, one unsorted (as generated, i.e. in l_orderkey order).

Per predicate (20 of them, written once as wire expressions and rendered to SQL
and to pyarrow expressions from there) and per file, it counts the row groups

  * ideal:   holding no matching row, by a full count (DuckDB, checked against pyarrow compute);
  * minmax:  that min/max/null-count statistics alone can exclude: the predicate, in disjunctive
             normal form, has no satisfying point inside the row group's [min, max] box;
  * ours:    ``costmodel.pruning.prune`` over the row groups' metadata as Containers;
  * pyarrow: ``pyarrow.dataset`` fragment ``split_by_row_group(filter=...)``;
  * DataFusion: ``EXPLAIN ANALYZE``'s ``row_groups_pruned_statistics``;

and the row groups we prune WRONGLY (that hold a match: the run fails if any) or
miss (min/max-provable but kept). Target (issue 5): on the sorted file we prune
every min/max-provable row group, at least as many as DataFusion, none wrongly.
Writes bench/results/pruning.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from costmodel.catalog import ColumnStats, Container, catalog_from_wire  # noqa: E402
from costmodel.plan import Filter, Scan  # noqa: E402
from costmodel.pruning import prune  # noqa: E402
from costmodel.wire import plan_from_wire  # noqa: E402

DEFAULT_CACHE = ROOT / "bench" / ".data"
RESULTS = ROOT / "bench" / "results" / "pruning.json"
CATALOG = ROOT / "bench" / "tpch" / "catalog.json"
TIMING_REPEATS = 15


# ------------------------------------------------------------------ predicates (wire expressions)


def col(name: str) -> dict[str, Any]:
    return {"col": name}


def lit(value: Any) -> dict[str, Any]:
    return {"lit": value}


def day(iso: str) -> dict[str, Any]:
    return {"lit": iso, "type": "date"}


def fn(name: str, *args: dict[str, Any]) -> dict[str, Any]:
    return {"fn": name, "args": list(args)}


def cmp(op: str, column: str, value: dict[str, Any]) -> dict[str, Any]:
    return fn(op, col(column), value)


SHIP, QTY, DISC, PRICE = "l_shipdate", "l_quantity", "l_discount", "l_extendedprice"
FLAG, STATUS, MODE = "l_returnflag", "l_linestatus", "l_shipmode"

PREDICATES: list[tuple[str, dict[str, Any]]] = [
    ("ship_before_1992_03", cmp("<", SHIP, day("1992-03-01"))),
    ("ship_from_1998_09", cmp(">=", SHIP, day("1998-09-01"))),
    ("ship_eq_1995_06_17", cmp("=", SHIP, day("1995-06-17"))),
    ("ship_between_1994", fn("between", col(SHIP), day("1994-01-01"), day("1994-12-31"))),
    (
        "q6",
        fn(
            "and",
            cmp(">=", SHIP, day("1994-01-01")),
            cmp("<", SHIP, day("1995-01-01")),
            fn("between", col(DISC), lit(0.05), lit(0.07)),
            cmp("<", QTY, lit(24)),
        ),
    ),
    ("q1_ship_le_1998_09_02", cmp("<=", SHIP, day("1998-09-02"))),
    ("ship_in_3_days", fn("in", col(SHIP), day("1993-03-15"), day("1996-11-02"), day("1997-07-04"))),
    ("ship_after_max", cmp(">", SHIP, day("1998-12-01"))),
    ("ship_not_1993_to_1997", fn("not", fn("between", col(SHIP), day("1993-01-01"), day("1997-12-31")))),
    ("qty_eq_50", cmp("=", QTY, lit(50))),
    ("qty_gt_50", cmp(">", QTY, lit(50))),
    ("qty_eq_24_5", cmp("=", QTY, lit(24.5))),  # no such value: only the full count prunes
    ("price_lt_905", cmp("<", PRICE, lit(905))),
    ("flag_eq_R", cmp("=", FLAG, lit("R"))),
    ("status_eq_F", cmp("=", STATUS, lit("F"))),
    ("status_ne_O", cmp("!=", STATUS, lit("O"))),
    ("flag_N_and_status_O", fn("and", cmp("=", FLAG, lit("N")), cmp("=", STATUS, lit("O")))),
    (
        "mode_in_air_mail_and_1992",
        fn("and", fn("in", col(MODE), lit("AIR"), lit("MAIL")), cmp("<", SHIP, day("1992-06-01"))),
    ),
    ("ship_edges_or", fn("or", cmp("<", SHIP, day("1992-06-01")), cmp(">", SHIP, day("1998-06-01")))),
    (
        "or_of_conjunctions",
        fn(
            "or",
            fn("and", cmp("<", SHIP, day("1993-01-01")), cmp("=", FLAG, lit("A"))),
            fn("and", cmp(">", QTY, lit(49)), cmp(">=", SHIP, day("1998-01-01"))),
        ),
    ),
]
PREDICATE_COLUMNS = [SHIP, QTY, DISC, PRICE, FLAG, STATUS, MODE]


def columns_of(expr: dict[str, Any]) -> set[str]:
    if "col" in expr:
        return {expr["col"]}
    return set().union(*(columns_of(a) for a in expr.get("args", [])))


# ------------------------------------------------------------------ renderers: SQL and pyarrow


def to_sql(expr: dict[str, Any]) -> str:
    if "col" in expr:
        return expr["col"]
    if "lit" in expr:
        value = expr["lit"]
        if expr.get("type") == "date":
            return f"DATE '{value}'"
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'"
        return str(value)
    name, args = expr["fn"], [to_sql(a) for a in expr["args"]]
    if name in ("and", "or"):
        return "(" + f" {name.upper()} ".join(args) + ")"
    if name == "not":
        return f"(NOT {args[0]})"
    if name == "between":
        return f"({args[0]} BETWEEN {args[1]} AND {args[2]})"
    if name == "in":
        return f"({args[0]} IN ({', '.join(args[1:])}))"
    return f"({args[0]} {name} {args[1]})"


def _arrow_scalar(expr: dict[str, Any], typ: Any) -> Any:
    import pyarrow as pa

    value = expr["lit"]
    if pa.types.is_date(typ):
        return pa.scalar(dt.date.fromisoformat(value), typ)
    if pa.types.is_decimal(typ):
        return pa.scalar(Decimal(str(value)), typ)  # the column's own type: no cast of the column
    return pa.scalar(value, typ)


def to_arrow(expr: dict[str, Any], schema: Any) -> Any:
    """A pyarrow compute expression; literals take the type of the column they meet."""
    import pyarrow as pa
    import pyarrow.compute as pc

    name, args = expr["fn"], expr["args"]
    if name == "and":
        out = to_arrow(args[0], schema)
        for a in args[1:]:
            out = out & to_arrow(a, schema)
        return out
    if name == "or":
        out = to_arrow(args[0], schema)
        for a in args[1:]:
            out = out | to_arrow(a, schema)
        return out
    if name == "not":
        return ~to_arrow(args[0], schema)
    column = args[0]["col"]
    typ = schema.field(column).type
    field = pc.field(column)
    if name == "between":
        return (field >= _arrow_scalar(args[1], typ)) & (field <= _arrow_scalar(args[2], typ))
    if name == "in":
        return field.isin(pa.array([_arrow_scalar(a, typ).as_py() for a in args[1:]], typ))
    value = _arrow_scalar(args[1], typ)
    ops = {
        "=": field.__eq__,
        "!=": field.__ne__,
        "<": field.__lt__,
        "<=": field.__le__,
        ">": field.__gt__,
        ">=": field.__ge__,
    }
    return ops[name](value)


# ------------------------------------------------------------------ min/max-provable: DNF over the [min, max] box

# An interval: (lo, lo_closed, hi, hi_closed); None bounds are unbounded. A set is a list of intervals.
Interval = tuple[Any, bool, Any, bool]


def _atom_set(op: str, values: list[Any]) -> list[Interval]:
    v = values[0]
    return {
        "=": lambda: [(v, True, v, True)],
        "!=": lambda: [(None, False, v, False), (v, False, None, False)],
        "<": lambda: [(None, False, v, False)],
        "<=": lambda: [(None, False, v, True)],
        ">": lambda: [(v, False, None, False)],
        ">=": lambda: [(v, True, None, False)],
        "between": lambda: [(values[0], True, values[1], True)],
        "in": lambda: [(x, True, x, True) for x in values],
    }[op]()


def _negate(expr: dict[str, Any]) -> dict[str, Any]:
    """NOT pushed inward; for atoms over non-NULL values this is exact under three-valued logic."""
    name, args = expr["fn"], expr["args"]
    if name == "not":
        return args[0]
    if name in ("and", "or"):
        return fn("or" if name == "and" else "and", *[fn("not", a) for a in args])
    if name == "between":
        return fn("or", fn("<", args[0], args[1]), fn(">", args[0], args[2]))
    if name == "in":
        return fn("and", *[fn("!=", args[0], a) for a in args[1:]])
    flip = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
    return fn(flip[name], *args)


def dnf(expr: dict[str, Any]) -> list[list[tuple[str, str, list[Any]]]]:
    """Disjunction of conjunctions of atoms (column, op, literal values)."""
    name, args = expr["fn"], expr["args"]
    if name == "not":
        return dnf(_negate(args[0]))
    if name == "or":
        return [conj for a in args for conj in dnf(a)]
    if name == "and":
        out: list[list[tuple[str, str, list[Any]]]] = [[]]
        for a in args:
            out = [left + right for left in out for right in dnf(a)]
        return out
    return [[(args[0]["col"], name, [a["lit"] for a in args[1:]])]]


def _intersect(a: list[Interval], b: list[Interval]) -> list[Interval]:
    out = []
    for lo1, lc1, hi1, hc1 in a:
        for lo2, lc2, hi2, hc2 in b:
            if lo1 is None or (lo2 is not None and lo2 > lo1):
                lo, lc = lo2, lc2
            elif lo2 is None or lo1 > lo2:
                lo, lc = lo1, lc1
            else:
                lo, lc = lo1, lc1 and lc2
            if hi1 is None or (hi2 is not None and hi2 < hi1):
                hi, hc = hi2, hc2
            elif hi2 is None or hi1 < hi2:
                hi, hc = hi1, hc1
            else:
                hi, hc = hi1, hc1 and hc2
            if lo is None or hi is None or lo < hi or (lo == hi and lc and hc):
                out.append((lo, lc, hi, hc))
    return out


def minmax_can_match(conjunctions: list[list[tuple[str, str, list[Any]]]], container: Container) -> bool:
    """Whether some row inside the container's statistics box could satisfy the predicate.

    The domain is taken as dense (an open interval between two values is never empty), so this
    may keep a group a discrete type could exclude: it errs toward "can match".
    """
    for conj in conjunctions:
        sets: dict[str, list[Interval]] = {}
        for column, op, values in conj:
            if column not in sets:
                stats = container.column_stats.get(column)
                if stats is None or stats.min is None or stats.max is None:
                    all_null = (
                        stats is not None
                        and stats.null_count is not None
                        and container.row_count is not None
                        and stats.null_count >= container.row_count
                    )
                    sets[column] = [] if all_null else [(None, False, None, False)]
                else:
                    sets[column] = [(stats.min, True, stats.max, True)]
            if any(v is None for v in values) and op != "in":
                sets[column] = []
            else:
                sets[column] = _intersect(sets[column], _atom_set(op, [v for v in values if v is not None]))
        if all(sets.values()):
            return True
    return False


# ------------------------------------------------------------------ data


def _plain(value: Any) -> Any:
    """Statistics as our predicates compare them: dates as ISO strings, decimals as floats."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def generate(scale: float, row_groups: int, cache: Path) -> dict[str, Path]:
    """lineitem at ``scale`` (cached), written sorted and unsorted with ``row_groups`` row groups."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    base = cache / f"sf{scale:g}"
    files = {kind: base / f"lineitem_{row_groups}rg_{kind}.parquet" for kind in ("sorted", "unsorted")}
    if all(p.exists() for p in files.values()):
        return files
    base.mkdir(parents=True, exist_ok=True)
    ignore = cache / ".gitignore"  # the cache never goes to git
    if not ignore.exists():
        ignore.write_text("*\n")
    raw = base / "raw" / "lineitem.parquet"
    if not raw.exists():
        tmp = base / "raw.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(
            ["tpchgen-cli", "parquet", "-s", f"{scale:g}", "--tables", "lineitem", "--output-dir", str(tmp), "--quiet"],
            check=True,
        )
        (base / "raw").mkdir(exist_ok=True)
        os.replace(tmp / "lineitem.parquet", raw)
        shutil.rmtree(tmp, ignore_errors=True)
    table = pq.read_table(raw)
    # plain strings: every reader here handles them the same way
    schema = pa.schema(
        [pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type, f.nullable) for f in table.schema]
    )
    table = table.cast(schema)
    per_group = max(1, math.ceil(table.num_rows / row_groups))
    order = pc.sort_indices(table, [(SHIP, "ascending")])
    for kind, path in files.items():
        tmp_path = path.with_suffix(".tmp")
        with pq.ParquetWriter(tmp_path, schema, write_statistics=True) as writer:
            for start in range(0, table.num_rows, per_group):
                rows = order.slice(start, per_group) if kind == "sorted" else None
                chunk = table.slice(start, per_group) if rows is None else table.take(rows)
                writer.write_table(chunk, row_group_size=per_group)
        os.replace(tmp_path, path)
    return files


def containers_of(path: Path) -> tuple[Container, ...]:
    """Each row group's metadata as a Container (ids rg0, rg1, ...)."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    out = []
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        stats: dict[str, ColumnStats] = {}
        for j in range(group.num_columns):
            chunk = group.column(j)
            s = chunk.statistics
            if s is None:
                continue
            low, high = (_plain(s.min), _plain(s.max)) if s.has_min_max else (None, None)
            stats[chunk.path_in_schema] = ColumnStats(
                min=low, max=high, null_count=s.null_count if s.has_null_count else None
            )
        out.append(Container(f"rg{i}", group.num_rows, stats))
    return tuple(out)


def ideal_matches(path: Path) -> list[list[int]]:
    """Matching rows per predicate and row group: DuckDB counts, checked against pyarrow compute."""
    import duckdb
    import pyarrow.parquet as pq

    reader = pq.ParquetFile(path)
    schema = reader.schema_arrow
    con = duckdb.connect()
    counts = ", ".join(f"count(*) FILTER (WHERE {to_sql(p)})" for _, p in PREDICATES)
    exprs = [to_arrow(p, schema) for _, p in PREDICATES]
    out: list[list[int]] = [[] for _ in PREDICATES]
    for i in range(reader.metadata.num_row_groups):
        group = reader.read_row_group(i, columns=PREDICATE_COLUMNS)
        con.register("rg", group)
        duck = con.execute(f"SELECT {counts} FROM rg").fetchall()[0]
        con.unregister("rg")
        for k, expr in enumerate(exprs):
            arrow = group.filter(expr).num_rows
            if arrow != duck[k]:
                raise RuntimeError(f"{PREDICATES[k][0]} rg{i}: DuckDB counts {duck[k]}, pyarrow {arrow}")
            out[k].append(arrow)
    con.close()
    return out


# ------------------------------------------------------------------ ours and the peers


def bind(catalog: Any, predicate: dict[str, Any]) -> tuple[list[Any], dict[int, str]]:
    plan = plan_from_wire(
        {"op": "filter", "predicate": predicate, "input": {"op": "scan", "table": "lineitem"}}, catalog
    )
    assert isinstance(plan, Filter) and isinstance(plan.input, Scan)
    return [plan.predicate], {f.cid: f.name for f in plan.input.fields}


def timed_ms(func: Any, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        func()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(samples)


def pyarrow_kept(path: Path, predicate: dict[str, Any]) -> tuple[set[str], float]:
    import pyarrow.dataset as ds

    dataset = ds.dataset(path, format="parquet")
    fragment = next(iter(dataset.get_fragments()))
    fragment.ensure_complete_metadata()
    expr = to_arrow(predicate, dataset.schema)
    kept = fragment.split_by_row_group(filter=expr, schema=dataset.schema)
    ids = {f"rg{g.id}" for f in kept for g in f.row_groups}
    ms = timed_ms(lambda: fragment.split_by_row_group(filter=expr, schema=dataset.schema), 5)
    return ids, ms


_DF_METRIC = re.compile(r"row_groups_pruned_statistics=(\d+) total \u2192 (\d+) matched")
_DF_FILES = re.compile(r"files_ranges_pruned_statistics=(\d+) total \u2192 (\d+) matched")
_DF_OLD_PRUNED = re.compile(r"row_groups_pruned_statistics=(\d+)(?![\d ]*total)")


def datafusion_pruner(path: Path, total: int) -> Any:
    """A function predicate -> row groups DataFusion prunes by statistics (None when not installed)."""
    try:
        import datafusion
    except ImportError:
        return None
    config = (
        datafusion.SessionConfig()
        .with_target_partitions(1)
        .set("datafusion.execution.parquet.pruning", "true")
        # 0.05 as a decimal literal, as the column is: a float literal would cast the column
        .set("datafusion.sql_parser.parse_float_as_decimal", "true")
    )
    ctx = datafusion.SessionContext(config)
    ctx.register_parquet("t", str(path))

    def pruned(predicate: dict[str, Any]) -> int:
        batches = ctx.sql(f"EXPLAIN ANALYZE SELECT count(*) FROM t WHERE {to_sql(predicate)}").collect()
        text = "\n".join(str(v) for b in batches for v in b.column(b.schema.names.index("plan")).to_pylist())
        files = _DF_FILES.findall(text)
        if files and all(int(matched) == 0 for _, matched in files):
            return total  # the whole file was skipped on its statistics
        found = _DF_METRIC.findall(text)
        if found:
            return sum(int(t) - int(m) for t, m in found)
        old = _DF_OLD_PRUNED.findall(text)
        if old:
            return sum(int(v) for v in old)
        raise RuntimeError(f"no row_groups_pruned_statistics in DataFusion's EXPLAIN ANALYZE:\n{text}")

    return pruned


# ------------------------------------------------------------------ the run


def run_file(kind: str, path: Path, catalog: Any) -> dict[str, Any]:
    containers = containers_of(path)
    total = len(containers)
    ids = [c.id for c in containers]
    matches = ideal_matches(path)
    datafusion = datafusion_pruner(path, total)
    rows = []
    for k, (name, predicate) in enumerate(PREDICATES):
        predicates, names = bind(catalog, predicate)
        result = prune(predicates, containers, names)
        ours_ms = timed_ms(lambda p=predicates, n=names: prune(p, containers, n), TIMING_REPEATS)
        empty = {ids[i] for i in range(total) if matches[k][i] == 0}
        conjunctions = dnf(predicate)
        provable = {c.id for c in containers if not minmax_can_match(conjunctions, c)}
        if not provable <= empty:
            raise RuntimeError(f"{name}: min/max analysis excludes a row group with a match: {provable - empty}")
        pruned = set(result.pruned)
        arrow_kept, arrow_ms = pyarrow_kept(path, predicate)
        arrow_pruned = set(ids) - arrow_kept
        rows.append(
            {
                "predicate": name,
                "sql": to_sql(predicate),
                "row_groups": total,
                "matching_rows": sum(matches[k]),
                "ideal_pruned": len(empty),
                "minmax_provable": len(provable),
                "ours_pruned": len(pruned),
                "pyarrow_pruned": len(arrow_pruned),
                "datafusion_pruned": datafusion(predicate) if datafusion else None,
                "wrong": sorted(pruned - empty, key=ids.index),
                "missed_provable": sorted(provable - pruned, key=ids.index),
                "pyarrow_wrong": sorted(arrow_pruned - empty, key=ids.index),
                "ours_ms_p50": round(ours_ms, 4),
                "pyarrow_ms_p50": round(arrow_ms, 4),
            }
        )
    keys = ("row_groups", "ideal_pruned", "minmax_provable", "ours_pruned", "pyarrow_pruned")
    totals: dict[str, Any] = {key: sum(r[key] for r in rows) for key in keys}
    totals["datafusion_pruned"] = None if datafusion is None else sum(r["datafusion_pruned"] for r in rows)
    totals["wrong"] = sum(len(r["wrong"]) for r in rows)
    totals["missed_provable"] = sum(len(r["missed_provable"]) for r in rows)
    totals["ours_ms_p50_sum"] = round(sum(r["ours_ms_p50"] for r in rows), 3)
    totals["pyarrow_ms_p50_sum"] = round(sum(r["pyarrow_ms_p50"] for r in rows), 3)
    reproducers = [
        reproducer(r, containers, predicate)
        for r, (_, predicate) in zip(rows, PREDICATES, strict=True)
        if r["wrong"] or r["missed_provable"]
    ]
    return {
        "file": kind,
        "rows": sum(c.row_count or 0 for c in containers),
        "row_groups": total,
        "predicates": rows,
        "totals": totals,
        "reproducers": reproducers,
    }


def reproducer(row: dict[str, Any], containers: tuple[Container, ...], predicate: dict[str, Any]) -> dict[str, Any]:
    """The smallest case to hand over: one row group's statistics for the predicate's columns."""
    group = (row["wrong"] or row["missed_provable"])[0]
    container = next(c for c in containers if c.id == group)
    return {
        "kind": "wrong" if row["wrong"] else "missed_provable",
        "predicate": row["predicate"],
        "wire": predicate,
        "container": group,
        "row_count": container.row_count,
        "column_stats": {
            name: {
                "min": container.column_stats[name].min,
                "max": container.column_stats[name].max,
                "null_count": container.column_stats[name].null_count,
            }
            for name in sorted(columns_of(predicate))
            if name in container.column_stats
        },
    }


def print_file(report: dict[str, Any]) -> None:
    head = ("predicate", "rgs", "ideal", "minmax", "ours", "pyarrow", "datafus", "WRONG", "missed", "ours ms")
    print(f"\n{report['file']} file: {report['rows']:,} rows in {report['row_groups']} row groups")
    print(f"{head[0]:28}" + "".join(f"{h:>9}" for h in head[1:]))

    def cells(r: dict[str, Any], wrong: int, missed: int, ms: float) -> str:
        df = "-" if r["datafusion_pruned"] is None else r["datafusion_pruned"]
        values = (
            r["row_groups"],
            r["ideal_pruned"],
            r["minmax_provable"],
            r["ours_pruned"],
            r["pyarrow_pruned"],
            df,
            wrong,
            missed,
        )
        return "".join(f"{v:>9}" for v in values) + f"{ms:>9.3f}"

    for r in report["predicates"]:
        print(f"{r['predicate']:28}" + cells(r, len(r["wrong"]), len(r["missed_provable"]), r["ours_ms_p50"]))
    t = report["totals"]
    print(f"{'TOTAL':28}" + cells(t, t["wrong"], t["missed_provable"], t["ours_ms_p50_sum"]))
    if t["row_groups"]:
        share = {
            k: f"{t[k] / t['row_groups']:.1%}"
            for k in ("ideal_pruned", "minmax_provable", "ours_pruned", "pyarrow_pruned")
        }
        df = "-" if t["datafusion_pruned"] is None else f"{t['datafusion_pruned'] / t['row_groups']:.1%}"
        print(
            f"{'pruned fraction':28}{'':9}{share['ideal_pruned']:>9}{share['minmax_provable']:>9}"
            f"{share['ours_pruned']:>9}{share['pyarrow_pruned']:>9}{df:>9}"
        )


def verdict(files: dict[str, dict[str, Any]]) -> dict[str, Any]:
    sorted_rows = files["sorted"]["predicates"]
    wrong = sum(f["totals"]["wrong"] for f in files.values())
    missed = files["sorted"]["totals"]["missed_provable"]
    behind = [
        r["predicate"]
        for r in sorted_rows
        if r["datafusion_pruned"] is not None and r["ours_pruned"] < r["datafusion_pruned"]
    ]
    met = wrong == 0 and missed == 0 and not behind
    return {"met": met, "wrong": wrong, "missed_provable_sorted": missed, "behind_datafusion_sorted": behind}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    parser.add_argument("--row-groups", type=int, default=64, help="row groups per file (default 64)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    files = generate(args.scale, args.row_groups, args.cache_dir)
    prepared = time.perf_counter() - started
    lineitem = json.loads(CATALOG.read_text())["tables"]["lineitem"]
    catalog = catalog_from_wire({"tables": {"lineitem": {"columns": lineitem["columns"]}}})
    print(
        f"TPC-H lineitem SF{args.scale:g}, {len(PREDICATES)} predicates; data ready in {prepared:.1f} s "
        f"({args.cache_dir})"
    )
    reports = {kind: run_file(kind, path, catalog) for kind, path in files.items()}
    for report in reports.values():
        print_file(report)

    outcome = verdict(reports)
    for report in reports.values():
        for case in report["reproducers"]:
            print(
                f"\n{case['kind'].upper()} on the {report['file']} file: {case['predicate']} {case['container']}"
                f"\n  {json.dumps({k: case[k] for k in ('wire', 'row_count', 'column_stats')})}"
            )
    elapsed = time.perf_counter() - started
    print(
        f"\nour pruning: {reports['sorted']['totals']['ours_ms_p50_sum']} ms for {len(PREDICATES)} predicates "
        f"over {reports['sorted']['row_groups']} row groups (sum of per-predicate medians, sorted file); "
        f"pyarrow split_by_row_group: {reports['sorted']['totals']['pyarrow_ms_p50_sum']} ms"
    )
    print(
        f"target (sorted: every min/max-provable group pruned, >= DataFusion per predicate; zero wrong): "
        f"{'met' if outcome['met'] else 'MISSED'} (wrong {outcome['wrong']}, missed provable "
        f"{outcome['missed_provable_sorted']}, behind DataFusion {outcome['behind_datafusion_sorted'] or 'none'})"
    )
    print(f"run time {elapsed:.1f} s")

    import pyarrow

    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(
        json.dumps(
            {
                "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0], "pyarrow": pyarrow.__version__},
                "scale": args.scale,
                "row_groups": args.row_groups,
                "files": reports,
                "target": outcome,
                "run_time_s": round(elapsed, 1),
            },
            indent=2,
            default=str,
        )
    )
    print(f"wrote {args.results}")
    return 1 if outcome["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
