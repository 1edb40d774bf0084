"""No import cycle among the project's modules (issue 18: the expr <-> plan cycle, and any other).

Counted: imports at module level, where a cycle makes import order matter. Not counted: imports under
``if TYPE_CHECKING:`` (annotations only) and inside functions (deliberately lazy: optional parts, PySpark).
Which way imports point, inside functions too, is tests/test_layers.py's check (import-linter).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("api", "service", "costmodel")


def module_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports at module level (``from a import b`` counts ``a`` and ``a.b``)."""
    paths = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            paths[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        targets: set[str] = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
            elif isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def cycle_through(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """A path start -> ... -> start, if there is one (breadth first, so the shortest)."""
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node]):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if target not in parents:
                    parents[target] = node
                    following.append(target)
        frontier = following
    return None


def test_no_module_imports_itself_through_others() -> None:
    graph = module_graph()
    assert "costmodel.expr" in graph["costmodel.plan"]  # the graph is real: plan reads expressions
    cycles = {name: cycle for name in graph if (cycle := cycle_through(graph, name))}
    assert not cycles, f"import cycles: {sorted(cycles.values())[:3]}"


def test_the_check_finds_a_cycle() -> None:
    assert cycle_through({"a": {"b"}, "b": {"c"}, "c": {"a"}}, "a") == ["a", "b", "c", "a"]
    assert cycle_through({"a": {"b"}, "b": set()}, "a") is None
