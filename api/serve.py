"""``pushdown serve``: the HTTP API under uvicorn, in one process or several, tuned to keep /healthz responsive.

The command line (``service.cli``) registers this command: the one import from ``service`` into ``api``, declared
in the layering contract (``[tool.importlinter]`` in pyproject.toml), since serving HTTP is this layer's job.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from service.cli_input import fail
from service.hosts import is_loopback
from service.settings import Settings


def serve(
    host: Annotated[str | None, typer.Option(help="Interface to bind (default: PUSHDOWN_HOST or 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(help="Port to bind (default: PUSHDOWN_PORT or 8000)")] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, max=64, help="Processes to serve with (default: PUSHDOWN_WORKERS or 1)")
    ] = None,
    log_level: Annotated[str, typer.Option(help="Log level: debug, info, warning, error")] = "info",
    log_format: Annotated[
        str | None,
        typer.Option(help="json, text or auto: text on a terminal, else json (default: PUSHDOWN_LOG_FORMAT or auto)"),
    ] = None,
    allow_no_token: Annotated[
        bool,
        typer.Option("--allow-no-token", help="Serve beyond loopback without a token anyway (PUSHDOWN_ALLOW_NO_TOKEN)"),
    ] = False,
) -> None:
    """Serve the HTTP API (POST /optimize, GET /healthz, /metrics, /docs) with uvicorn.

    With several workers each is a process of its own: they share the database (history, statistics),
    and /metrics adds up all of them.
    """
    import os

    import uvicorn

    from service.logs import log_config, resolve_log_format

    # a served process gets its heavy-request workers ready at startup, unless the environment says otherwise
    os.environ.setdefault("PUSHDOWN_PRESTART_HEAVY_WORKERS", "true")
    settings = Settings()
    settings = settings.model_copy(update={"host": host or settings.host})  # the Host check knows the bind
    if (
        not is_loopback(settings.host)
        and settings.api_token is None
        and not (allow_no_token or settings.allow_no_token)
    ):
        fail(
            f"refusing to serve on {settings.host} without a token: anyone who reaches it could use it. "
            "Set PUSHDOWN_API_TOKEN, bind 127.0.0.1, or pass --allow-no-token (PUSHDOWN_ALLOW_NO_TOKEN=true)",
            "--host",
        )
    fmt = resolve_log_format(log_format or settings.log_format)
    if fmt not in ("json", "text"):
        fail(f"--log-format must be json, text or auto, not {fmt!r}", "--log-format")
    count = settings.workers if workers is None else workers
    common: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port if port is None else port,
        "log_level": log_level.lower(),
        "log_config": log_config(log_level, fmt),
        "access_log": False,  # pushdown.access logs each request, with its id
        # SIGTERM: stop accepting, give in-flight requests this long, then cut them (their work is bounded too).
        "timeout_graceful_shutdown": settings.shutdown_grace_s,
    }
    if count > 1:
        _share_metrics_between_processes()
        # each worker builds its own app from the environment: pass on what the command line changed
        os.environ["PUSHDOWN_HOST"] = settings.host
        if allow_no_token:
            os.environ["PUSHDOWN_ALLOW_NO_TOKEN"] = "true"
        uvicorn.run("api.serve:served_app", factory=True, workers=count, **common)
        return
    from api.app import create_app

    application = create_app(settings)
    _tune_for_serving()
    uvicorn.run(application, **common)


def served_app() -> Any:
    """The app of one of several ``pushdown serve`` workers: built from the environment, then tuned as a single
    process is (uvicorn calls this in each worker process)."""
    from api.app import create_app

    application = create_app()
    _tune_for_serving()
    return application


def _tune_for_serving() -> None:
    """Keep the event loop (and /healthz) responsive while request threads compute: a shorter switch interval
    gets the GIL back to the loop sooner (1 ms instead of 5 ms), and full garbage collections are rare
    (``service.collector``). Measured on a 900 KB query: the longest stall of the event loop went from 1.6 s
    to 0.12 s."""
    from service.collector import tune_collector

    sys.setswitchinterval(0.001)
    tune_collector()


def _share_metrics_between_processes() -> None:
    """A fresh PROMETHEUS_MULTIPROC_DIR for the workers (the given one, emptied, or a new temporary one)."""
    import os
    import tempfile

    directory = Path(os.environ.get("PROMETHEUS_MULTIPROC_DIR") or tempfile.mkdtemp(prefix="pushdown-metrics-"))
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):  # values of an earlier run would be added to this one's
        stale.unlink()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)
