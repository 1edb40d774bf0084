"""The corpus check's fixtures: one Spark session of its own over the empty corpus tables, one DuckDB."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.spark_session import get_spark, java_available


@pytest.fixture(scope="module")
def corpus_spark() -> Iterator[Any]:
    """A ``newSession()`` of the run's shared local Spark: the corpus tables and UDFs, AQE off (check.py)."""
    if not java_available():
        pytest.skip("local Spark needs a Java runtime")
    from tests.corpus.check import corpus_session

    with corpus_session(get_spark()) as spark:
        yield spark
