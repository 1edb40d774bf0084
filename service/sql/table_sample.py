"""``TABLESAMPLE`` in and out: the SQL forms of the ``sample`` kind (``costmodel/kinds/sample.py``).

In: a Bernoulli sample of a percentage, seeded or not, on a table or a derived table (Spark's
``TABLESAMPLE (10 PERCENT) REPEATABLE (42)``, the standard's and DuckDB's ``TABLESAMPLE BERNOULLI (10 PERCENT)``,
PostgreSQL's ``TABLESAMPLE BERNOULLI (10)``). Whatever the wire ``sample`` cannot carry exactly is refused by name:
a row count (``TABLESAMPLE (100 ROWS)``, and a size without ``PERCENT``, which sqlglot reads the same), Hive's
``BUCKET x OUT OF y`` (rows chosen by a hash, not drawn), a block sample (``SYSTEM``, and a sample without a method
outside Spark, where the default is a block sample), reservoir sampling.

Out: Spark's ``TABLESAMPLE (p PERCENT) REPEATABLE (s)`` (no method: Spark's sample is Bernoulli) and, for DuckDB and
the rest, ``TABLESAMPLE BERNOULLI (p PERCENT) REPEATABLE (s)``. The percentage is written so that Spark's parser,
which divides it by 100, gets back exactly the wire's fraction (a fraction without such a form is refused).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlglot import exp

from service.sql.errors import SqlError
from service.sql.parse import unsupported

#: Dialects whose sample without a method is Spark's Bernoulli sample (and whose SQL out names no method).
SPARK_SAMPLE_DIALECTS = ("spark", "spark2", "databricks", "hive")
#: Dialects sqlglot writes a seed for as ``SEED (s)``, which Spark's parser refuses (it reads ``REPEATABLE (s)``).
_SEED_SPELLED_WRONG = ("spark", "spark2")


def sample_node(sample: exp.Expr, dialect: str, below: dict[str, Any]) -> dict[str, Any]:
    """The wire ``sample`` over ``below`` for a parsed ``TABLESAMPLE`` (``dialect``: the SQL's), or a refusal."""
    if not isinstance(sample, exp.TableSample) or sample.expressions:
        raise unsupported("TABLESAMPLE with several sample sets", sample)
    if sample.args.get("bucket_numerator") is not None:
        raise unsupported("TABLESAMPLE BUCKET x OUT OF y", sample)
    if sample.args.get("size") is not None or sample.args.get("rows") is not None:
        raise unsupported("TABLESAMPLE by a row count or without PERCENT", sample)
    method = sample.args.get("method")
    name = method.name.upper() if method is not None else None
    if name is None and dialect.lower() not in SPARK_SAMPLE_DIALECTS:
        raise unsupported("TABLESAMPLE without BERNOULLI outside Spark", sample)
    if name not in (None, "BERNOULLI"):
        raise unsupported(f"TABLESAMPLE {name}", sample)
    percent = sample.args.get("percent")
    if not isinstance(percent, exp.Literal) or percent.is_string:
        raise unsupported("TABLESAMPLE whose PERCENT is not a number", sample)
    fraction = float(percent.this) / 100.0  # as Spark's parser computes it
    if not 0 < fraction <= 1:
        raise unsupported("TABLESAMPLE outside (0, 100] PERCENT", sample)
    node: dict[str, Any] = {"op": "sample", "fraction": fraction, "method": "bernoulli"}
    seed = sample.args.get("seed")
    if seed is not None:
        if not isinstance(seed, exp.Literal) or seed.is_string or not seed.this.lstrip("-").isdigit():
            raise unsupported("TABLESAMPLE REPEATABLE whose seed is not an integer", sample)
        node["seed"] = int(seed.this)
    node["input"] = below
    return node


def percent_text(fraction: float) -> str:
    """``fraction`` as a percentage that reads back, divided by 100 as Spark does, as exactly ``fraction``.

    >>> percent_text(0.3), percent_text(0.125), percent_text(1.0)
    ('30', '12.5', '100')
    """
    text = format((Decimal(repr(fraction)) * 100).normalize(), "f")
    if float(text) / 100.0 != fraction:
        raise SqlError("invalid_plan", f"sample fraction {fraction!r} has no exact PERCENT form")
    return text


def sample_clause(n: dict[str, Any], dialect: str) -> exp.Expr:
    """The ``TABLESAMPLE`` clause of wire sample ``n`` in ``dialect``, for a table's or a derived table's ``sample``."""
    fraction, method, seed = n.get("fraction"), n.get("method", "bernoulli"), n.get("seed")
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise SqlError("invalid_plan", "sample needs a fraction in (0, 1]", detail={"id": n.get("id")})
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise SqlError("invalid_plan", "sample seed must be an integer", detail={"id": n.get("id")})
    percent = percent_text(float(fraction))
    if dialect in SPARK_SAMPLE_DIALECTS:
        if method != "bernoulli":
            raise SqlError(
                "invalid_plan",
                f"a {method} sample has no Spark SQL form (Spark samples rows)",
                detail={"id": n.get("id")},
            )
        if seed is not None and dialect in _SEED_SPELLED_WRONG:
            # The clause as Spark's grammar reads it; sqlglot's Spark writer would spell the seed ``SEED (s)``.
            return exp.Var(this=f" TABLESAMPLE ({percent} PERCENT) REPEATABLE ({seed})")
        return exp.TableSample(
            percent=exp.Literal.number(percent), seed=exp.Literal.number(seed) if seed is not None else None
        )
    if method not in ("bernoulli", "system"):
        raise SqlError("invalid_plan", f"unknown sample method {method!r}", detail={"id": n.get("id")})
    return exp.TableSample(
        method=exp.Var(this=method.upper()),
        percent=exp.Literal.number(percent),
        seed=exp.Literal.number(seed) if seed is not None else None,
    )
