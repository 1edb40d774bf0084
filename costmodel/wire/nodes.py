"""Walks over a wire plan's JSON that do not read it into nodes, which the service and the SQL adapter make on
every request (the nodes the answer warns about, the columns a scan is seen to read, the plan numbered)."""

from __future__ import annotations

from typing import Any, Final


def node_dicts(value: Any) -> list[dict[str, Any]]:
    """Every node object (a dict with an ``op``) in ``value``, subqueries included, walked without recursion;
    only dicts and lists are pushed, so the strings and numbers that make up most of a plan cost one type check.
    Each node comes before what it holds, which comes last key first (``nodes_in_order`` for key order).

    >>> plan = {"op": "filter", "predicate": {"subquery": {"op": "scan"}}, "input": {"op": "join", "inputs": []}}
    >>> [node["op"] for node in node_dicts(plan)]
    ['filter', 'join', 'scan']
    """
    return _nodes(value, keys_in_order=False)


def nodes_in_order(value: Any) -> list[dict[str, Any]]:
    """``node_dicts`` in the order a depth-first walk over keys in their order meets them: each node before what it
    holds, a node's inputs and subqueries in the order of its keys (the order the Spark target lists barriers in).

    >>> plan = {"op": "filter", "predicate": {"subquery": {"op": "scan"}}, "input": {"op": "join", "inputs": []}}
    >>> [node["op"] for node in nodes_in_order(plan)]
    ['filter', 'scan', 'join']
    """
    return _nodes(value, keys_in_order=True)


def node_ids(value: Any) -> set[str]:
    """The ids (as text) of the nodes in ``value`` that have one, subqueries included.

    >>> sorted(node_ids({"op": "filter", "id": "f", "input": {"op": "scan", "id": 7}}))
    ['7', 'f']
    """
    return {str(node["id"]) for node in nodes_in_order(value) if "id" in node}


def _nodes(value: Any, keys_in_order: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        inner: list[Any]
        if isinstance(item, dict):
            mapping: dict[Any, Any] = item
            if "op" in mapping:
                out.append(mapping)
            inner = [child for child in mapping.values() if isinstance(child, (dict, list))]
        elif isinstance(item, list):
            inner = [child for child in item if isinstance(child, (dict, list))]
        else:
            continue
        if keys_in_order:  # the stack pops the last pushed first
            inner.reverse()
        stack.extend(inner)
    return out


def column_refs(value: Any) -> dict[str, list[str]]:
    """Every qualified column ``q.c`` in ``value`` (a wire plan or part of one): the names of each qualifier
    (its key in lower case), each once, in the order a depth-first walk in key order meets them.

    The SQL adapter lists a scan's columns from them when the catalog is not at hand.

    >>> column_refs({"op": "filter", "predicate": {"args": [{"col": "T.b"}, {"col": "t.a"}, {"col": "T.b"}]}})
    {'t': ['b', 'a']}
    """
    out: dict[str, list[str]] = {}
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        inner: list[Any]
        if isinstance(item, dict):
            col = item.get("col")
            if isinstance(col, str) and "." in col:
                qual, name = col.rsplit(".", 1)
                names = out.setdefault(qual.lower(), [])
                if name not in names:
                    names.append(name)
            inner = list(item.values())
        elif isinstance(item, list):
            inner = item
        else:
            continue
        for i in range(len(inner) - 1, -1, -1):  # pushed last to first: popped in key order
            child = inner[i]
            if isinstance(child, (dict, list)):
                stack.append(child)
    return out


#: the keys of a wire node that hold its inputs
INPUT_KEYS: Final = ("input", "left", "right", "inputs")


def numbered(plan: dict[str, Any], subqueries: bool = True) -> dict[str, Any]:
    """A copy of ``plan`` whose nodes are numbered n1, n2, ... in pre-order (a node, the subqueries in its
    expressions, then its inputs), each node's ``op`` and ``id`` first; walked without recursion over the
    plan's depth (a 500-join chain is 500 nodes deep). The copy shares ``plan``'s expressions that hold no
    subquery (the engine reads them and changes nothing): only nodes and the paths to subqueries are new.
    ``subqueries=False``: the caller knows no expression holds one (the SQL adapter counts those it makes), so
    expressions are shared without looking inside them.

    >>> numbered({"op": "filter", "predicate": {"lit": True}, "input": {"op": "scan", "table": "t"}})
    {'op': 'filter', 'id': 'n1', 'predicate': {'lit': True}, 'input': {'op': 'scan', 'id': 'n2', 'table': 't'}}
    """
    counter = 0
    root: dict[str, Any] = {}
    # (plan node, where its copy goes, under which key); a stack, so subqueries (pushed last) come first
    stack: list[tuple[dict[str, Any], Any, Any]] = [(plan, root, "plan")]
    while stack:
        node, target, key = stack.pop()
        counter += 1
        out: dict[str, Any] = {"op": node["op"], "id": f"n{counter}"}
        target[key] = out
        found: list[tuple[dict[str, Any], Any, Any]] = []
        for k, value in node.items():
            if k != "op" and k != "id" and k not in INPUT_KEYS:
                out[k] = _numbered_expression(value, found) if subqueries else value
        inputs: list[tuple[dict[str, Any], Any, Any]] = []
        for k in INPUT_KEYS:
            if k not in node:
                continue
            if k == "inputs":
                branches = node[k]
                slots: list[Any] = [None] * len(branches)
                out[k] = slots
                for i, branch in enumerate(branches):
                    inputs.append((branch, slots, i))
            else:
                out[k] = None
                inputs.append((node[k], out, k))
        stack.extend(reversed(inputs))
        stack.extend(reversed(found))
    return root["plan"]  # type: ignore[no-any-return]


def _numbered_expression(value: Any, subqueries: list[tuple[dict[str, Any], Any, Any]]) -> Any:
    """A wire expression (or any JSON value) as ``numbered`` puts it in its copy: ``value`` itself when no
    subquery is inside it, else a copy of the containers on the way to each subquery, whose plan is queued, in
    order, to be numbered into its copy (a subquery inside a shared expression is numbered once per place).
    """
    if type(value) is list:
        changed_list: list[Any] | None = None
        for i, item in enumerate(value):
            if type(item) is dict or type(item) is list:
                new = _numbered_expression(item, subqueries)
                if new is not item:
                    if changed_list is None:
                        changed_list = list(value)
                    changed_list[i] = new
        return value if changed_list is None else changed_list
    if type(value) is not dict:
        return value
    if "subquery" in value:
        out = dict(value)
        subqueries.append((value["subquery"], out, "subquery"))
        if "args" in out:
            out["args"] = _numbered_expression(out["args"], subqueries)
        return out
    changed: dict[str, Any] | None = None
    for key, item in value.items():
        if type(item) is dict or type(item) is list:
            new = _numbered_expression(item, subqueries)
            if new is not item:
                if changed is None:
                    changed = dict(value)
                changed[key] = new
    return value if changed is None else changed
