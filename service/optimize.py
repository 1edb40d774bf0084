"""The optimize use case: plan or SQL in, decisions and the rewritten plan out.

The HTTP route and the heavy-request workers answer a body with ``answer_body``, the command line with
``OptimizeService.optimize``; the input arrives already validated by the edge (see ``service.request``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from costmodel.errors import ServiceError
from costmodel.optimizer import optimize_wire_brief
from costmodel.options import DEFAULT_EXPENSIVE_THRESHOLD, DEFAULT_MIN_SAVINGS
from costmodel.result import FullParts
from costmodel.summary import summarize
from service.analyzed_tables import (
    add_analyzed_tables,
    change_warning,
    described,
    find_analyzed,
    read_sql_tables,
    tables_in_plan,
    used_statistics,
)
from service.answer import DEFAULT_DETAIL, Detail, NonFiniteNumber, canonical_json, to_json_details
from service.answer_parts import add_baseline, attach_spark, one_to_run, warn_cross_products
from service.answered import Answered, answer_head, answered, brief_answered
from service.errors import InputError
from service.input_errors import engine_unknown_table, functions_path, sql_error, unknown_function_warnings
from service.jsonguard import number_overflow
from service.recent_bodies import RecentBodies
from service.request_cache import STATISTICS, Entry, RequestCache, feedback_dependency
from service.statistics import StatisticsStore, StoredTable, optimize_with_samples, resolve_catalog, sample_sources
from service.verdicts import add_verdicts

if TYPE_CHECKING:
    from service.feedback.use_case import FeedbackService

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class OptimizeInput:
    """A validated request; exactly one of ``plan``, ``sql`` and ``substrait`` is set."""

    plan: dict[str, Any] | None = None
    sql: str | None = None
    substrait: dict[str, Any] | None = None
    dialect: str = "spark"
    catalog: dict[str, Any] | None = None
    options: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    #: how much of the answer the caller wants sent (``service.answer``); the answer is the same, its parts only a
    #: full answer carries made only when kept or read (``service.answered.Answered``)
    detail: Detail = DEFAULT_DETAIL
    #: the names declared under the request's top-level ``functions`` (merged into ``options.functions``), so an
    #: error in one is reported where the user sent it
    top_level_functions: frozenset[str] = frozenset()


#: a request without ``options.cache``, whether it wants the cache, and its cache key
Prepared = tuple["OptimizeInput", bool, bytes]
#: the engine as the service runs it: (plan, catalog, options) -> (brief answer, the parts that complete it)
Engine = Callable[..., tuple[dict[str, Any], FullParts]]


def cache_option(options: dict[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    """The options without ``cache`` (a service option: false skips the request cache), and its value.

    >>> cache_option({"mode": "cost", "cache": False})
    ({'mode': 'cost'}, False)
    """
    if not options or "cache" not in options:
        return options, True
    use = options["cache"]
    if not isinstance(use, bool):
        raise InputError("invalid_options", "cache must be true or false", "$.options.cache")
    return {k: v for k, v in options.items() if k != "cache"}, use


def _resolved_by(name: str, given: dict[str, Any] | None) -> str:
    """``ref`` when the request's catalog named the analyzed table, ``name`` when the service found it by name."""
    tables = given.get("tables") if isinstance(given, dict) else None
    return "ref" if isinstance(tables, dict) and name in tables else "name"


class OptimizeService:
    """Runs the engine for one request and adds what the service owns: the request id, the context echo and
    the request cache."""

    def __init__(
        self,
        store: StatisticsStore | None = None,
        feedback: FeedbackService | None = None,
        cache: RequestCache | None = None,
    ) -> None:
        """``store``: where catalog tables given as ``{"ref": name}`` are looked up (None: refs are refused);
        ``feedback``: observed selectivities of earlier runs (None: estimates never come from feedback);
        ``cache``: answers of recurring requests (None: every request is computed)."""
        self.store = store
        self.feedback = feedback
        self.cache = cache
        #: the last bodies read, by their bytes (``read_body``); per body kept, its cache key (``_prepared``)
        self.bodies: RecentBodies[OptimizeInput] = RecentBodies()
        self._prepared_by_body: dict[int, tuple[OptimizeInput, Prepared | None]] = {}

    def read_body(self, raw: bytes, parse: Callable[[bytes], OptimizeInput | None]) -> OptimizeInput | None:
        """``parse(raw)``; with the cache on, the body read from the same bytes before (the same object, whose
        cache key is then known too): a pipeline's repeat costs a lookup, not a read."""
        if self.cache is None:
            return parse(raw)
        body = self.bodies.get(raw)
        if body is None:
            body = parse(raw)
            if body is None or len(raw) > self.bodies.max_body_bytes:
                return body
            self.bodies.put(raw, body)
        memo = self._prepared_by_body
        if id(body) not in memo:
            if len(memo) >= 2 * self.bodies.max_entries:
                memo.clear()
            memo[id(body)] = (body, None)  # holds the body: its id is not reused while it is here
        return body

    def _prepared(self, request: OptimizeInput) -> Prepared:
        """(the request without ``options.cache``, whether it wants the cache, its cache key); computed once per
        body ``read_body`` keeps."""
        hit = self._prepared_by_body.get(id(request))
        if hit is not None and hit[0] is request and hit[1] is not None:
            return hit[1]
        options, wanted = cache_option(request.options)
        stripped = replace(request, options=options)
        prepared = (stripped, wanted, self._key(stripped))
        if hit is not None and hit[0] is request:
            self._prepared_by_body[id(request)] = (request, prepared)
        return prepared

    def optimize(
        self, request: OptimizeInput, request_id: str | None = None, client_request_id: str | None = None
    ) -> dict[str, Any]:
        """The full answer, computed (never cached). Raises ``costmodel.PlanError`` or
        ``service.errors.InputError`` for input it cannot accept.

        ``request_id``: the answer's id (a new UUID when None); ``client_request_id``: the caller's own
        ``X-Request-ID``, echoed in the answer when given.
        """
        options, _ = cache_option(request.options)
        request = replace(request, options=options)
        brief, _, parts = self._compute(request, *self._tables_read(request))
        return {**answer_head(request, request_id, client_request_id), **parts.completed(brief)}

    def answer(
        self,
        request: OptimizeInput,
        request_id: str | None = None,
        client_request_id: str | None = None,
        use_cache: bool = True,
        looked_up: bool = False,
        full: bool = False,
    ) -> Answered:
        """The answer and its JSON, from the cache when the same request met the same state before.

        ``use_cache``: False skips the cache (so does ``options.cache: false``); ``looked_up``: ``cached`` has
        just missed, so compute (and keep) without looking again; ``full``: make the full answer now (the
        history records it). Otherwise an answer sent as a summary and not cached is computed brief, its full
        parts made only if read (``Answered``). Raises as ``optimize`` does, and
        ``service.answer.NonFiniteNumber`` when a number overflowed.
        """
        if self.cache is None or not use_cache:  # no cache to look in: no key to compute
            options, wanted = cache_option(request.options)
            request, key = (request if options is request.options else replace(request, options=options)), b""
        else:
            request, wanted, key = self._prepared(request)
        cache = self.cache if use_cache and wanted else None
        status = "off" if self.cache is None else "bypass"
        entry = None
        if cache is not None:
            entry = None if looked_up else cache.get(key)
            status = "hit" if entry is not None else "miss"
        if entry is None:
            tables, parsed = self._tables_read(request)
            dependencies = self._dependencies(request, tables)
            before = cache.generations.snapshot(dependencies) if cache is not None else None
            brief, fingerprints, parts = self._compute(request, tables, parsed)
            kept = cache is not None and fingerprints is not None
            if self.cache is not None and not kept:
                self.cache.counters.bypassed += status == "bypass"
            if not (kept or full or request.detail == "full"):
                return brief_answered(request, brief, parts, status, request_id, client_request_id)
            rest = parts.completed(brief)
            full_json, summary = (payload[1:] for payload in to_json_details(rest))
            entry = Entry(rest, full_json, summary, dependencies, fingerprints=fingerprints or ())
            if cache is not None and kept:
                cache.put(key, entry, before)
        return answered(request, entry, status, request_id, client_request_id)

    def cached(
        self, request: OptimizeInput, request_id: str | None = None, client_request_id: str | None = None
    ) -> Answered | None:
        """The answer from the cache, or None when it must be computed (``answer(..., looked_up=True)``).

        Cheap (the request's canonical JSON and a lookup), so the route calls it on the event loop."""
        if self.cache is None:
            return None
        request, wanted, key = self._prepared(request)
        if not wanted:
            return None
        entry = self.cache.get(key)
        return None if entry is None else answered(request, entry, "hit", request_id, client_request_id)

    def _key(self, request: OptimizeInput) -> bytes:
        """The normalized request: what can change the full answer, as canonical JSON."""
        feedback_on = self.feedback is not None and (request.options or {}).get("feedback", True) is not False
        parts = {
            "plan": request.plan,
            "sql": request.sql,
            "substrait": request.substrait,
            "dialect": request.dialect,
            "catalog": request.catalog,
            "options": request.options,
            "spark": _wants_spark(request),
            "context": request.context if feedback_on else None,  # feedback is looked up by pipeline and task
        }
        return canonical_json(parts)

    def _tables_read(self, request: OptimizeInput) -> tuple[list[str], Any]:
        """The tables the request reads, as it names them, for the statistics store to fill in, and SQL as parsed
        to find them (None if not parsed), which the translation takes over; without a store nothing reads them,
        and SQL is parsed where it is translated."""
        if self.store is None:
            return [], None
        if request.sql is not None:
            return read_sql_tables(request.sql, request.dialect)
        return tables_in_plan(request.substrait if request.substrait is not None else request.plan), None

    def _dependencies(self, request: OptimizeInput, tables: list[str]) -> tuple[str, ...]:
        """The state the answer reads besides the request: analyzed tables, and feedback per catalog table."""
        names: list[str] = []
        given = request.catalog
        if self.store is not None and (any(not described(name, given) for name in tables) or _has_refs(given)):
            names.append(STATISTICS)
        feedback_on = (request.options or {}).get("feedback", True) is not False
        if feedback_on and self.feedback is not None and isinstance(given, dict):
            names += [feedback_dependency(str(t)) for t in (given.get("tables") or {})]
        return tuple(names)

    def _compute(
        self, request: OptimizeInput, tables: list[str], parsed: Any = None
    ) -> tuple[dict[str, Any], tuple[tuple[dict[str, Any], str | None], ...] | None, FullParts]:
        """The answer without its head, brief; the analyzed sources it checked with their digests (None: the
        answer reports a changed source, so it is not worth caching); the parts that complete it
        (``FullParts.completed``). ``parsed``: the request's SQL as ``_tables_read`` parsed it, for the first
        translation."""
        from service.feedback.annotate import annotate, feedback_option
        from service.function_costs import add_time_saved, calibration_option, function_costs, with_learned

        options, calibration = calibration_option(request.options)
        options, use_feedback = feedback_option(options)
        if use_feedback and self.feedback is not None:
            options = with_learned(options, self.feedback.learned_functions)
        priced, options = _function_parts(options)
        given = request.catalog
        by_name = add_analyzed_tables(given, tables, self.store, bare_keys=request.sql is not None)
        used: list[tuple[str, StoredTable]] = []
        catalog, samples = resolve_catalog(by_name, self.store, used)  # stored statistics for {"ref": ...}
        unchanged = catalog is request.catalog and options is request.options  # replace() costs microseconds
        resolved = request if unchanged else replace(request, catalog=catalog, options=options)
        learned = None
        if use_feedback and self.feedback is not None:
            from costmodel.estimate import DEFAULT_SOURCES

            chain = sample_sources(samples) or DEFAULT_SOURCES
            learned = self.feedback.source_for(request.catalog, request.context, chain)
        front = (learned,) if learned is not None else ()
        engine = partial(optimize_with_samples, samples=samples, front=front, baseline=True)
        try:
            response, parts = self._run(resolved, engine, parsed)
        except ServiceError as exc:
            moved = functions_path(exc, request.top_level_functions)
            if moved is exc:
                raise
            raise moved from exc
        if learned is not None and learned.details:  # feedback answered: say what it changed
            unlearned, _ = self._run(resolved, partial(optimize_with_samples, samples=samples))
            annotate(response, unlearned, learned.details)
        elif not use_feedback:
            response["feedback"] = {"enabled": False}
        add_baseline(response)
        costs = function_costs(priced, response.get("plan"))
        response["function_costs"] = costs
        add_time_saved(response, calibration, costs)
        warn_cross_products(response, parts)
        if _wants_spark(request):
            same = request.sql is not None and request.dialect == "spark"  # then the request is Spark SQL already
            chosen = request.options or {}
            # an explicit mode (always, never) is the caller's placement: only cost mode's own is held to the bar
            min_savings = (
                chosen.get("min_savings", DEFAULT_MIN_SAVINGS) if chosen.get("mode", "cost") == "cost" else None
            )
            threshold = chosen.get("expensive_threshold", DEFAULT_EXPENSIVE_THRESHOLD)
            attach_spark(
                response,
                catalog,
                request.sql if same else None,
                parts.conjunct_texts,
                None if min_savings is None else float(min_savings),
                float(threshold),
            )
        if request.sql is not None:
            response["sql"] = self._portable_sql(request, response)
            one_to_run(response, request.dialect)
        statistics = [used_statistics(name, stored, _resolved_by(name, given)) for name, stored in used]
        response["warnings"] = [*response.get("warnings", []), *filter(None, map(change_warning, statistics))]
        response["statistics"] = statistics
        checked = [s for s in statistics if s["source_changed"] is not None]
        fingerprints = (
            None
            if any(s["source_changed"] for s in checked) or _learns(costs, self.feedback)
            else tuple((s["source"], s["fingerprint"]["digest"]) for s in checked)
        )
        # the per-predicate view first: what a person reads; the full matrix stays in "decisions"
        summary = summarize(response, parts.operators)
        add_verdicts(summary, response.get("decisions") or [])  # what decided, both tests shown (service.verdicts)
        if any(step.get("reason") == "unknown_function" for entry in summary for step in entry.get("steps", ())):
            declared = (options or {}).get("functions")
            response["warnings"] = [*response["warnings"], *unknown_function_warnings(response["plan"], declared)]
        return {"summary": summary, **response}, fingerprints, parts

    def _run(self, request: OptimizeInput, engine: Engine, parsed: Any = None) -> tuple[dict[str, Any], FullParts]:
        """The engine's brief answer for the request's plan, SQL or Substrait, and the parts that complete it."""
        if request.sql is not None:
            return self._optimize_sql(request, engine, parsed)
        if request.substrait is not None:
            return self._optimize_substrait(request, engine)
        return engine(request.plan, request.catalog, request.options)

    def _optimize_sql(
        self, request: OptimizeInput, engine: Engine = optimize_wire_brief, parsed: Any = None
    ) -> tuple[dict[str, Any], FullParts]:
        try:  # imported here: SQL support is optional and may not be installed
            from service.sql import sql_to_plan
        except ImportError as exc:  # absent, or present but unfinished
            if not (exc.name or "").startswith("service.sql"):
                raise
            logger.warning("SQL input unavailable: %s", exc)
            raise InputError(
                "sql_unavailable", "SQL input is not available in this build; send a plan", "$.sql"
            ) from None
        assert request.sql is not None  # the caller checked
        with self._said_of_the_sql(request):
            plan = sql_to_plan(request.sql, request.catalog, dialect=request.dialect, parsed=parsed)
            response, parts = engine(plan, request.catalog, request.options)
        # its place among the answer's members; written by _portable_sql once the spark object says whether the
        # plan needs rendering at all
        response["sql"] = None
        return response, parts

    def _portable_sql(self, request: OptimizeInput, response: dict[str, Any]) -> str:
        """The answer's plan as SQL in the request's dialect (``sql_portable``; hints kept). Where Spark runs the
        query as written, ``one_to_run`` makes both ``sql`` and ``sql_portable`` the query as written, so the
        plan's rendering would be thrown away: it is not made."""
        from service.sql import plan_to_sql

        assert request.sql is not None  # the caller checked
        spark = response.get("spark")
        if request.dialect == "spark" and isinstance(spark, dict) and spark.get("as_written"):
            written: str = spark["sql"]
            return written
        with self._said_of_the_sql(request):
            return plan_to_sql(response["plan"], request.dialect, source=request.sql)

    @contextmanager
    def _said_of_the_sql(self, request: OptimizeInput) -> Iterator[None]:
        """The adapter's and the engine's errors about a SQL request, said about its SQL."""
        from service.sql.errors import SqlError

        assert request.sql is not None  # the caller checked
        try:
            yield
        except SqlError as exc:
            # line and column say where in the SQL; an unknown column's own name moves to "name"
            analyzed = self._analyzed_names()
            missing = unknown_tables(request, analyzed) if exc.code == "unsupported" and analyzed else []
            if missing:  # SELECT * over a table nobody described: the table is what is wrong
                unknown = SqlError("unknown_table", "", detail={"table": missing[0]})
                raise sql_error(unknown, request.sql, analyzed, request.dialect) from exc
            raise sql_error(exc, request.sql, analyzed, request.dialect) from exc
        except ServiceError as exc:  # the engine's, about a plan the user never wrote: said about the SQL
            if exc.code != "unknown_table" or not (exc.path or "").startswith("$.plan"):
                raise
            raise engine_unknown_table(exc, request.sql, request.dialect, self._analyzed_names()) from exc

    def _analyzed_names(self) -> list[str]:
        """The analyzed tables' names, for an error about a table nobody described (none if the store fails)."""
        if self.store is None:
            return []
        try:
            return self.store.names()
        except Exception:  # noqa: BLE001 - the error being reported matters more than the list
            logger.warning("analyzed tables could not be listed for an error message", exc_info=True)
            return []

    def _optimize_substrait(
        self, request: OptimizeInput, engine: Engine = optimize_wire_brief
    ) -> tuple[dict[str, Any], FullParts]:
        """Substrait in, Substrait out; the plan must be the producer's plan before its own optimizer ran."""
        from service.substrait import SubstraitError, plan_to_substrait, substrait_to_plan

        assert request.substrait is not None  # the caller checked
        try:
            plan = substrait_to_plan(request.substrait, request.catalog, root="$.substrait")
            response, parts = engine(plan, request.catalog, request.options)
            response["substrait"] = plan_to_substrait(response["plan"], request.substrait)
        except SubstraitError as exc:
            raise InputError(exc.code, exc.message, exc.path, exc.detail) from exc
        return response, parts


def answer_body(
    optimizer: OptimizeService,
    body: OptimizeInput,
    ids: tuple[str | None, str | None],
    use_cache: bool = True,
    full: bool = True,
) -> Answered:
    """A request's answer and its JSON, as ``POST /optimize`` sends it (``ids``: the answer's own id and the
    caller's; ``full``: the full answer made now, as the history records it); a cost that overflowed to infinity
    is the request's fault (422 with a path)."""
    try:
        return optimizer.answer(body, *ids, use_cache=use_cache, looked_up=use_cache, full=full)
    except (OverflowError, NonFiniteNumber):
        request = {"plan": body.plan, "catalog": body.catalog, "options": body.options, "substrait": body.substrait}
        raise number_overflow(request) from None


def unknown_tables(request: OptimizeInput, analyzed: list[str]) -> list[str]:
    """The tables the request's SQL reads that neither its catalog describes nor the store has analyzed."""
    assert request.sql is not None
    read, _ = read_sql_tables(request.sql, request.dialect)
    return [name for name in read if not described(name, request.catalog) and find_analyzed(name, analyzed) is None]


def _function_parts(options: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the options as the answer's ``function_costs`` reads them, the options as the engine reads them)."""
    from service.function_costs import engine_functions

    return options, engine_functions(options)


def _learns(costs: list[dict[str, Any]], feedback: Any) -> bool:
    """Whether the answer prices a function from a run's measurement, which a later run may change: such an
    answer is not cached (the cache's probe sees table feedback, not function costs)."""
    return feedback is not None and any(c["source"] not in ("declared", "default") for c in costs)


def _wants_spark(request: OptimizeInput) -> bool:
    """The ``spark`` object (Spark SQL with barriers, ``service.spark_plan``) is rendered for SQL input, which a
    Spark runner sends, and for any input at ``detail: "full"``."""
    return request.sql is not None or request.detail == "full"


def _has_refs(catalog: dict[str, Any] | None) -> bool:
    tables = catalog.get("tables") if isinstance(catalog, dict) else None
    return isinstance(tables, dict) and any(isinstance(t, dict) and "ref" in t for t in tables.values())
