"""Engine names for unaliased window functions and subqueries in the select list.

Spark names a window call with its full specification, defaults spelled out
(``RANK() OVER (PARTITION BY b ORDER BY c ASC NULLS FIRST ROWS BETWEEN
UNBOUNDED PRECEDING AND CURRENT ROW)``); DuckDB writes it back as given
(``rank() OVER (PARTITION BY b ORDER BY c)``). A scalar subquery is
``scalarsubquery(<outer columns>)`` in Spark and the subquery's own text in
DuckDB (``(SELECT max(u.c) FROM t AS u WHERE (u.a = t.a))``). Both were read
from Spark 4 and DuckDB (tests/sql/corpus/queries/39_unaliased_scalar_subqueries.sql checks them against
both engines). ``name`` is the engine's naming function for plain expressions.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

Namer = Callable[[exp.Expr], str]

# Spark's pretty names for the ranking functions it prints in upper case.
_SPARK_UPPER: dict[type[exp.Func], str] = {
    exp.Rank: "RANK",
    exp.DenseRank: "DENSE_RANK",
    exp.PercentRank: "PERCENT_RANK",
}
# Functions whose frame Spark fixes: ROWS from the partition's start to the current row (CUME_DIST: RANGE).
_ROW_FRAMED = (exp.Rank, exp.DenseRank, exp.PercentRank, exp.RowNumber, exp.Ntile)


def spark_window(w: exp.Window, name: Namer) -> str | None:
    """Spark's name for ``fn(...) OVER (...)``; None for a form not modelled (named windows)."""
    fn = w.this
    if w.args.get("alias") or not isinstance(fn, exp.Func):
        return None
    if type(fn) in _SPARK_UPPER:
        call = f"{_SPARK_UPPER[type(fn)]}()"
    elif isinstance(fn, (exp.Lag, exp.Lead)):
        offset = fn.args.get("offset")
        default = fn.args.get("default")
        call = (
            f"{fn.sql_name().lower()}({name(fn.this)}, {name(offset) if offset else '1'}, "
            f"{name(default) if default else 'NULL'})"
        )
    else:
        call = name(fn)
    parts = []
    partition = w.args.get("partition_by") or []
    if partition:
        parts.append("PARTITION BY " + ", ".join(name(p) for p in partition))
    order = w.args.get("order")
    keys = order.expressions if order is not None else []
    if keys:
        parts.append("ORDER BY " + ", ".join(_spark_key(o, name) for o in keys))
    frame = _frame(w.args.get("spec"), name) or _spark_default_frame(fn, bool(keys), name)
    parts.append(frame)
    return f"{call} OVER ({' '.join(parts)})"


def _spark_key(o: exp.Ordered, name: Namer) -> str:
    desc = bool(o.args.get("desc"))
    nulls = "NULLS FIRST" if o.args.get("nulls_first") else "NULLS LAST"
    return f"{name(o.this)} {'DESC' if desc else 'ASC'} {nulls}"


def _spark_default_frame(fn: exp.Func, ordered: bool, name: Namer) -> str:
    if isinstance(fn, _ROW_FRAMED):
        return "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    if isinstance(fn, exp.CumeDist):
        return "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    if isinstance(fn, (exp.Lag, exp.Lead)):
        offset = fn.args.get("offset")
        n = name(offset) if offset is not None else "1"
        at = f"-{n}" if isinstance(fn, exp.Lag) else n
        return f"ROWS BETWEEN {at} FOLLOWING AND {at} FOLLOWING"
    if ordered:
        return "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    return "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"


def _frame(spec: exp.Expr | None, name: Namer) -> str | None:
    """An explicit frame as ``ROWS BETWEEN <start> AND <end>``."""
    if spec is None:
        return None

    def bound(value: object, side: object) -> str:
        if isinstance(value, exp.Expr):
            value = name(value)
        text = str(value).upper()
        return text if text == "CURRENT ROW" else f"{text} {str(side or '').upper()}".strip()

    kind = str(spec.args.get("kind") or "").upper()
    start = bound(spec.args.get("start"), spec.args.get("start_side"))
    end = bound(spec.args.get("end"), spec.args.get("end_side")) if spec.args.get("end") else "CURRENT ROW"
    return f"{kind} BETWEEN {start} AND {end}"


def duck_window(w: exp.Window, name: Namer) -> str | None:
    """DuckDB's name: the call and the specification as written (its default frame left out)."""
    fn = w.this
    if w.args.get("alias") or not isinstance(fn, exp.Func):
        return None
    parts = []
    partition = w.args.get("partition_by") or []
    if partition:
        parts.append("PARTITION BY " + ", ".join(name(p) for p in partition))
    order = w.args.get("order")
    keys = order.expressions if order is not None else []
    if keys:
        parts.append(
            "ORDER BY "
            + ", ".join(
                name(o.this)
                + (" DESC" if o.args.get("desc") else "")
                + (" NULLS FIRST" if o.args.get("nulls_first") else "")
                for o in keys
            )
        )
    frame = _frame(w.args.get("spec"), name)
    if frame is not None and frame != "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW":
        parts.append(frame)
    call = "count()" if isinstance(fn, exp.Count) and (fn.this is None or isinstance(fn.this, exp.Star)) else name(fn)
    return f"{call} OVER ({' '.join(parts)})"


def spark_subquery(sub: exp.Subquery) -> str:
    """``scalarsubquery(<outer column>, ...)``: the columns it reads from the enclosing query, in order."""
    inner = sub.this
    local = {t.alias_or_name.lower() for t in inner.find_all(exp.Table)}
    local |= {s.alias_or_name.lower() for s in inner.find_all(exp.Subquery) if s.alias_or_name}
    outer: list[str] = []
    for col in inner.find_all(exp.Column):
        if col.table and col.table.lower() not in local and col.name not in outer:
            outer.append(col.name)
    return f"scalarsubquery({', '.join(outer)})"


def duck_subquery(sub: exp.Subquery, name: Namer) -> str | None:
    """DuckDB's text for ``(SELECT ... FROM one table [WHERE ...])``; None for anything larger."""
    sel = sub.this
    if not isinstance(sel, exp.Select) or sel.args.get("joins") or sel.args.get("with_"):
        return None
    if any(sel.args.get(k) for k in ("group", "having", "order", "limit", "offset", "distinct", "qualify")):
        return None
    from_ = sel.args.get("from_")
    table = from_.this if from_ is not None else None
    if not isinstance(table, exp.Table) or table.args.get("db"):
        return None
    source = table.name + (f" AS {table.alias}" if table.alias else "")
    items = []
    for item in sel.expressions:
        text = name(item.unalias())
        items.append(f"{text} AS {item.alias}" if isinstance(item, exp.Alias) else text)
    where = sel.args.get("where")
    tail = f" WHERE {name(where.this)}" if where is not None else ""
    return f"(SELECT {', '.join(items)} FROM {source}{tail})"
