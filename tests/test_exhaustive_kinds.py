"""Every dispatch over operator kinds is exhaustive: a new kind is a type error at each place it must be handled.

The test copies the packages, adds a dummy node class to the ``Node`` union (costmodel/plan_nodes.py) and a dummy
op to the wire op lists (``WireOp`` in costmodel/kinds/registry.py and in the client's feedback mapping), runs mypy
on the copy as the project configures it, and expects exactly one error in each dispatch listed in ``SITES``. A
dispatch written as a default (an ``isinstance`` chain, a ``getattr`` lookup, an ``else``) would raise nothing there
and fail this test; so would a new exhaustive dispatch missing from the list (docs/operator-kinds.md lists them).
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: (file, function) of every exhaustive dispatch over kinds: what a new kind must add a case to.
SITES = {
    ("costmodel/kinds/registry.py", "kind_name"),  # the node class -> its kind (every hook of the kind's module)
    ("costmodel/plan.py", "map_expressions"),  # the expressions a node holds, rewritten
    ("service/substrait/to_substrait.py", "rel"),  # the Substrait relation, or a refusal by name
    ("service/sql/render_nodes.py", "dispatch"),  # the SQL renderer's op_* method
    ("service/sql/plan_names.py", "_rule"),  # the names a node built from SQL shows its parent
    ("pushdown_client/feedback/mapping.py", "visit"),  # Spark's operator for the node, in the client
}

DUMMY = """

@dataclass(frozen=True, slots=True)
class Dummy:
    id: str
    input: Node

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self
"""


def _add_dummy_kind(copy: Path) -> None:
    nodes = copy / "costmodel" / "plan_nodes.py"
    text = nodes.read_text()
    union = re.search(r"^Node = .*$", text, re.M)
    assert union is not None
    nodes.write_text(text[: union.start()] + DUMMY.lstrip("\n") + "\n\n" + union.group(0) + " | Dummy\n")
    for lists in ("costmodel/kinds/registry.py", "pushdown_client/feedback/mapping.py"):
        path = copy / lists
        text = path.read_text()
        assert text.count('    "sample",\n]') == 1, f"{lists}: the wire op list ends otherwise"
        path.write_text(text.replace('    "sample",\n]', '    "sample",\n    "dummy",\n]'))


def _function_at(path: Path, line: int) -> str:
    """The innermost function of ``path`` holding ``line``."""
    holding = [
        node
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or 0)
    ]
    return max(holding, key=lambda node: node.lineno).name if holding else "<module>"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_mypy_names_every_place_a_new_kind_must_be_handled(tmp_path: Path) -> None:
    copy = tmp_path / "project"
    copy.mkdir()
    for package in ("api", "service", "costmodel", "pushdown_client"):
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__", "static"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    _add_dummy_kind(copy)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=copy,
        capture_output=True,
        text=True,
    )
    errors = re.findall(r"^([\w/]+\.py):(\d+): error: (.*)$", done.stdout, re.M)
    assert errors, done.stdout + done.stderr
    sites = [(path, _function_at(copy / path, int(line))) for path, line, _ in errors]
    assert sorted(sites) == sorted(SITES), "\n".join(f"{p}:{n}: {m}" for p, n, m in errors)
