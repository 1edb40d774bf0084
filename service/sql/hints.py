"""Spark hints: kept out of the plan, put back where Spark reads them.

A hint changes how Spark executes a query, never its rows, and the wire plan
has no place for one. So ``sql_to_plan`` sets hints aside (``strip_hints``),
and ``plan_to_sql`` given the original text puts each join hint into the
SELECT whose FROM/JOIN list holds the relations it names (Spark resolves a
join hint against the relations of the query block it is written in), and
every other hint (``REPARTITION``, ``COALESCE``) on the outermost SELECT.
"""

from __future__ import annotations

from sqlglot import exp


def strip_hints(selects: list[exp.Select]) -> None:
    """Remove every hint from these SELECTs (they name relations, not tables, and carry no meaning)."""
    for sel in selects:
        if sel.args.get("hint") is not None:
            sel.set("hint", None)


def _hints(stmt: exp.Expr) -> list[exp.Expr]:
    out: list[exp.Expr] = []
    for sel in stmt.find_all(exp.Select):
        hint = sel.args.get("hint")
        if isinstance(hint, exp.Hint):
            out.extend(hint.expressions)
    return out


def _relation_names(sel: exp.Select) -> set[str]:
    """Names a hint in ``sel`` may use: each FROM/JOIN source's alias, or the table's own name."""
    names: set[str] = set()
    from_ = sel.args.get("from_")
    sources = [from_.this] if from_ is not None else []
    sources += [j.this for j in sel.args.get("joins") or []]
    for src in sources:
        if src.alias:
            names.add(src.alias.lower())
        if isinstance(src, exp.Table):
            names.add(src.name.lower())
    return names


def place_hints(query: exp.Expr, original: exp.Expr) -> exp.Expr:
    """Copy ``original``'s hints into the rendered ``query``, each where Spark resolves it.

    >>> import sqlglot
    >>> src = sqlglot.parse_one("SELECT /*+ BROADCAST(b) */ a.x FROM a JOIN b ON a.x = b.x", read="spark")
    >>> out = sqlglot.parse_one("SELECT a.x FROM a JOIN (SELECT * FROM b WHERE b.y > 1) AS b ON a.x = b.x")
    >>> place_hints(out, src).sql("spark")
    'SELECT /*+ BROADCAST(b) */ a.x FROM a JOIN (SELECT * FROM b WHERE b.y > 1) AS b ON a.x = b.x'
    """
    hints = _hints(original)
    if not hints:
        return query
    selects = list(query.find_all(exp.Select))
    top = next((s for s in query.walk(bfs=True) if isinstance(s, exp.Select)), None)
    placed: dict[int, list[exp.Expr]] = {}
    for hint in hints:
        target = top
        if isinstance(hint, exp.JoinHint):
            wanted = {t.name.lower() for t in hint.expressions if isinstance(t, exp.Table)}
            candidates = [s for s in selects if wanted and wanted <= _relation_names(s)]
            if not candidates:
                candidates = [s for s in selects if wanted & _relation_names(s)]
            target = candidates[0] if candidates else top
        if target is not None:
            placed.setdefault(id(target), []).append(hint.copy())
    for sel in selects:
        if id(sel) in placed:
            sel.set("hint", exp.Hint(expressions=placed[id(sel)]))
    return query
