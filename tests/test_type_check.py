"""The README's test command type-checks the project: mypy over api/, service/ and costmodel/ as pyproject.toml
configures it: costmodel/ under the flags of `mypy --strict`, the rest with check_untyped_defs (modules still
listed under an ignore_errors override are the ones not yet clean)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(600)  # a cold cache on a busy machine
def test_mypy_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout


def test_the_type_check_would_fail_on_a_type_error(tmp_path: Path) -> None:
    """The check is real: the same configuration refuses a file with a type error."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x: int) -> str:\n    return x\n")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), str(bad)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "Incompatible return value type" in done.stdout


def test_the_engine_is_checked_strictly(tmp_path: Path) -> None:
    """costmodel/ is held to `mypy --strict`: an unannotated function there is an error, elsewhere it is not."""
    for package in ("costmodel", "service"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / package / "loose.py").write_text("def f(x):\n    return x\n")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "costmodel", "service"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stdout
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert errors and all(line.startswith("costmodel/loose.py") for line in errors), done.stdout
    assert "no-untyped-def" in done.stdout
