"""A block's output columns (``Col``: a wire name and the SQL that reaches it) and the block itself (``Block``:
a SELECT under construction), as ``render_block`` and the node renderers share them."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from service.sql.render_expr import column


class Col:
    """One output column of a block: its wire name and how SQL reaches it (``ref``).

    A column a table or derived table exposes is reached as ``table.column`` (``Col.of``), built when first asked
    for: a scan lists every column of its table and a query reads a few (a Column and two Identifiers per
    column, most of q15's rendering of its scans). Columns are compared by identity, never field by field.
    """

    def __init__(
        self,
        qual: str | None,
        name: str,
        ref: exp.Expr | None,
        window: bool = False,
        reached_as: tuple[str, str | None] | None = None,
    ) -> None:
        self.qual = qual
        self.name = name
        self.window = window  # ref holds a window function
        if ref is None and reached_as is None:
            raise ValueError("a column needs its expression or the (name, table) that reaches it")
        self._ref = ref
        self._column: tuple[str, str | None] = reached_as or ("", None)  # (name, table) while ref is unbuilt
        self._handed = False  # ``fresh_ref`` has given out ``ref`` itself

    @staticmethod
    def of(qual: str | None, name: str, sql_name: str, table: str | None = None) -> Col:
        """The column ``name`` reached as ``table.sql_name`` (bare ``sql_name`` without a table).

        >>> c = Col.of("t", "k", "k", "t")
        >>> c.is_column_named("k"), c.fresh_ref().sql(), c.fresh_ref() is c.fresh_ref()
        (True, 't.k', False)
        """
        return Col(qual, name, None, reached_as=(sql_name, table))

    @property
    def ref(self) -> exp.Expr:
        """The expression that reaches the column (not to be put in a tree: ``fresh_ref``)."""
        if self._ref is None:
            self._ref = column(self._column[0], self._column[1])
        return self._ref

    def fresh_ref(self) -> exp.Expr:
        """``ref`` to put in a tree: a node no tree holds yet (a tree node has one parent). The first call gives
        ``ref`` itself when no tree holds it (an aggregate's or window's call, read once by the SELECT list
        above it), later ones a copy.

        >>> agg = Col(None, "total", exp.Sum(this=column("x")))
        >>> first, second = agg.fresh_ref(), agg.fresh_ref()
        >>> first is agg.ref, second is agg.ref, second.sql()
        (True, False, 'SUM(x)')
        """
        ref = self._ref
        if ref is None:
            return column(self._column[0], self._column[1])
        if not self._handed and ref.parent is None:
            self._handed = True
            return ref
        # the tree's own deep copy, without copy.deepcopy's memo around it (a fifth of the copy's time)
        return ref.__deepcopy__({})

    def is_column_named(self, name: str) -> bool:
        """``ref`` is a bare or qualified column called ``name``."""
        if self._ref is None:
            return self._column[0] == name
        return isinstance(self._ref, exp.Column) and self._ref.name == name


@dataclass
class Block:
    """A SELECT under construction."""

    select: exp.Expr
    cols: list[Col]
    stage: int
    projected: bool = False
    complete: bool = True  # cols lists every column (False: scan columns unknown)
    sources: int = 1  # FROM items (tables/derived tables) joined in this block
    grouped: bool = False  # GROUP BY / aggregates: a ``*`` beside them is invalid SQL
    # GROUPING SETS: Spark cannot resolve a key inside HAVING beside an aggregate or GROUPING() call
    # (``HAVING count(*) > 1 AND t.k > 0`` is UNRESOLVED_COLUMN), so filters go to an outer WHERE.
    grouping_sets: bool = False
    out_names: list[str] = field(default_factory=list)
