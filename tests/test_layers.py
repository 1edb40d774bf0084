"""Imports point down only (design.md, "Layers"): ``lint-imports`` checks the contracts in pyproject.toml.

api (HTTP) above service (application) above costmodel (the engine) and pushdown_client (the client, which imports
nothing of the service); the SQL and Substrait adapters use nothing else of the service; the Airflow provider
reaches it only through the client. Unlike tests/test_import_cycles.py, imports inside functions count: that is
where a wrong-way import hides.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
AIRFLOW_SRC = ROOT / "integrations" / "airflow" / "src"
LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def _env() -> dict[str, str]:
    """This checkout first (not an installed copy), and the Airflow provider's sources."""
    path = [str(ROOT), str(AIRFLOW_SRC), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}


def test_the_layering_contracts_hold() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LINT, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"lint-imports failed (pip install -e '.[test]' brings it):\n{output}"
    assert "0 broken" in done.stdout, done.stdout


def test_the_checker_sees_imports_inside_functions() -> None:
    """The worker process imports the request parser inside a function: grimp's graph has that import."""
    graph = grimp.build_graph("service", cache_dir=None)
    details = graph.get_import_details(importer="service.worker_pool", imported="service.request")
    assert details, "grimp no longer reports imports made inside functions"
    line = (ROOT / "service" / "worker_pool.py").read_text().splitlines()[details[0]["line_number"] - 1]
    assert line.startswith("    "), line  # indented: inside a function
