"""Spark tests share the run's one local session (tests/spark_session.py)."""

from __future__ import annotations

import pytest

from tests.spark_session import get_spark, java_available


@pytest.fixture(scope="session")
def spark():
    if not java_available():
        pytest.skip("local Spark needs a Java runtime")
    return get_spark()
