"""What the dashboard's overview shows of each optimization: the query (or a plan summary) and its tables.

Built from the stored request and answer, so records written before this existed show it too.

Example::

    >>> overview({"sql": "SELECT a\\n  FROM t"}, {"explain": {"before": "Projection: a  [n1]\\n  TableScan: t  [n2]"}})
    {'query': 'SELECT a FROM t', 'tables': ['t']}
"""

from __future__ import annotations

import re
from typing import Any

#: Characters of query text in a row; the drill-down has all of it.
QUERY_CHARS = 240
_SCAN = re.compile(r"^\s*TableScan: (\S+)")
_KIND = re.compile(r"^(\s*)([^:\[]+?)(?::|\s+\[)")


def overview(request: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """``query``: the SQL on one line (shortened), else the plan's operators from the root; ``tables``: scans."""
    before = str((response.get("explain") or {}).get("before") or "")
    tables = sorted({hit.group(1) for line in before.splitlines() if (hit := _SCAN.match(line))})
    sql = request.get("sql")
    if isinstance(sql, str) and sql.strip():
        text = " ".join(sql.split())
        query = text if len(text) <= QUERY_CHARS else text[: QUERY_CHARS - 1] + "…"
    else:
        query = plan_summary(before)
    return {"query": query, "tables": tables}


def plan_summary(explain: str) -> str:
    """The operators down the plan's first path, and how many scans it has: for plans sent without SQL.

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
        return "plan"
    return f"plan: {' > '.join(kinds)} ({scans} scan{'s' if scans != 1 else ''})"
