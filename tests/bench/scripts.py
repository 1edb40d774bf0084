"""The benchmark scripts under bench/ as modules, for the smoke tests that run them at a tiny scale."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load_bench(stem: str) -> Any:
    """``bench/<stem>.py`` imported as the module ``bench_<stem>`` (registered in ``sys.modules``: dataclasses
    resolve string annotations through their module)."""
    spec = importlib.util.spec_from_file_location(f"bench_{stem}", BENCH / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
