"""The README's quickstart, run as written: analyze a Parquet table, optimize SQL with no catalog, run the
rewritten query on Spark, and find it in the dashboard's API. Only the install line is skipped (the suite
runs from an installed tree) and the port is a free one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serving import free_port
from tests.spark_session import java_available

README = Path(__file__).resolve().parents[2] / "README.md"


def quickstart_script(port: int) -> str:
    section = README.read_text().split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    assert len(blocks) >= 4, "the quickstart's code blocks"
    lines = [line for block in blocks for line in block.splitlines() if not line.startswith("python -m pip install")]
    body = "\n".join(lines).replace("8000", str(port))
    return "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + body + "\n"


@pytest.mark.slow
@pytest.mark.timeout(600)  # two Spark start-ups and an analyze job: minutes on a busy machine
def test_the_readme_quickstart_runs_as_written(tmp_path: Path, clean_env: dict[str, str]) -> None:
    if not java_available():
        pytest.skip("no Java runtime: local Spark cannot start")
    env = {
        **clean_env,
        "PATH": os.path.dirname(sys.executable) + os.pathsep + clean_env.get("PATH", ""),
        "PUSHDOWN_SPARK_MASTER": "local[1]",
    }
    result = subprocess.run(
        ["bash", "-c", quickstart_script(free_port())],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=560,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert out.startswith("pushdown ")  # --version
    assert "'analyzed_table': 'orders'" in out and "'resolved_by': 'name'" in out  # no catalog was sent
    assert "PushedFilters: [" in out and "status" in out.split("PushedFilters: [", 1)[1]  # Spark pushed it
    rows = int(re.search(r"^(\d+) rows$", out, flags=re.M).group(1))
    assert 0 < rows < 50_000
    assert "SELECT id, total FROM" in out.splitlines()[-1]  # the dashboard's API lists the query
