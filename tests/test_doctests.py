"""Every docstring example in the packages runs and holds (the style guide's "a docstring example" is a test)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("costmodel", "service", "api", "pushdown_client")


def modules_with_examples() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                parts = path.relative_to(ROOT).with_suffix("").parts
                found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def test_the_examples_are_found() -> None:
    """The search sees the modules known to have examples, so an empty search cannot pass the test below."""
    names = modules_with_examples()
    assert {"service.analyzed_tables", "costmodel.trampoline", "service.feedback.keys"} <= set(names)
    assert len(names) > 50


@pytest.mark.parametrize("name", modules_with_examples())
def test_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
