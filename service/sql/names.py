"""The names an engine gives a query's output columns, so the rewritten SQL keeps them.

A downstream ``INSERT``, ``saveAsTable`` or ``df["name"]`` reads columns by
name, so the rewritten query must return the original's names exactly, case
included. An alias and a bare column are easy; an unaliased expression is named
by the engine itself, differently in each dialect (Spark ``(a + c)``,
``count(1)``; DuckDB ``(t.a + 1)``, ``count_star()``). ``engine_name`` follows
each engine's rule for the common forms, read from the SQL as written (before
qualification lower-cases it). The corpus tests compare these names with what
Spark and DuckDB report.
"""

from __future__ import annotations

import re

from sqlglot import exp

from service.sql.names_window import duck_subquery, duck_window, spark_subquery, spark_window

_SPARK_OPS: dict[type[exp.Expr], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.IntDiv: "div",
    exp.EQ: "=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.And: "AND",
    exp.Or: "OR",
    exp.DPipe: "||",
    exp.NullSafeEQ: "<=>",
}
_DUCK_OPS: dict[type[exp.Expr], str] = {**_SPARK_OPS, exp.NEQ: "!=", exp.Like: "~~", exp.ILike: "~~*"}
# DuckDB prints these function names quoted (they are keywords in its grammar).
_DUCK_QUOTED = {"substring", "year", "month", "day", "if", "left", "right", "replace", "position"}
_DUCK_UPPER = {"coalesce"}


def item_names(select: exp.Select, dialect: str, spelling: dict[str, str]) -> list[str | None]:
    """One name per select item as the engine would report it; None for a star (expanded later).

    ``spelling`` maps a lower-case column name to its catalog spelling (DuckDB
    reports a bare column by its catalog name, Spark as the query wrote it).
    >>> from sqlglot import parse_one
    >>> item_names(parse_one("SELECT A, b AS Name, a + 1, * FROM t"), "spark", {})
    ['A', 'Name', '(a + 1)', None]
    """
    out: list[str | None] = []
    for item in select.expressions:
        if isinstance(item, exp.Alias):
            out.append(item.alias)
        elif isinstance(item, exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star)):
            out.append(None)
        else:
            out.append(engine_name(item, dialect, spelling))
    return out


def engine_name(e: exp.Expr, dialect: str, spelling: dict[str, str] | None = None) -> str:
    """The name ``dialect``'s engine gives the unaliased select item ``e``.

    >>> from sqlglot import parse_one
    >>> engine_name(parse_one("count(*)"), "spark"), engine_name(parse_one("count(*)"), "duckdb")
    ('count(1)', 'count_star()')
    """
    spelling = spelling or {}
    if isinstance(e, exp.Paren):
        return engine_name(e.this, dialect, spelling)
    if isinstance(e, exp.Column):
        if dialect == "duckdb":
            return spelling.get(e.name.lower(), e.name)
        return e.name
    duck = dialect == "duckdb"
    if isinstance(e, exp.Window):
        named = duck_window(e, _duck) if duck else spark_window(e, _spark)
        return named if named is not None else e.sql(dialect=dialect)
    if isinstance(e, exp.Subquery) and not e.args.get("alias"):
        named = duck_subquery(e, _duck) if duck else spark_subquery(e)
        return named if named is not None else e.sql(dialect=dialect)
    return _duck(e) if duck else _spark(e)


def _spark(e: exp.Expr) -> str:
    """Spark's ``toPrettySQL``: operators parenthesised, string literals bare, columns unqualified."""
    if isinstance(e, exp.Paren):
        return _spark(e.this)
    if isinstance(e, exp.Column):
        return e.name
    if isinstance(e, exp.Literal):
        if e.is_string:
            return e.this
        text = e.this
        return repr(float(text)) if "e" in text.lower() else text
    if isinstance(e, exp.Null):
        return "NULL"
    if isinstance(e, exp.Boolean):
        return "true" if e.this else "false"
    if isinstance(e, exp.NEQ):
        return f"(NOT ({_spark(e.this)} = {_spark(e.expression)}))"
    if isinstance(e, exp.DPipe):
        return f"concat({_spark(e.this)}, {_spark(e.expression)})"
    if isinstance(e, exp.Like):
        return f"{_spark(e.this)} LIKE {_spark(e.expression)}"
    if type(e) in _SPARK_OPS:
        return f"({_spark(e.this)} {_SPARK_OPS[type(e)]} {_spark(e.expression)})"
    if isinstance(e, exp.Not):
        return f"(NOT {_spark(e.this)})"
    if isinstance(e, exp.Neg):
        return f"(- {_spark(e.this)})"
    if isinstance(e, exp.Is):
        negated = "NOT " if e.args.get("negate") else ""
        return f"({_spark(e.this)} IS {negated}{e.expression.sql(dialect='spark').upper()})"
    if isinstance(e, exp.In) and not e.args.get("query"):
        return f"({_spark(e.this)} IN ({', '.join(_spark(v) for v in e.expressions)}))"
    if isinstance(e, exp.Between):
        return f"between({_spark(e.this)}, {_spark(e.args['low'])}, {_spark(e.args['high'])})"
    if isinstance(e, exp.Cast):
        if isinstance(e.this, exp.Column):
            return e.this.name
        return f"CAST({_spark(e.this)} AS {e.args['to'].sql(dialect='spark').upper()})"
    if isinstance(e, exp.Case):
        return _case(e, _spark, "CASE", "", "")
    if isinstance(e, exp.If):
        parts = [e.this, e.args["true"], *([e.args["false"]] if e.args.get("false") else [])]
        return f"(IF({', '.join(_spark(p) for p in parts)}))"
    if isinstance(e, exp.Count) and (e.this is None or isinstance(e.this, exp.Star)):
        return "count(1)"
    if isinstance(e, exp.Func) and not isinstance(e, exp.Window):
        return _call(e, _spark, e.sql_name().lower() if not isinstance(e, exp.Anonymous) else e.name)
    return e.sql(dialect="spark")


def _duck(e: exp.Expr) -> str:
    """DuckDB's ``ToString``: operators parenthesised, literals as written, qualifiers kept."""
    if isinstance(e, exp.Paren):
        return _duck(e.this)
    if isinstance(e, exp.Column):
        return ".".join(p.name for p in e.parts)
    if isinstance(e, exp.Literal):
        return f"'{e.this}'" if e.is_string else e.this
    if isinstance(e, exp.Null):
        return "NULL"
    if isinstance(e, exp.Boolean):
        return "true" if e.this else "false"
    if isinstance(e, (exp.Like, exp.ILike)) and e.args.get("negate"):
        op = "!~~" if isinstance(e, exp.Like) else "!~~*"
        return f"({_duck(e.this)} {op} {_duck(e.expression)})"
    if type(e) in _DUCK_OPS:
        return f"({_duck(e.this)} {_DUCK_OPS[type(e)]} {_duck(e.expression)})"
    if isinstance(e, exp.Not):
        return f"(NOT {_duck(e.this)})"
    if isinstance(e, exp.Neg):
        return f"(-({_duck(e.this)}))"
    if isinstance(e, exp.Is):
        negated = "NOT " if e.args.get("negate") else ""
        return f"({_duck(e.this)} IS {negated}{e.expression.sql(dialect='duckdb').upper()})"
    if isinstance(e, exp.In) and not e.args.get("query"):
        return f"({_duck(e.this)} IN ({', '.join(_duck(v) for v in e.expressions)}))"
    if isinstance(e, exp.Between):
        return f"({_duck(e.this)} BETWEEN {_duck(e.args['low'])} AND {_duck(e.args['high'])})"
    if isinstance(e, exp.Case):
        return _case(e, _duck, "CASE ", "(", ")", duck=True)
    if isinstance(e, exp.Count) and (e.this is None or isinstance(e.this, exp.Star)):
        return "count_star()"
    if isinstance(e, exp.Func) and not isinstance(e, exp.Window):
        name = e.sql_name().lower() if not isinstance(e, exp.Anonymous) else e.name
        name = f'"{name}"' if name in _DUCK_QUOTED else name.upper() if name in _DUCK_UPPER else name
        return _call(e, _duck, name)
    return e.sql(dialect="duckdb")


def _call(e: exp.Func, name_of: object, name: str) -> str:
    """``name(arg, ...)`` with ``DISTINCT`` kept, arguments named by the same engine rule."""
    assert callable(name_of)
    this = e.args.get("this")
    if isinstance(this, exp.Distinct):
        return f"{name}(DISTINCT {', '.join(name_of(a) for a in this.expressions)})"
    args: list[exp.Expr] = []
    for key in e.arg_types:
        value = e.args.get(key)
        if isinstance(value, list):
            args.extend(v for v in value if isinstance(v, exp.Expr))
        elif isinstance(value, exp.Expr):
            args.append(value)
    return f"{name}({', '.join(name_of(a) for a in args)})"


def _case(e: exp.Case, name_of: object, head: str, lp: str, rp: str, duck: bool = False) -> str:
    """``CASE WHEN c THEN v ... END``; a simple CASE is named as the searched form."""
    assert callable(name_of)
    parts = [head]
    for branch in e.args.get("ifs") or []:
        cond = branch.this
        if e.this is not None:
            cond = exp.EQ(this=e.this.copy(), expression=cond.copy())
        cond_name = name_of(cond)
        parts.append(f" WHEN {lp}{cond_name}{rp} THEN {lp}{name_of(branch.args['true'])}{rp}")
    default = e.args.get("default")
    if default is not None:
        parts.append(f" ELSE {name_of(default)}")
    elif duck:
        parts.append(" ELSE NULL")
    parts.append(" END")
    text = "".join(parts)
    return re.sub(r"^CASE\s+WHEN", "CASE WHEN", text) if not duck else text


def align(
    names: list[str | None], original: list[exp.Expr], qualified: list[exp.Expr], spelling: dict[str, str]
) -> list[str] | None:
    """Names for the qualified select list: stars expand to the columns qualification listed for them.

    A star's columns take their catalog (or alias) spelling; None when the lists cannot be matched up.
    """
    out: list[str] = []
    pos = 0
    fixed_after = [sum(1 for n in names[i + 1 :] if n is not None) for i in range(len(names))]
    stars_after = [sum(1 for n in names[i + 1 :] if n is None) for i in range(len(names))]
    for i, (name, item) in enumerate(zip(names, original, strict=True)):
        if name is not None:
            if pos >= len(qualified):
                return None
            out.append(name)
            pos += 1
            continue
        if isinstance(item, exp.Column) and item.table:  # t.*: the run of columns of t
            qual = item.table.lower()
            while pos < len(qualified) and _qualifier(qualified[pos]) == qual:
                out.append(_spelled(qualified[pos], spelling))
                pos += 1
            continue
        if stars_after[i]:
            return None  # two bare stars: no way to split the expansion
        end = len(qualified) - fixed_after[i]
        while pos < end:
            out.append(_spelled(qualified[pos], spelling))
            pos += 1
    return out if pos == len(qualified) else None


def _qualifier(item: exp.Expr) -> str:
    inner = item.unalias()
    return inner.table.lower() if isinstance(inner, exp.Column) else ""


def _spelled(item: exp.Expr, spelling: dict[str, str]) -> str:
    name = item.alias_or_name
    return spelling.get(name.lower(), name)


def spellings(aliases: list[exp.Expr], catalog_columns: list[str]) -> dict[str, str]:
    """Lower-case name -> spelling: catalog columns first, the query's aliases (Alias, TableAlias) over them."""
    out = {c.lower(): c for c in catalog_columns}
    for alias in aliases:
        if isinstance(alias, exp.Alias):
            out[alias.alias.lower()] = alias.alias
        elif isinstance(alias, exp.TableAlias):
            for col in alias.columns:
                out[col.name.lower()] = col.name
    return out


def first_select(q: exp.Expr) -> exp.Select | None:
    """The SELECT whose items name a query's outputs (a set operation takes its first input's names)."""
    while isinstance(q, (exp.SetOperation, exp.Subquery)):
        q = q.this
    return q if isinstance(q, exp.Select) else None


def name_inner_outputs(
    selects: list[exp.Select], top: exp.Select | None, dialect: str, spelling: dict[str, str]
) -> list[exp.Identifier]:
    """Alias every unaliased expression of the inner SELECTs with the engine's name, in place; returns the new names.

    A derived table's columns are named by the engine, so ``SELECT x.* FROM
    (SELECT qty + 1 FROM sales) x`` returns ``(qty + 1)``; qualification would
    call it ``_col_0``. Names with a dot (DuckDB keeps qualifiers) stay
    internal: a wire column ``x.name`` cannot hold one.
    """
    created: list[exp.Identifier] = []
    for sel in selects:
        if sel is top or not _is_relation(sel):
            continue
        taken = {item.alias_or_name.lower() for item in sel.expressions}
        for item in list(sel.expressions):
            if isinstance(item, (exp.Alias, exp.Column, exp.Star)) or item.find(exp.Window, exp.Query):
                continue  # windows and subqueries: the engine's name is not one this module can spell
            name = engine_name(item, dialect, spelling)
            if "." in name or name.lower() in taken or not name:
                continue
            taken.add(name.lower())
            ident = exp.to_identifier(name, quoted=True)
            aliased = exp.Alias(alias=ident)
            item.replace(aliased)
            aliased.set("this", item)  # no copy: the survey's identifiers stay the tree's
            created.append(ident)
    return created


def _is_relation(sel: exp.Select) -> bool:
    """``sel`` feeds a FROM/JOIN or a CTE (its columns can be listed by a star), not an expression subquery."""
    node: exp.Expr = sel
    while isinstance(node.parent, (exp.Subquery, exp.SetOperation)):
        node = node.parent
    return isinstance(node.parent, (exp.From, exp.Join, exp.CTE))
