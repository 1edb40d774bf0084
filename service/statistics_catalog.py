"""What ``/optimize`` does with the statistics store: a request catalog's ``{"ref": name}`` tables resolved to stored
statistics and samples, and the engine run with the samples in front of its estimator chain."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from costmodel.result import FullParts
from costmodel.sample import Sample
from service.errors import InputError

if TYPE_CHECKING:  # the store imports this module to re-export it, so it is named for type checkers only
    from service.statistics import StatisticsStore, StoredTable


def resolve_catalog(
    catalog: dict[str, Any] | None,
    store: StatisticsStore | None,
    used: list[tuple[str, StoredTable]] | None = None,
) -> tuple[dict[str, Any] | None, dict[str, Sample]]:
    """Replace every ``{"ref": name, "version"?: n}`` table with the stored statistics; return the samples too.

    ``used`` (when given) receives (name in the request, stored version) for every table resolved.

    Samples are keyed by the table's name in the request (the name the query uses), not the stored name.
    Keys the caller gives beside ``ref`` (e.g. ``indexes``) override the stored ones. Catalogs without
    refs come back unchanged and never touch the store.
    """
    if not isinstance(catalog, dict) or not isinstance(catalog.get("tables"), dict):
        return catalog, {}
    tables = catalog["tables"]
    if not any(isinstance(t, dict) and "ref" in t for t in tables.values()):
        return catalog, {}
    resolved: dict[str, Any] = {}
    samples: dict[str, Sample] = {}
    for query_name, entry in tables.items():
        if not isinstance(entry, dict) or "ref" not in entry:
            resolved[query_name] = entry
            continue
        stored = _lookup(query_name, entry, store)
        if used is not None:
            used.append((query_name, stored))
        extra = {k: v for k, v in entry.items() if k not in ("ref", "version")}
        resolved[query_name] = {**stored.to_catalog(), **extra}
        sample = store.sample(stored) if store is not None else None
        if sample is not None:
            samples[query_name] = Sample(query_name, sample.table_rows, sample.values, sample.nulls)
    return {**catalog, "tables": resolved}, samples


def _lookup(query_name: str, entry: dict[str, Any], store: StatisticsStore | None) -> StoredTable:
    path = f"$.catalog.tables.{query_name}"
    ref, version = entry["ref"], entry.get("version")
    if not isinstance(ref, str) or not ref:
        raise InputError("invalid_catalog", "ref must be the name of an analyzed table", f"{path}.ref")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise InputError("invalid_catalog", "version must be an integer", f"{path}.version")
    if store is None:
        raise InputError("statistics_unavailable", "this service has no statistics store to resolve ref", path)
    stored = store.get(ref, version)
    if stored is not None:
        return stored
    if version is not None and store.get(ref) is not None:
        versions = store.versions(ref)
        raise InputError(
            "unknown_version",
            f"table {ref!r} has no version {version}; versions: {', '.join(map(str, versions))}",
            f"{path}.version",
            {"ref": ref, "version": version, "versions": versions},
        )
    names = store.names()
    raise InputError(
        "unknown_table",
        f"no analyzed table {ref!r}; analyzed tables: {', '.join(names) or 'none'}",
        f"{path}.ref",
        {"ref": ref, "tables": names},
    )


# ---------------------------------------------------------------- the engine with samples


def sample_sources(samples: dict[str, Sample]) -> tuple[Any, ...] | None:
    """The estimator chain when samples are known: the sample first, then column statistics.

    The sample source also falls back to statistics itself when too few sampled rows match for a tight
    interval. ``None`` (the engine's default chain) when there are no samples.
    """
    if not samples:
        return None
    from costmodel.estimate import ColumnStatsSource
    from costmodel.sample import SampleSource

    statistics = ColumnStatsSource()
    return (SampleSource(samples, fallback=statistics), statistics)


def optimize_with_samples(
    plan: Any,
    catalog: Any,
    options: Any,
    samples: dict[str, Sample] | None = None,
    front: tuple[Any, ...] = (),
    baseline: bool = False,
) -> tuple[dict[str, Any], FullParts]:
    """``costmodel.optimizer.optimize_wire_brief`` with the sample source in front of the estimator chain, and
    ``front`` (e.g. the feedback source) before that; ``baseline`` as ``optimize_wire``'s. The brief answer and
    the parts only a full answer carries (``costmodel.result.FullParts``)."""
    from costmodel.estimate import DEFAULT_SOURCES
    from costmodel.optimizer import optimize_wire_brief

    sources = sample_sources(samples or {})
    chain = None if sources is None and not front else (*front, *(sources or DEFAULT_SOURCES))
    return optimize_wire_brief(plan, catalog, options, sources=chain, baseline=baseline)
