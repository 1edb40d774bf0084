"""The client's own distribution ships the feedback code, so a runner with only ``pushdown-client`` installed (the
Airflow provider's environment) can send actual rows; and that code needs nothing of the service."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FEEDBACK = ROOT / "pushdown_client" / "feedback"


def test_the_distribution_builds_the_feedback_package(tmp_path: Path) -> None:
    """What ``pip install ./pushdown_client`` installs: setuptools' build of its pyproject (in a copy of it)."""
    source = tmp_path / "source"
    shutil.copytree(ROOT / "pushdown_client", source, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    done = subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py", "--build-lib", "out"],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    built = {p.relative_to(source / "out").as_posix() for p in (source / "out").rglob("*.py")}
    expected = {f"pushdown_client/feedback/{p.name}" for p in FEEDBACK.glob("*.py")}
    assert expected <= built, sorted(expected - built)
    assert {"pushdown_client/spark_runner.py", "pushdown_client/client.py"} <= built


def _imported_roots(path: Path) -> set[str]:
    """The top-level packages a module imports (relative imports are its own package)."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_the_client_runner_and_feedback_code_import_nothing_of_the_service() -> None:
    # the [spark] extra's dependencies (pushdown_client/pyproject.toml), and the client itself
    allowed = set(sys.stdlib_module_names) | {"pyspark", "py4j", "sqlglot", "pushdown_client", "__future__"}
    client = ROOT / "pushdown_client"
    for path in [*FEEDBACK.glob("*.py"), *client.glob("*.py")]:
        roots = _imported_roots(path)
        if path.name == "udf_timing.py":  # pandas only to time a pandas UDF, which cannot exist without it
            roots -= {"pandas"}
        assert roots <= allowed, f"{path.name} imports {sorted(roots - allowed)}"
