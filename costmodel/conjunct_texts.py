"""Where each predicate of a plan stands, as text: the conjuncts of every filter and join condition, spelled as the
decisions spell predicates. The service's Spark target matches kept decisions against them
(``service.spark_plan``).
"""

from __future__ import annotations

from costmodel.expr import Subquery, conjuncts, walk
from costmodel.plan import Filter, Join, Node, children, node_expressions
from costmodel.render import to_sql


def conjunct_texts(plan: Node) -> dict[str, list[str]] | None:
    """Per filter and per join with a condition, by node id, its conjuncts' texts; subqueries' plans included.
    None when two nodes share an id (a subquery's plan copied into several places, which the wire answer tells
    apart by renumbering the copies: ``costmodel.unique_ids``): by id, their texts cannot be told apart.

    >>> from costmodel.expr import Call, Column, Literal
    >>> from costmodel.plan import Field, Scan
    >>> a = Column("a", 1)
    >>> scan = Scan("s", "t", None, (), (Field("a", "int", 1),))
    >>> predicate = Call("and", (Call(">", (a, Literal(1, "int"))), Call("<", (a, Literal(9, "int")))))
    >>> conjunct_texts(Filter("f", predicate, scan))
    {'f': ['a > 1', 'a < 9']}
    """
    out: dict[str, list[str]] = {}
    seen: set[str] = set()
    stack: list[Node] = [plan]
    while stack:
        node = stack.pop()
        if node.id in seen:
            return None
        seen.add(node.id)
        if isinstance(node, Filter):
            out[node.id] = [to_sql(c) for c in conjuncts(node.predicate)]
        elif isinstance(node, Join) and node.on is not None:
            out[node.id] = [to_sql(c) for c in conjuncts(node.on)]
        stack.extend(children(node))
        for expr in node_expressions(node):
            stack.extend(e.plan for e in walk(expr) if isinstance(e, Subquery))
    return out
