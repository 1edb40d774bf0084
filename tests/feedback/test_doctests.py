"""The docstring examples of the feedback modules run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "service.feedback.annotate",
    "pushdown_client.feedback.graph",
    "service.feedback.keys",
    "pushdown_client.feedback.mapping",
    "pushdown_client.feedback.spark",
    "service.feedback.use_case",
]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0
    assert result.failed == 0
