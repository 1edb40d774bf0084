"""Reading Spark's physical plan for the corpus check: nested-loop joins, scans, the filters each scan gets
(PushedFilters, PartitionFilters with dynamic partition pruning, DataFilters) and UNION branches; and comparing
the original's plan with the answer's.

Reused exchanges and reused subqueries are not descended into (they scan nothing again); subquery plans (scalar
subqueries, dynamic pruning's broadcast) are.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

NESTED_LOOP = frozenset({"BroadcastNestedLoopJoinExec", "CartesianProductExec"})


def _seq(scala_seq: Any) -> list[Any]:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


_ID = re.compile(r"#\d+L?")


def normalise(text: str) -> str:
    """A filter's text without attribute and expression ids (``ss_item_sk#12`` -> ``ss_item_sk``), and a
    disjunction of equalities on one column written as the IN list it equals (``Or(EqualTo(c,3),EqualTo(c,1))``
    and ``In(c, [1,3])`` read the same; ``((c = 3) OR (c = 1))`` and ``c IN (1,3)`` too): the rewrite may state a
    derived disjunction as an IN list, which Spark pushes as faithfully."""
    text = _ID.sub("", text)
    return _as_in_list(text) or text


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside parentheses, brackets and quotes."""
    parts, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _strip_parens(text: str) -> str:
    """``text`` without parentheses that enclose all of it."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _closes_at_end(text):
        text = text[1:-1].strip()
    return text


def _closes_at_end(text: str) -> bool:
    """Whether the parenthesis opening ``text`` is the one closing it."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return i == len(text) - 1
    return False


def _values_of(term: str) -> tuple[str, list[str]] | None:
    """(column, values) of one equality or IN list, in either form (a data source filter or an expression)."""
    term = _strip_parens(term)
    if m := re.fullmatch(r"EqualTo\((\w+),(.*)\)", term):
        return m.group(1), [m.group(2)]
    if m := re.fullmatch(r"In\((\w+), \[(.*)\]\)", term):
        return m.group(1), _split_top(m.group(2), ",")
    if m := re.fullmatch(r"(\w+) = (.+)", term):
        return m.group(1), [m.group(2).strip()]
    if m := re.fullmatch(r"(\w+) IN \((.*)\)", term):
        return m.group(1), [v.strip() for v in _split_top(m.group(2), ",")]
    return None


def _disjuncts(text: str) -> list[str]:
    text = _strip_parens(text)
    if m := re.fullmatch(r"Or\((.*)\)", text):
        args = _split_top(m.group(1), ",")
        return [d for a in args for d in _disjuncts(a)] if len(args) == 2 else [text]
    parts = _split_top(text, " OR ")
    return [d for p in parts for d in _disjuncts(p)] if len(parts) > 1 else [text]


def _as_in_list(text: str) -> str | None:
    terms = [_values_of(d) for d in _disjuncts(text)]
    if not terms or any(t is None for t in terms) or len({t[0] for t in terms if t}) != 1:
        return None
    column = terms[0][0] if terms[0] else ""
    values = sorted({v.strip() for t in terms if t for v in t[1]})
    return f"{column} IN ({', '.join(values)})"


@dataclass
class PlanFacts:
    """What the check compares in a physical plan."""

    nested_loop: int = 0
    scans: Counter[str] = field(default_factory=Counter)
    filters: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    union_branches: int = 0
    text: str = ""


def _kids(node: Any) -> list[Any]:
    """Children and subquery plans; reused exchanges and subqueries are not walked again."""
    name = node.getClass().getSimpleName()
    if name in ("ReusedExchangeExec", "ReusedSubqueryExec"):
        return []
    kids = _seq(node.children())
    with contextlib.suppress(Exception):
        kids += _seq(node.subqueries())
    return kids


def _scan_table(node: Any) -> str:
    ident = node.tableIdentifier()
    if ident.isDefined():
        return str(ident.get().table())
    paths = _seq(node.relation().location().rootPaths())
    return paths[0].getName() if paths else "?"


def _pushed(node: Any) -> list[str]:
    try:
        return [f.toString() for f in _seq(node.pushedDownFilters())]
    except Exception:  # a filter with a scalar subquery is translated only once the subquery has its value
        meta = node.metadata()
        text = meta.get("PushedFilters").get() if meta.contains("PushedFilters") else "[]"
        return [t.strip() for t in text.strip("[]").split(", ") if t.strip()]


def plan_facts(plan: Any) -> PlanFacts:
    facts = PlanFacts(text=plan.toString())
    stack = [plan]
    while stack:
        node = stack.pop()
        name = node.getClass().getSimpleName()
        stack.extend(_kids(node))
        if name in NESTED_LOOP:
            facts.nested_loop += 1
        elif name == "UnionExec":
            facts.union_branches += node.children().size()
        elif name == "FileSourceScanExec":
            table = _scan_table(node)
            facts.scans[table] += 1
            for kind, items in (
                ("pushed", _pushed(node)),
                ("partition", [e.toString() for e in _seq(node.partitionFilters())]),
                ("data", [e.toString() for e in _seq(node.dataFilters())]),
            ):
                for item in items:
                    facts.filters[(table, kind, normalise(item))] += 1
    return facts


def spark_plan(spark: Any, sql: str, conf: dict[str, str] | None = None) -> tuple[PlanFacts, list[tuple[str, str]]]:
    """The physical plan's facts and the output schema, without running a job."""
    from service.spark_runner import session_settings

    with session_settings(spark, conf or {}):
        df = spark.sql(sql)
        plan = df._jdf.queryExecution().executedPlan()
        facts = plan_facts(plan)
    return facts, [(f.name, f.dataType.simpleString()) for f in df.schema.fields]


def compare_plans(before: PlanFacts, after: PlanFacts) -> list[tuple[str, str]]:
    """Violations of the answer's plan (``after``) against the original's (``before``): (kind, detail)."""
    out: list[tuple[str, str]] = []
    if after.nested_loop > before.nested_loop:
        out.append(("nested_loop", f"nested-loop/cartesian joins {before.nested_loop} -> {after.nested_loop}"))
    lost = before.filters - after.filters
    for (table, kind, text), n in sorted(lost.items()):
        out.append(("lost_filter", f"{table}: {kind} filter {text}" + (f" (x{n})" if n > 1 else "")))
    for table in sorted(after.scans - before.scans):
        out.append(("extra_scan", f"{table}: {before.scans[table]} -> {after.scans[table]} scans"))
    if after.union_branches > before.union_branches:
        out.append(("extra_union_branch", f"union branches {before.union_branches} -> {after.union_branches}"))
    return out
