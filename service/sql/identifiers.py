"""Identifiers normalized as a dialect resolves them: sqlglot's ``Dialect.normalize_identifier``
is interpreted Python, and the binder calls it once per identifier of every query (26 times on TPC-H q01, about
2 µs each). A dialect that overrides it (BigQuery) keeps its own; the rule for the rest is sqlglot's, read from the
dialect's settings (tests/sql/test_identifiers.py holds the two to the same result in every dialect)."""

from __future__ import annotations

import functools
import string
from collections.abc import Callable
from typing import Any, Final

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy

from service.sql.common import dialect_of

#: What normalizing does to one identifier (in place).
Normalize = Callable[[exp.Identifier], Any]

_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_UPPER: Final = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)


class _Normalizer:
    """One dialect's rule: quoted identifiers too or not, to upper or lower case, ASCII letters only or all."""

    def __init__(self, upper: bool, quoted_too: bool, ascii_only: bool) -> None:
        self.upper = upper
        self.quoted_too = quoted_too
        self.ascii_only = ascii_only

    def __call__(self, ident: exp.Identifier) -> None:
        if ident.quoted and not self.quoted_too:
            return
        text: str = ident.this
        if self.ascii_only:
            text = text.translate(_UPPER if self.upper else _LOWER)
        else:
            text = text.upper() if self.upper else text.lower()
        ident.set("this", text)


def _unchanged(ident: exp.Identifier) -> None:
    return None


@functools.lru_cache(maxsize=64)
def identifier_normalizer(name: str) -> Normalize:
    """How dialect ``name`` normalizes an identifier: sqlglot's own method when the dialect overrides it.

    >>> ident = exp.to_identifier("FoO")
    >>> identifier_normalizer("spark")(ident)
    >>> ident.this
    'foo'
    """
    dialect = dialect_of(name)
    if type(dialect).normalize_identifier is not Dialect.normalize_identifier:
        return dialect.normalize_identifier
    strategy = dialect.normalization_strategy
    if strategy is NormalizationStrategy.CASE_SENSITIVE:
        return _unchanged
    return _Normalizer(
        upper=strategy in (NormalizationStrategy.UPPERCASE, NormalizationStrategy.CASE_INSENSITIVE_UPPERCASE),
        quoted_too=strategy
        in (NormalizationStrategy.CASE_INSENSITIVE, NormalizationStrategy.CASE_INSENSITIVE_UPPERCASE),
        ascii_only=bool(dialect.ASCII_ONLY_NORMALIZATION),
    )
