"""Estimates from what ran: the observed selectivity of a predicate goes in front of the sample.

``FeedbackSource`` is one more ``SelectivitySource`` for the engine's estimator chain (no engine change): for a
predicate on one table it finds the observations of the same normalized predicate on that table, or else, within
the same pipeline task, of the same predicate template (the literal changes between runs, the data it picks out
usually does not). The newest observation answers:

- as observed, when the table's row count and statistics version are those the observation was made under;
- blended with the rest of the chain's estimate (sample, statistics, defaults) when they changed: the observation
  weighs ``0.5 * min(rows_then, rows_now) / max(rows_then, rows_now)``, so a table that grew tenfold mostly trusts
  its new sample.

Each answer is remembered under the predicate's text (``details``) with the number of observations, the age of
the newest and whether it was blended, which the service adds to the answer's estimates.

``observations_from`` turns a runner's counts into observations: one per scan with filters whose count was posted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from costmodel.estimate import ColumnInfo, DefaultSource, SelectivityEstimate, SelectivitySource
from costmodel.expr import Expr
from costmodel.plan import Scan, walk_plan
from costmodel.render import to_sql
from costmodel.sample import wilson_interval
from service.feedback.keys import predicate_key
from service.feedback.store import Observation

#: How much an observation weighs against the sample once the table changed (scaled by the size ratio).
CHANGED_WEIGHT = 0.5


class FeedbackSource:
    """Observed selectivities, newest first, for the tables of one request."""

    name = "feedback"

    def __init__(
        self,
        observations: Sequence[Observation],
        fallback: Sequence[SelectivitySource],
        versions: Mapping[str, str | None] | None = None,
        pipeline: str | None = None,
        task: str | None = None,
        now: datetime | None = None,
    ) -> None:
        self.by_predicate: dict[tuple[str, str], list[Observation]] = {}
        self.by_template: dict[tuple[str, str], list[Observation]] = {}
        for obs in observations:
            self.by_predicate.setdefault((obs.table, obs.predicate), []).append(obs)
            if pipeline is not None and task is not None and (obs.pipeline, obs.task) == (pipeline, task):
                self.by_template.setdefault((obs.table, obs.template), []).append(obs)
        self.fallback = tuple(fallback)
        self.versions = {k.lower(): v for k, v in (versions or {}).items()}
        self.now = now or datetime.now(UTC)
        #: predicate text (as the engine renders it) -> how feedback answered it
        self.details: dict[str, dict[str, Any]] = {}

    def estimate(self, predicate: Expr, columns: Mapping[int, ColumnInfo]) -> SelectivityEstimate | None:
        key = predicate_key([predicate], columns)
        if key is None:
            return None
        table, exact, template = key
        matched, found = "predicate", self.by_predicate.get((table, exact))
        if not found:
            matched, found = "task", self.by_template.get((table, template))
        if not found:
            return None
        newest = found[0]
        rows_now = next((info.table_rows for info in columns.values() if info.table.lower() == table), None)
        changed = _changed(newest, rows_now, self.versions.get(table))
        observed = newest.selectivity
        low, high = wilson_interval(round(newest.rows_out), max(1, round(newest.rows_in)))
        if changed:
            other = self._fallback(predicate, columns)
            ratio = min(newest.table_rows or 0.0, rows_now or 0.0) / max(newest.table_rows or 0.0, rows_now or 0.0, 1.0)
            weight = CHANGED_WEIGHT * ratio
            selectivity = weight * observed + (1 - weight) * other.selectivity
            low, high = min(low, other.low), max(high, other.high)
        else:
            selectivity = observed
        age = (self.now - newest.observed_at).total_seconds() if newest.observed_at else None
        self.details[to_sql(predicate)] = {
            "selectivity": round(selectivity, 6),
            "observations": len(found),
            "age_s": None if age is None else round(max(0.0, age), 3),
            "matched": matched,
            "blended": changed,
        }
        return SelectivityEstimate(selectivity, min(low, selectivity), max(high, selectivity), self.name)

    def _fallback(self, predicate: Expr, columns: Mapping[int, ColumnInfo]) -> SelectivityEstimate:
        for source in self.fallback:
            found = source.estimate(predicate, columns)
            if found is not None:
                return found
        return DefaultSource().estimate(predicate, columns)


def _changed(obs: Observation, rows_now: float | None, version_now: str | None) -> bool:
    """Whether the table is not the one observed: another row count or another statistics version."""
    if obs.table_rows is not None and rows_now is not None and not math.isclose(obs.table_rows, rows_now):
        return True
    return obs.statistics_version is not None and version_now is not None and obs.statistics_version != version_now


def observations_from(
    plan: Any,
    columns: Mapping[int, ColumnInfo],
    actual: Mapping[str, Mapping[str, Any]],
    versions: Mapping[str, str | None],
    pipeline: str | None,
    task: str | None,
) -> list[Observation]:
    """One observation per scan of ``plan`` (the engine's form) with filters and a posted ``rows_out``.

    ``rows_in`` is the posted one, else the table's row count the request was estimated with.
    """
    found: list[Observation] = []
    for node in walk_plan(plan):
        if not isinstance(node, Scan) or not node.filters or node.id not in actual:
            continue
        key = predicate_key(list(node.filters), columns)
        if key is None:
            continue
        table, exact, template = key
        table_rows = next((info.table_rows for info in columns.values() if info.table.lower() == table), None)
        counts = actual[node.id]
        rows_in = counts.get("rows_in")
        rows_in = float(rows_in) if rows_in is not None else table_rows
        if rows_in is None:
            continue
        found.append(
            Observation(
                node.id,
                table,
                exact,
                template,
                rows_in,
                float(counts["rows_out"]),
                table_rows,
                versions.get(table),
                pipeline,
                task,
            )
        )
    return found
