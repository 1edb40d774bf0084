"""One walk over a parsed query: balance its chains, bound its depth, list what the later steps look at.

Checking tables, setting hints aside, reading alias spellings, naming inner
outputs and normalising identifiers each used to walk the whole tree; on a
TPC-H query those walks cost as much as binding. ``survey`` walks it once,
balancing long AND/OR/UNION chains on the way (see ``parse.balance``), and
hands each step the nodes it needs.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final

from sqlglot import exp

from service.sql.common import TypeKinds, child_nodes
from service.sql.limits import MAX_DEPTH, too_deep
from service.sql.parse import _balanced, _chain_root, _leaves, position

#: what ``plan_select`` counts as an aggregate call
AGGREGATE_CALLS = (exp.AggFunc, exp.Grouping, exp.GroupingId)


@dataclass
class Survey:
    """The nodes of one query that the translation steps read, in breadth-first order."""

    selects: list[exp.Select] = field(default_factory=list)
    tables: list[exp.Table] = field(default_factory=list)
    cte_names: set[str] = field(default_factory=set)
    aliases: list[exp.Expr] = field(default_factory=list)  # Alias and TableAlias
    identifiers: list[exp.Identifier] = field(default_factory=list)
    case_sensitive: bool = False  # a node sqlglot marked case-sensitive: leave normalising to qualify
    #: whether any window call or aggregate call is in the query: SELECT blocks look for them only if so
    windows: bool = False
    aggregates: bool = False


def survey(stmt: exp.Expr) -> Survey:
    """Balance ``stmt``'s chains in place and list its nodes; hints are not entered (they are set aside).

    >>> import sqlglot
    >>> found = survey(sqlglot.parse_one("WITH c AS (SELECT a FROM t) SELECT x.a AS b FROM c AS x"))
    >>> len(found.selects), [t.name for t in found.tables], sorted(found.cte_names)
    (2, ['c', 't'], ['c'])
    >>> found.windows, found.aggregates
    (False, False)
    >>> found = survey(sqlglot.parse_one("SELECT SUM(a) OVER (ORDER BY b) FROM t"))
    >>> found.windows, found.aggregates
    (True, True)
    """
    out = Survey()
    queue: deque[tuple[exp.Expr, int]] = deque([(stmt, 0)])
    while queue:
        node, depth = queue.popleft()
        if depth > MAX_DEPTH:
            raise too_deep(depth, *position(node))
        kind = _KIND(node)
        if kind == _CHAIN and _chain_root(node):
            leaves = _leaves(node)
            if len(leaves) > 2:
                _balanced(node, leaves)
                for c in child_nodes(node):
                    if c.arg_key != "this" and c.arg_key != "expression":
                        queue.append((c, depth + 1))
                below = depth + len(leaves).bit_length()  # the balanced tree's height
                queue.extend((leaf, below) for leaf in leaves)
                continue
        if node.meta_get("case_sensitive"):
            out.case_sensitive = True
        if kind == _IDENTIFIER:
            out.identifiers.append(node)  # type: ignore[arg-type]  # its type's kind says so
            continue
        if kind == _SELECT:
            out.selects.append(node)  # type: ignore[arg-type]
        elif kind == _TABLE:
            out.tables.append(node)  # type: ignore[arg-type]
        elif kind == _ALIAS:
            out.aliases.append(node)
        elif kind == _CTE:
            out.cte_names.add(node.alias_or_name.lower())
        elif kind == _HINT:
            continue
        elif kind == _WINDOW:
            out.windows = True
        elif kind == _AGGREGATE:
            out.aggregates = True
        for c in child_nodes(node):
            queue.append((c, depth + 1))
    return out


#: what ``survey`` does with a node, by the node's type (it meets every node of the query)
_OTHER: Final = 0
_CHAIN: Final = 1
_IDENTIFIER: Final = 2
_SELECT: Final = 3
_TABLE: Final = 4
_ALIAS: Final = 5
_CTE: Final = 6
_HINT: Final = 7
_WINDOW: Final = 8
_AGGREGATE: Final = 9
_KIND: Final = TypeKinds(
    [
        ((exp.Union, exp.And, exp.Or), _CHAIN),  # a chain to balance, if ``_chain_root`` says it starts one
        ((exp.Identifier,), _IDENTIFIER),
        ((exp.Select,), _SELECT),
        ((exp.Table,), _TABLE),
        ((exp.Alias, exp.TableAlias), _ALIAS),
        ((exp.CTE,), _CTE),
        ((exp.Hint,), _HINT),
        ((exp.Window,), _WINDOW),
        (AGGREGATE_CALLS, _AGGREGATE),
    ],
    default=_OTHER,
)
