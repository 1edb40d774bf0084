"""The Airflow environment (``.venv-airflow``), built once per run by ``scripts/airflow-venv.sh`` when missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-airflow"


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without PUSHDOWN_* and AIRFLOW* variables and without PYTHONPATH, plus ``extra``.

    No PYTHONPATH: a checkout on it (as a worktree's test run sets) would make the service importable in the
    Airflow environment, which is to have only the client."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PUSHDOWN_", "AIRFLOW")) and k != "PYTHONPATH"}
    return {**env, **extra}


@pytest.fixture(scope="session")
def airflow_python() -> Path:
    done = subprocess.run(
        ["bash", "scripts/airflow-venv.sh"],
        cwd=ROOT,
        env=clean_env(PYTHON=sys.executable, PUSHDOWN_AIRFLOW_VENV=str(VENV)),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, f"building {VENV} failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return VENV / "bin" / "python"
