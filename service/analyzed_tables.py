"""Tables by name: a request may use tables the service has analyzed without describing them in its catalog.

``/optimize`` finds the tables a request reads (SQL ``FROM``, plan scans, Substrait named
tables); each one its catalog does not describe is looked up among the analyzed tables
and added as a ``{"ref": name}`` entry, so the catalog's own tables and analyzed ones mix.
The answer lists every stored statistic it used (``statistics``) and warns when a
table's source files changed since the analysis (their fingerprint differs).

Names match as Spark's do, case-insensitively. A namespace is optional: ``sales.orders``
matches the table analyzed as ``sales.orders``; a bare ``orders`` matches ``orders``, or
the one ``<namespace>.orders`` when exactly one exists (two are ambiguous: a 422).

Example::

    >>> tables_in_plan({"op": "filter", "input": {"op": "scan", "table": "t"}})
    ['t']
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from service.errors import InputError

if TYPE_CHECKING:
    from service.statistics import StatisticsStore, StoredTable


def tables_in_plan(plan: Any) -> list[str]:
    """Table names of every scan in a wire plan (or a Substrait plan's named tables), in order, once each.

    >>> tables_in_plan({"op": "join", "left": {"op": "scan", "table": "a"}, "right": {"op": "scan", "table": "a"}})
    ['a']
    """
    found: dict[str, None] = {}
    stack = [plan]
    while stack:  # iterative: plans may be thousands of levels deep
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("op") == "scan" and isinstance(node.get("table"), str):
                found.setdefault(node["table"])
            named = node.get("namedTable")
            if isinstance(named, dict) and isinstance(named.get("names"), list):
                found.setdefault(".".join(str(n) for n in named["names"]))
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return list(found)


def read_sql_tables(sql: str, dialect: str) -> tuple[list[str], Any]:
    """The tables a query reads (CTE names excluded) and the query as the SQL adapter parsed it, which
    ``sql_to_plan(parsed=...)`` translates without parsing the text again; ``([], None)`` when it does not parse
    (the adapter then says why).

    >>> read_sql_tables("WITH x AS (SELECT * FROM sales.orders) SELECT * FROM x JOIN items USING (id)", "spark")[0]
    ['items', 'sales.orders']
    """
    try:
        from sqlglot import exp

        from service.sql.errors import SqlError
        from service.sql.parse import parse_query
        from service.sql.work import translating
    except ImportError:  # SQL support is optional
        return [], None
    try:
        with translating():  # as the adapter parses: nesting checked first, the collector paused
            stmt = parse_query(sql, dialect)
    except SqlError:
        return [], None
    found: dict[str, None] = {}
    ctes = {cte.alias_or_name.lower() for cte in stmt.find_all(exp.CTE)}
    for table in stmt.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue  # a table function, not a name
        if not table.db and table.name.lower() in ctes:
            continue
        found.setdefault(".".join(part.name for part in table.parts))
    return list(found), stmt


def described(name: str, catalog: dict[str, Any] | None) -> bool:
    """Whether the request's catalog has the table, matched as the SQL adapter matches: full name, then bare."""
    tables = catalog.get("tables") if isinstance(catalog, dict) else None
    if not isinstance(tables, dict):
        return False
    keys = {str(key).lower() for key in tables}
    return name.lower() in keys or name.rsplit(".", 1)[-1].lower() in keys


def find_analyzed(name: str, analyzed: Iterable[str]) -> str | None:
    """The analyzed table a query's name means, or None; 422 when a bare name matches several namespaces.

    >>> find_analyzed("ORDERS", ["sales.orders", "items"])
    'sales.orders'
    >>> find_analyzed("sales.orders", ["orders"]) is None
    True
    """
    by_lower = {stored.lower(): stored for stored in analyzed}
    exact = by_lower.get(name.lower())
    if exact is not None or "." in name:
        return exact
    candidates = sorted(stored for lower, stored in by_lower.items() if lower.rsplit(".", 1)[-1] == name.lower())
    if len(candidates) > 1:
        raise InputError(
            "ambiguous_table",
            f"table {name} matches several analyzed tables: {', '.join(candidates)}; name one with its namespace",
            "$",
            {"table": name, "candidates": candidates},
        )
    return candidates[0] if candidates else None


def add_analyzed_tables(
    catalog: dict[str, Any] | None, names: list[str], store: StatisticsStore | None, bare_keys: bool = False
) -> dict[str, Any] | None:
    """The catalog plus a ``{"ref": stored name}`` entry for each named table it lacks and the store has.

    ``bare_keys``: key entries by the name without its namespace, as the SQL adapter looks tables up (a
    query reading two namespaces' tables of the same name is then refused). A catalog that describes every
    table comes back unchanged, and then the store is not read.
    """
    missing = [name for name in names if not described(name, catalog)]
    if not missing or store is None:
        return catalog
    analyzed = store.names()
    refs: dict[str, dict[str, str]] = {}
    for name in missing:
        stored = find_analyzed(name, analyzed)
        if stored is None:
            continue
        key = name.rsplit(".", 1)[-1] if bare_keys else name
        if refs.get(key, {"ref": stored})["ref"] != stored:
            raise InputError(
                "ambiguous_table",
                f"the query reads {refs[key]['ref']} and {stored}; tables of the same name in two namespaces "
                "are not supported in one query",
                "$.sql",
                {"table": key, "candidates": sorted((refs[key]["ref"], stored))},
            )
        refs[key] = {"ref": stored}
    if not refs:
        return catalog
    base: dict[str, Any] = catalog if isinstance(catalog, dict) else {}
    given = base.get("tables")
    tables: dict[str, Any] = given if isinstance(given, dict) else {}
    return {**base, "tables": {**tables, **refs}}


# ---------------------------------------------------------------- what the answer says it used


def used_statistics(query_name: str, stored: StoredTable, by: str) -> dict[str, Any]:
    """One entry of the answer's ``statistics``: which analysis the engine read for a table, and whether its
    source changed since (``None`` when that cannot be checked from here, e.g. object storage)."""
    stats = stored.stats
    recorded = stats.get("fingerprint")
    current = source_fingerprint(stats.get("source") or {}) if recorded else None
    return {
        "table": query_name,
        "analyzed_table": stored.name,
        "resolved_by": by,
        "version": stored.version,
        "analyzed_at": stored.created_at,
        "row_count": stats.get("row_count"),
        "sample_rows": (stats.get("sample") or {}).get("rows"),
        "source": stats.get("source"),
        "fingerprint": recorded,
        "source_changed": None if recorded is None or current is None else current["digest"] != recorded["digest"],
    }


def change_warning(entry: dict[str, Any]) -> str | None:
    """The warning for a table whose source files changed after it was analyzed."""
    if not entry["source_changed"]:
        return None
    return (
        f"table {entry['table']}: its source files changed since it was analyzed at {entry['analyzed_at']} "
        f"(version {entry['version']}); for current statistics re-analyze it: {reanalyze_advice(entry)}"
    )


def reanalyze_advice(entry: dict[str, Any]) -> str:
    """The command that re-analyzes the table from where it was read (an absolute path, so it works from any
    directory), and the HTTP call, which reads only under the service's data roots.

    >>> reanalyze_advice({"analyzed_table": "orders", "source": {"path": "/data/o", "format": "csv"}})[:52]
    'pushdown analyze /data/o --name orders --format csv '
    """
    name = entry["analyzed_table"]
    source = entry.get("source") or {}
    path, fmt = source.get("path"), source.get("format") or "parquet"
    if not isinstance(path, str):
        return f"POST /tables/{name}/analyze"
    flag = "" if fmt == "parquet" else f" --format {fmt}"
    body = json.dumps({"path": path, **({} if fmt == "parquet" else {"format": fmt})})
    return (
        f"pushdown analyze {shlex.quote(path)} --name {name}{flag} "
        f"(or POST /tables/{name}/analyze with {body} when that path is under PUSHDOWN_DATA_ROOTS)"
    )


# ---------------------------------------------------------------- source fingerprints


def _local_root(source: dict[str, Any]) -> Path | None:
    path = source.get("path")
    if not isinstance(path, str):
        return None  # a Spark catalog table: its files are Spark's to find
    parsed = urlparse(path)
    if parsed.scheme not in ("", "file"):
        return None
    return Path(unquote(parsed.path) if parsed.scheme else path)


def _data_files(root: Path) -> list[Path]:
    """The files Spark reads under ``root``: names starting with ``_`` or ``.`` are metadata, skipped as Spark does."""
    if root.is_file():
        return [root]
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        files += [Path(folder) / n for n in sorted(names) if not n.startswith(("_", "."))]
    return files


def source_fingerprint(source: dict[str, Any]) -> dict[str, Any] | None:
    """Size and modification time of every data file of a local source, hashed; None when not local.

    Any file added, removed, rewritten or touched changes the digest (a source that is gone has no files).
    Reading it costs one ``stat`` per file.
    """
    root = _local_root(source)
    if root is None:
        return None
    if not root.exists():
        return {"files": 0, "bytes": 0, "digest": hashlib.sha256().hexdigest()}
    digest = hashlib.sha256()
    total = 0
    files = _data_files(root)
    for file in files:
        info = file.stat()
        total += info.st_size
        relative = file.relative_to(root).as_posix() if file != root else file.name
        digest.update(f"{relative}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return {"files": len(files), "bytes": total, "digest": digest.hexdigest()}
