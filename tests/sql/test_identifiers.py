"""service.sql.identifiers: the compiled identifier normalizer gives sqlglot's result in every dialect."""

from __future__ import annotations

import pytest
from sqlglot import exp
from sqlglot.dialects.dialect import DIALECT_MODULE_NAMES, Dialect

from service.sql.common import dialect_of
from service.sql.identifiers import _Normalizer, identifier_normalizer

TEXTS = ["FoO", "foo", "FOO", "ÀbÇ", "àbç", "a B", "Straße", "x1_Y"]
DIALECTS = sorted({name for name in DIALECT_MODULE_NAMES if Dialect.get(name) is not None} | {"spark"})


@pytest.mark.parametrize("name", DIALECTS)
def test_the_same_as_sqlglot_in_every_dialect(name: str) -> None:
    normalize = identifier_normalizer(name)
    for text in TEXTS:
        for quoted in (False, True):
            ours, theirs = exp.to_identifier(text, quoted=quoted), exp.to_identifier(text, quoted=quoted)
            normalize(ours)
            dialect_of(name).normalize_identifier(theirs)
            assert (ours.this, ours.quoted) == (theirs.this, theirs.quoted), (name, text, quoted)


def test_spark_is_compiled_code_not_sqlglots_method() -> None:
    assert isinstance(identifier_normalizer("spark"), _Normalizer)  # Spark's rule is the base class's
    assert identifier_normalizer("spark") is identifier_normalizer("spark")
