"""Derived tables rendered more than once become one CTE, so a CTE the query used three times reads as one.

The plan inlines a CTE at every reference; rendered as is, a CTE joined to
itself three times would print its body three times. After rendering, every
derived table whose text is identical to another one's is defined once in a
``WITH`` at the top and referenced by name, keeping each reference's alias. A
copy that the optimizer changed (a filter pushed into one reference only) is
no longer identical and stays where it is, which is what it now means.
"""

from __future__ import annotations

from sqlglot import exp


def hoist_repeated(query: exp.Expr, derived: list[exp.Subquery] | None = None) -> exp.Expr:
    """Define each repeated derived table once as ``_cteN``; returns ``query``.

    ``derived``: every derived table the renderer made (some may have been left out of ``query``), looked at
    instead of walking the whole tree for them; CTEs come out as the walk would have ordered them.

    >>> import sqlglot
    >>> body = "(SELECT x FROM t GROUP BY x)"
    >>> q = sqlglot.parse_one(f"SELECT a.x FROM {body} AS a JOIN {body} AS b ON a.x = b.x")
    >>> hoist_repeated(q).sql()
    'WITH _cte1 AS (SELECT x FROM t GROUP BY x) SELECT a.x FROM _cte1 AS a JOIN _cte1 AS b ON a.x = b.x'
    """
    if not isinstance(query, (exp.Select, exp.SetOperation)) or query.args.get("with_"):
        return query
    # Candidates by shape (the clauses a body has, its number of outputs: read off its top node), then by
    # structural hash (sqlglot's, a walk of the body), confirmed by identical text: writing every derived
    # table's text to compare them cost more than the rest of the rendering, and hashing every body a tenth.
    by_shape: dict[tuple[object, ...], list[exp.Subquery]] = {}
    for sub in query.find_all(exp.Subquery) if derived is None else derived:
        is_derived = isinstance(sub.parent, (exp.From, exp.Join)) and sub.alias and isinstance(sub.this, exp.Query)
        if is_derived:
            by_shape.setdefault(_shape(sub.this), []).append(sub)
    by_hash: dict[int, list[exp.Subquery]] = {}
    for alike in by_shape.values():
        if len(alike) > 1:
            for sub in alike:
                by_hash.setdefault(hash(sub.this), []).append(sub)
    groups: dict[str, list[exp.Subquery]] = {}
    for candidates in by_hash.values():
        if len(candidates) > 1:
            for sub in candidates:
                if _self_contained(sub.this):
                    # not copied: the renderer's trees hold no nested WITH, which is all generating rewrites
                    groups.setdefault(sub.this.sql(copy=False), []).append(sub)
    # Outermost first (the longest text): a repeat nested inside another repeat is defined once inside that
    # CTE's body.
    repeated = [(text, subs) for text, subs in groups.items() if len(subs) > 1]
    if not repeated:
        return query
    if derived is not None and len(repeated) > 1:  # the order the walk finds them in, as without ``derived``
        walked = {id(sub): i for i, sub in enumerate(query.find_all(exp.Subquery))}
        repeated.sort(key=lambda r: min(walked.get(id(sub), len(walked)) for sub in r[1]))
    repeated.sort(key=lambda r: -len(r[0]))
    ctes: list[exp.CTE] = []
    taken = {t.name.lower() for t in query.find_all(exp.Table)}
    for _, subs in repeated:
        live = [s for s in subs if s.root() is query]
        if len(live) < 2:
            continue
        name = f"_cte{len(ctes) + 1}"
        while name in taken:
            name = f"_{name}"
        taken.add(name)
        ctes.append(exp.CTE(this=live[0].this.copy(), alias=exp.TableAlias(this=exp.to_identifier(name))))
        for sub in live:
            sub.replace(exp.Table(this=exp.to_identifier(name), alias=sub.args["alias"].copy()))
    if ctes:
        query.set("with_", exp.With(expressions=ctes))
    return query


def _shape(body: exp.Expr) -> tuple[object, ...]:
    """What two bodies of identical text share, read off the top node: its class, the clauses it has, its
    number of outputs."""
    return (type(body), frozenset(key for key, value in body.args.items() if value), len(body.expressions))


def _self_contained(body: exp.Expression) -> bool:
    """Every qualified column in ``body`` names a relation of ``body``: no correlated reference that a
    CTE at the top could not see."""
    names = {t.alias_or_name.lower() for t in body.find_all(exp.Table, exp.Subquery) if t.alias_or_name}
    return all(not c.table or c.table.lower() in names for c in body.find_all(exp.Column))
