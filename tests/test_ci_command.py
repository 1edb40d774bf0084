"""CI (``.ci/run``) runs exactly the README's test command, and that command runs the full suite."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readmes_test_command() -> None:
    setup = re.search(r"^## Set up\n(.*?)(?=^## )", (ROOT / "README.md").read_text(), re.MULTILINE | re.DOTALL)
    assert setup, "README.md has no '## Set up' section"
    blocks = re.findall(r"^```bash\n(.*?)^```", setup.group(1), re.MULTILINE | re.DOTALL)
    (command,) = [line.strip() for block in blocks for line in block.splitlines() if "pytest" in line]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert ci[-1] == command
    assert "set -euo pipefail" in ci  # a failing step fails CI
    assert command.endswith("--full")  # CI runs every tier
