"""What the dashboard's overview shows of each optimization: the query (or a plan summary), its tables, and what
the request was made from (``origin``).

Built from the stored request and answer, so records written before this existed show it too.

Example::

    >>> overview({"sql": "SELECT a\\n  FROM t"}, {"explain": {"before": "Projection: a  [n1]\\n  TableScan: t  [n2]"}})
    {'query': 'SELECT a FROM t', 'tables': ['t'], 'origin': 'sql'}
"""

from __future__ import annotations

import re
from typing import Any

from pushdown_client.dataframe_plan import LEAF_PREFIX

#: Characters of query text in a row; the drill-down has all of it.
QUERY_CHARS = 240
_SCAN = re.compile(r"^\s*TableScan: (\S+)")
_KIND = re.compile(r"^(\s*)([^:\[]+?)(?::|\s+\[)")


def overview(request: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """``query``: the SQL on one line (shortened), else the plan's operators from the root; ``tables``: scans;
    ``origin``: ``origin_of``."""
    before = str((response.get("explain") or {}).get("before") or "")
    tables = sorted({hit.group(1) for line in before.splitlines() if (hit := _SCAN.match(line))})
    sql = request.get("sql")
    made_from = origin_of(request, tables)
    if isinstance(sql, str) and sql.strip():
        text = " ".join(sql.split())
        query = text if len(text) <= QUERY_CHARS else text[: QUERY_CHARS - 1] + "…"
    else:
        query = plan_summary(before, "dataframe" if made_from == "dataframe" else "plan")
    return {"query": query, "tables": tables, "origin": made_from}


def origin_of(request: dict[str, Any], tables: list[str]) -> str:
    """What the request was made from: its input form (``sql``, ``plan``, ``substrait``), or ``dataframe`` for a
    plan the client's DataFrame runner read from a PySpark DataFrame, whose every scan is one of the runner's leaves
    (tables named ``__pushdown_<label>_<n>``, docs/dataframe.md; names no caller uses).

    >>> origin_of({"plan": {}}, ["__pushdown_orders_1", "__pushdown_range_2"]), origin_of({"plan": {}}, ["orders"])
    ('dataframe', 'plan')
    """
    for form in ("sql", "substrait"):
        if request.get(form) is not None:
            return form
    dataframe = bool(tables) and all(table.lower().startswith(LEAF_PREFIX) for table in tables)
    return "dataframe" if dataframe else "plan"


def plan_summary(explain: str, kind: str = "plan") -> str:
    """The operators down the plan's first path, and how many scans it has: for plans sent without SQL (``kind``
    names what the plan was made from).

    >>> plan_summary("Limit: fetch=1  [n1]\\n  Inner Join: a = b  [n2]\\n    TableScan: x  [n3]\\n"
    ...              "    TableScan: y  [n4]")
    'plan: Limit > Inner Join > TableScan (2 scans)'
    """
    kinds: list[str] = []
    depth = -1
    scans = 0
    for line in explain.splitlines():
        hit = _KIND.match(line)
        if hit is None:
            continue
        scans += hit.group(2).strip() == "TableScan"
        if len(hit.group(1)) > depth:
            depth = len(hit.group(1))
            kinds.append(hit.group(2).strip())
    if not kinds:
        return kind
    return f"{kind}: {' > '.join(kinds)} ({scans} scan{'s' if scans != 1 else ''})"
