"""Binding names without sqlglot's qualify: one pass over the query, sources looked up in the catalog.

sqlglot's ``qualify`` builds a scope graph, a schema trie and a type annotator
for every request; for the adapter that is most of the time it spends on a
TPC-H query. The adapter only needs each column qualified with the alias of
the source that holds it, stars expanded, and unaliased outputs named, so
``bind`` does exactly that in one walk, looking columns up in the catalog
(``Tables``) and in the outputs of the queries it has already bound.

It binds the common forms only. Anything it does not model (USING, NATURAL,
references to select aliases outside ORDER BY, ordinals, column lists on
derived tables, lambdas, struct fields, a name it cannot find or finds twice)
raises ``Unbindable`` and the caller takes sqlglot's qualify path, so errors and
rare forms behave exactly as before. The output matches what qualify produces
where the plan builder reads it (tests/sql/test_bind.py compares whole plans).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from sqlglot import exp
from sqlglot.dialects.dialect import NormalizationStrategy
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from service.sql.common import TypeKinds, child_nodes, dialect_of
from service.sql.identifiers import identifier_normalizer
from service.sql.parse import Tables


class Unbindable(Exception):
    """This query needs sqlglot's qualify (a form ``bind`` does not model, or an error to report)."""


@dataclass
class Source:
    """One FROM/JOIN item of a SELECT: the name columns are qualified with, and the columns it has."""

    name: str
    columns: dict[str, None]  # lower-case names, in order (a dict: ordered and O(1) membership)


class Scope:
    """A SELECT's sources in order, indexed by name and by column (500 joins: no scan per reference)."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self.by_name: dict[str, Source] = {}
        self.by_column: dict[str, list[Source]] = {}

    def add(self, source: Source) -> None:
        if not source.name or source.name in self.by_name:
            raise Unbindable("duplicate source name")
        self.sources.append(source)
        self.by_name[source.name] = source
        for column in source.columns:
            self.by_column.setdefault(column, []).append(source)


# Select arguments that ``bind`` leaves to qualify (the builder refuses most of them by name).
_OTHER_SELECT_ARGS = (
    "laterals",
    "pivots",
    "windows",
    "qualify",
    "connect",
    "sort",
    "cluster",
    "distribute",
    "into",
    "prewhere",
    "match",
    "exclude",
    "kind",
    "operation_modifiers",
)


def can_bind(dialect: str, tables: Tables) -> bool:
    """``bind`` needs the catalog and a dialect whose names are case-insensitive (Spark, DuckDB)."""
    try:
        strategy = dialect_of(dialect).normalization_strategy
    except ValueError:
        return False  # the translation reports the unknown dialect
    return tables.known and strategy is NormalizationStrategy.CASE_INSENSITIVE


def bind(stmt: exp.Expr, tables: Tables, dialect: str, identifiers: list[exp.Identifier] | None = None) -> exp.Expr:
    """Qualify every column of ``stmt`` in place, as qualify would; raises ``Unbindable``.

    ``identifiers``: every identifier of ``stmt`` when the caller has listed them (``survey``), so
    normalising them is not another walk.

    >>> import sqlglot
    >>> tables = Tables({"tables": {"t": {"columns": ["a", "b"]}}})
    >>> bind(sqlglot.parse_one("SELECT A, b + 1 FROM t WHERE a > 1", read="spark"), tables, "spark").sql()
    'SELECT t.a AS a, t.b + 1 AS _col_1 FROM t WHERE t.a > 1'
    """
    if identifiers is None:
        normalize_identifiers(stmt, dialect=dialect_of(dialect), store_original_column_identifiers=True)
    else:
        normalize = identifier_normalizer(dialect)
        for ident in identifiers:
            normalize(ident)
    _Binder(tables).query(stmt, [], {})
    return stmt


class _Binder:
    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self.catalog_columns: dict[str, dict[str, None]] = {}

    # ---- queries -------------------------------------------------------
    def query(self, q: exp.Expr, outer: list[Scope], ctes: dict[str, list[str]]) -> list[str]:
        """Bind ``q``; returns its output names."""
        with_ = q.args.get("with_")
        if with_ is not None:
            if with_.args.get("recursive"):
                raise Unbindable("recursive CTE")
            ctes = dict(ctes)
            for cte in with_.expressions:
                ctes[cte.alias_or_name] = _listed(cte, self.query(cte.this, [], ctes))
        if isinstance(q, exp.Select):
            return self.select(q, outer, ctes)
        if isinstance(q, exp.Subquery):
            names = self.query(q.this, outer, ctes)
            self.modifiers(q, names)
            return names
        if isinstance(q, exp.SetOperation):
            first: list[str] | None = None
            stack: list[exp.Expression] = [q]
            while stack:  # balanced, but a chain of n branches still has n-1 links: no recursion per link
                node = stack.pop()
                if isinstance(node, exp.SetOperation) and (node is q or not node.args.get("with_")):
                    stack.append(node.expression)
                    stack.append(node.this)
                    continue
                names = self.query(node, outer, ctes)
                first = names if first is None else first
            assert first is not None
            self.modifiers(q, first)
            return first
        raise Unbindable(q.key)

    def modifiers(self, q: exp.Expression, names: list[str]) -> None:
        """ORDER BY on a set operation or parenthesised query names its outputs: nothing to qualify."""
        order = q.args.get("order")
        for o in order.expressions if order is not None else []:
            for col in o.find_all(exp.Column):
                if col.table or col.name not in names:
                    raise Unbindable("ORDER BY over a set operation")
            if o.find(exp.Query):
                raise Unbindable("subquery in ORDER BY")

    def select(self, sel: exp.Select, outer: list[Scope], ctes: dict[str, list[str]]) -> list[str]:
        if any(sel.args.get(arg) for arg in _OTHER_SELECT_ARGS):
            raise Unbindable("select modifier")
        distinct = sel.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise Unbindable("DISTINCT ON")
        scope = self.sources(sel, ctes)
        chain = [scope, *outer]
        self.expand_stars(sel, scope)
        aliases = {item.alias for item in sel.expressions if isinstance(item, exp.Alias)}
        for item in sel.expressions:
            self.expr(item, chain, ctes, aliases)
        for join in sel.args.get("joins") or []:
            if join.args.get("on") is not None:
                self.expr(join.args["on"], chain, ctes, aliases)
        where = sel.args.get("where")
        if where is not None:
            self.expr(where, chain, ctes, aliases)
        group = sel.args.get("group")
        if group is not None:
            for key in group.find_all(exp.Literal):
                if key.parent is group or isinstance(key.parent, (exp.Rollup, exp.Cube, exp.Tuple)):
                    raise Unbindable("GROUP BY ordinal")
            self.expr(group, chain, ctes, aliases)
        having = sel.args.get("having")
        if having is not None:
            self.expr(having, chain, ctes, aliases, shadowed=aliases)
        order = sel.args.get("order")
        if order is not None:
            outputs = {item.alias_or_name for item in sel.expressions}
            for o in order.expressions:
                key = o.this
                if isinstance(key, exp.Literal):
                    raise Unbindable("ORDER BY ordinal")
                if isinstance(key, exp.Column) and not key.table and key.name in outputs:
                    continue  # an output name: the builder reads it as one
                self.expr(o, chain, ctes, aliases)
        return self.name_outputs(sel)

    def sources(self, sel: exp.Select, ctes: dict[str, list[str]]) -> Scope:
        from_ = sel.args.get("from_")
        if from_ is None:
            raise Unbindable("SELECT without FROM")
        items = [from_.this]
        for join in sel.args.get("joins") or []:
            if join.args.get("using") or join.args.get("method") or join.kind == "NATURAL":
                raise Unbindable("USING / NATURAL")
            items.append(join.this)
        scope = Scope()
        for item in items:
            if item.args.get("pivots") or item.args.get("joins") or item.args.get("laterals"):
                raise Unbindable("pivot or nested join")
            name = item.alias_or_name
            if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
                columns = self.table_columns(item, ctes)
            elif isinstance(item, exp.Subquery) and name:
                names = self.query(item.this, [], ctes)
                self.modifiers(item, names)
                columns = dict.fromkeys(_listed(item, names))
            else:
                raise Unbindable("FROM item")
            scope.add(Source(name, columns))
        return scope

    def table_columns(self, table: exp.Table, ctes: dict[str, list[str]]) -> dict[str, None]:
        if not table.db and table.name in ctes:
            names = ctes[table.name]
            if len(set(names)) != len(names):
                raise Unbindable("duplicate CTE output")
            return dict.fromkeys(names)
        key = self.tables.lookup(table)
        if key is None:
            raise Unbindable("unknown table")
        cached = self.catalog_columns.get(key)
        if cached is None:
            cached = dict.fromkeys(c.lower() for c, _ in self.tables.by_lower[key.lower()][1])
            self.catalog_columns[key] = cached
        return cached

    # ---- select list ---------------------------------------------------
    @staticmethod
    def expand_stars(sel: exp.Select, scope: Scope) -> None:
        items: list[exp.Expression] = []
        changed = False
        for item in sel.expressions:
            if isinstance(item, exp.Star):
                if any(item.args.values()):
                    raise Unbindable("star with EXCEPT/REPLACE")
                items.extend(_column(c, s.name) for s in scope.sources for c in s.columns)
                changed = True
            elif isinstance(item, exp.Column) and isinstance(item.this, exp.Star):
                if any(item.this.args.values()) or item.args.get("db"):
                    raise Unbindable("qualified star form")
                source = scope.by_name.get(item.table)
                if source is None:
                    raise Unbindable("unknown star qualifier")
                items.extend(_column(c, source.name) for c in source.columns)
                changed = True
            else:
                items.append(item)
        if changed:
            sel.set("expressions", items)

    @staticmethod
    def name_outputs(sel: exp.Select) -> list[str]:
        """Alias every output the way qualify does: a column by its name, anything else ``_col_<i>``."""
        items: list[exp.Expression] = []
        for i, item in enumerate(sel.expressions):
            if isinstance(item, exp.Subquery):
                if not item.output_name:
                    item.set("alias", exp.TableAlias(this=exp.to_identifier(f"_col_{i}")))
            elif not isinstance(item, exp.Alias):
                inner = item.unnest()
                quoted = isinstance(inner, exp.Column) and inner.this.quoted
                item = exp.alias_(item, item.output_name or f"_col_{i}", copy=False)
                if quoted:
                    item.args["alias"].set("quoted", True)
            items.append(item)
        sel.set("expressions", items)
        return [item.alias_or_name for item in items]

    # ---- expressions ---------------------------------------------------
    def expr(
        self,
        root: exp.Expression,
        chain: list[Scope],
        ctes: dict[str, list[str]],
        aliases: set[str],
        shadowed: set[str] | None = None,
    ) -> None:
        """Qualify the columns of ``root`` (iteratively); nested queries see ``chain`` as enclosing scopes.

        ``shadowed``: names whose meaning (alias or column) sqlglot decides by rules not modelled here.
        """
        stack = [root]
        while stack:
            node = stack.pop()
            kind = _EXPR_KIND(node)
            if kind == _COLUMN:
                self.column(node, chain, aliases, shadowed)  # type: ignore[arg-type]  # its kind says so
            elif kind == _QUERY:
                self.query(node, chain, ctes)
            elif kind == _REFUSED:
                raise Unbindable(node.key)
            elif kind != _STAR:  # count(*)
                stack.extend(child_nodes(node))

    def column(
        self,
        col: exp.Column,
        chain: list[Scope],
        aliases: set[str],
        shadowed: set[str] | None,
    ) -> None:
        if not isinstance(col.this, exp.Identifier) or col.args.get("db") or col.args.get("catalog"):
            raise Unbindable("column form")
        name = col.name
        table = col.table
        if table:
            for scope in chain:
                source = scope.by_name.get(table)
                if source is not None:
                    if name not in source.columns:
                        raise Unbindable("unknown column")
                    return
            raise Unbindable("unknown qualifier")
        if shadowed and name in shadowed:
            raise Unbindable("HAVING names a select alias")
        for depth, scope in enumerate(chain):
            hit = scope.by_column.get(name, ())
            if len(hit) > 1:
                raise Unbindable("ambiguous column")
            if hit:
                col.set("table", exp.to_identifier(hit[0].name))
                return
            if depth == 0 and name in aliases:
                raise Unbindable("select alias reference")
        raise Unbindable("unknown column")


#: what ``_Binder.expr`` does with a node of its walk, by the node's type
_OTHER: Final = 0
_COLUMN: Final = 1
_QUERY: Final = 2
_STAR: Final = 3
_REFUSED: Final = 4
_EXPR_KIND: Final = TypeKinds(
    [
        ((exp.Column,), _COLUMN),
        ((exp.Query, exp.Subquery), _QUERY),
        ((exp.Star,), _STAR),
        ((exp.Dot, exp.Lambda, exp.Placeholder, exp.Parameter), _REFUSED),
    ],
    default=_OTHER,
)


def _listed(source: exp.Expression, names: list[str]) -> list[str]:
    """A column list (``AS x(a, b)``, ``WITH x(a, b)``) renames the body's outputs and is dropped, as qualify does."""
    alias = source.args.get("alias")
    if not isinstance(alias, exp.TableAlias) or not alias.columns:
        return names
    listed = [c.name for c in alias.columns]
    body = source.this
    if not isinstance(body, exp.Select) or len(listed) != len(body.expressions):
        raise Unbindable("column list over this query")
    for item, name in zip(body.expressions, listed, strict=True):
        item.set("alias", exp.to_identifier(name))
    alias.set("columns", None)
    return listed


def _column(name: str, table: str) -> exp.Column:
    return exp.Column(this=exp.to_identifier(name), table=exp.to_identifier(table))
