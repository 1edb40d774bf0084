"""The README's and the Airflow guide's Python examples name only what they define or import (a snippet that
calls ``describe_tables()`` defined nowhere cannot be copied into a DAG file), and parse."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "docs" / "airflow.md"]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def snippets() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for i, code in enumerate(BLOCK.findall(doc.read_text())):
            if re.search(r"^(from|import) ", code, re.M):  # a program, not an answer's shape
                found.append((f"{doc.name}#{i}", code))
    return found


@pytest.mark.parametrize(("name", "code"), snippets(), ids=[name for name, _ in snippets()])
def test_a_python_example_defines_or_imports_every_name_it_uses(name: str, code: str) -> None:
    ast.parse(code)
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "F821,F811", "--stdin-filename", "x.py", "-"],
        input=code,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, f"{name}:\n{result.stdout}"


def test_the_readme_library_example_runs_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """The "Using the engine as a library" example, executed as written: it prints the plan after and the log."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("# Using the engine as a library") :]
    code = BLOCK.search(section)
    assert code is not None
    exec(compile(code.group(1), "README.md", "exec"), {"__name__": "readme_example"})  # noqa: S102
    printed = capsys.readouterr().out
    assert "TableScan: t" in printed and "v > 3" in printed
