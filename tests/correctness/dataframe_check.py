"""One differential check of a generated DataFrame pipeline: the original against ``run_dataframe``'s DataFrame on
Spark, the same multiset of rows and the same schema (column names, order, types, nullability); and what the
service did to it (rewritten or run as written, predicates moved down, predicates moved up)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pushdown_client.dataframe import apply_sql, conform_exactly, run_dataframe
from tests.correctness.dataframe_gen import DataFrameGenerator, Pipeline, Udfs


@dataclass
class Outcome:
    """``status``: ``same``, ``mismatch`` (rows or schema differ: a bug) or ``error`` (``reason`` says where)."""

    seed: int
    status: str
    ops: list[str]
    reason: str = ""
    #: the answer needed a barrier or a setting: the optimized DataFrame is not the caller's own
    rewritten: bool = False
    #: decision rows of the answer: a predicate moved below an operator, or above one (pulled up)
    downward: int = 0
    upward: int = 0
    #: the run was as written, and the answer's SQL applied to the leaves was compared too
    applied: bool = False
    #: nodes of the pipeline the translation kept as leaves, and why
    opaque: list[str] = field(default_factory=list)
    detail: str = ""
    #: seconds: the original's collect, ``run_dataframe`` (translate, ask, apply), the optimized collect
    seconds: dict[str, float] = field(default_factory=dict)


def multiset(rows: Any) -> Counter[tuple[Any, ...]]:
    """Rows as a multiset, doubles rounded to 9 places (the data's are exact quarters; averages divide them)."""
    return Counter(tuple(round(v, 9) + 0.0 if isinstance(v, float) else v for v in row) for row in rows)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160] if text else ''}"


def check(pipeline: Pipeline, udfs: Udfs, client: Any, apply_as_written: bool = True) -> Outcome:
    """Run ``pipeline`` as written and as ``run_dataframe`` returns it, and compare. ``apply_as_written``: when
    the answer is run as written (the caller's own DataFrame comes back), also apply the answer's Spark SQL to the
    pipeline's leaves as the runner does for an answer with barriers, and compare that too: so every pipeline
    checks the translation, not only those the service rewrites."""
    outcome = Outcome(pipeline.seed, "same", pipeline.ops)
    original = pipeline.df
    started = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal started
        now = time.perf_counter()
        outcome.seconds[name] = round(now - started, 3)
        started = now

    try:
        expected = multiset(original.collect())
        lap("original")
    except Exception as exc:  # noqa: BLE001 - recorded: the generator should never build such a pipeline
        outcome.status, outcome.reason = "error", f"original fails: {first_line(exc)}"
        return outcome
    try:
        # every rewrite runs: the campaign's tables save milliseconds, below the runner's default floor
        run = run_dataframe(original, client=client, functions=udfs.functions, min_time_saved_s=0)
        lap("optimize")
    except Exception as exc:  # noqa: BLE001 - recorded by reason
        outcome.status, outcome.reason = "error", f"run_dataframe raised: {first_line(exc)}"
        return outcome
    decisions = run.answer.get("decisions") or []
    outcome.downward = sum(1 for d in decisions if d.get("action") == "pushed")
    outcome.upward = sum(1 for d in decisions if d.get("action") == "pulled_up")
    outcome.opaque = list(run.translation.opaque) if run.translation else []
    outcome.rewritten = not run.as_written and run.fallback is None
    if run.fallback is not None:
        outcome.status, outcome.reason = "error", f"fallback: {run.fallback}"
        return outcome
    sql = (run.answer.get("spark") or {}).get("sql", "")
    if not compare(outcome, original.schema, expected, run.dataframe, "optimized", sql, lap):
        return outcome
    if run.as_written and sql and apply_as_written:
        # the caller's own DataFrame came back; what the runner applies when an answer needs barriers must hold too
        try:
            applied = conform_exactly(apply_sql(original.sparkSession, run.translation, sql), original.schema)
        except Exception as exc:  # noqa: BLE001 - a rendering Spark cannot analyze: a bug of the translation
            outcome.status, outcome.reason = "mismatch", f"applied answer: not analyzed: {first_line(exc)}"
            outcome.detail = sql
            return outcome
        outcome.applied = True
        compare(outcome, original.schema, expected, applied, "applied answer", sql, lap)
    return outcome


def compare(
    outcome: Outcome, schema: Any, expected: Counter[tuple[Any, ...]], frame: Any, what: str, sql: str, lap: Any
) -> bool:
    """Whether ``frame`` has ``schema`` and the rows ``expected``; if not, ``outcome`` says how it differs."""
    if frame.schema != schema:
        outcome.status, outcome.reason = "mismatch", f"{what}: schema"
        outcome.detail = f"original {schema.simpleString()}\n{what} {frame.schema.simpleString()}\n{sql}"
        return False
    try:
        got = multiset(frame.collect())
        lap(what)
    except Exception as exc:  # noqa: BLE001 - the original ran: this must too
        outcome.status, outcome.reason = "mismatch", f"{what}: fails: {first_line(exc)}"
        outcome.detail = sql
        return False
    if got != expected:
        outcome.status, outcome.reason = "mismatch", f"{what}: rows"
        missing, extra = expected - got, got - expected
        outcome.detail = f"missing {list(missing.items())[:5]}\nextra {list(extra.items())[:5]}\n{sql}"
        return False
    return True


def check_seed(spark: Any, udfs: Udfs, seed: int, client: Any, apply_as_written: bool = True) -> Outcome:
    return check(DataFrameGenerator(spark, udfs, seed).pipeline(), udfs, client, apply_as_written)
