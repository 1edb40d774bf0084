"""The README's test command is where lint and format run: ruff format and ruff check over the whole tree."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "args",
    [["format", "--check", "."], ["check", "."]],
    ids=["ruff-format", "ruff-check"],
)
def test_ruff_is_clean(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
