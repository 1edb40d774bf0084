"""The one place where the service's parts are built from ``Settings`` and wired together.

The HTTP app (``api.app``), a heavy-request worker process (``service.worker_pool``) and the in-process client
(``service.in_process_client``) all assemble their services here, so that one request meets the same statistics
store, feedback and cache wherever it is answered. What each leaves out is asked for by name.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from service.optimize import OptimizeService
from service.request_cache import request_cache
from service.settings import Settings
from service.statistics import StatisticsStore

if TYPE_CHECKING:  # imported where they are built: the command line and the in-process client need none of them
    from service.analyze import Analyzer
    from service.feedback.use_case import FeedbackService
    from service.history import HistoryRecorder
    from service.jobs import JobStates

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Services:
    """What answers optimize requests, and the stores behind it."""

    settings: Settings
    #: the statistics store; None when its URL is unsupported (ref catalogs and /tables then answer 503)
    store: StatisticsStore | None
    #: the optimization history's recorder; None when the services were assembled without it
    history: HistoryRecorder | None
    #: feedback on the history's store, and estimates learned from it; None without the history
    feedback: FeedbackService | None
    optimizer: OptimizeService


def assemble(
    settings: Settings | None = None, *, history: bool = True, cache: bool = True, warn: bool = True
) -> Services:
    """The services ``settings`` configure (default: ``Settings()`` from the environment).

    ``history``: a history recorder, and the feedback learned from its store (what the optimizer's estimates
    use); ``cache``: the request cache the settings ask for; ``warn``: log a statistics store that cannot be
    used (the app does; its worker processes need not say it again).
    """
    settings = settings or Settings()
    store = statistics_store(settings, warn=warn)
    recorder: HistoryRecorder | None = None
    feedback: FeedbackService | None = None
    if history:
        from service.feedback.use_case import FeedbackService
        from service.history import HistoryRecorder

        recorder = HistoryRecorder.from_settings(settings)
        feedback = FeedbackService(recorder, store)
    optimizer = OptimizeService(store, feedback)
    if cache:
        optimizer.cache = request_cache(settings, store, feedback)
    return Services(settings, store, recorder, feedback, optimizer)


def statistics_store(settings: Settings, *, warn: bool = True) -> StatisticsStore | None:
    """The configured store, or None (ref catalogs and /tables then answer 503) when its URL is unsupported."""
    try:
        return StatisticsStore.from_settings(settings)
    except ValueError as exc:
        if warn:
            logger.warning("statistics store disabled: %s", exc)
        return None


def analyzer(services: Services) -> Analyzer | None:
    """The analyze use case on the services' store (a Spark session made on first use), or None without one."""
    from service.analyze import Analyzer, spark_session

    settings = services.settings
    if services.store is None:
        return None
    return Analyzer(services.store, lambda: spark_session(settings.spark_master), settings.analyze_spark_idle_s)


def job_states(settings: Settings) -> JobStates:
    """Job state in the service's database (shared by workers and replicas), or in memory when its URL is
    unsupported (analyze then answers 503 anyway: it needs the statistics store on the same URL)."""
    from service.job_store import DatabaseJobStates
    from service.jobs import MemoryJobStates

    try:
        return DatabaseJobStates.from_settings(settings)
    except ValueError:
        return MemoryJobStates()
