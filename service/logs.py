"""Log lines as JSON objects, one a line, for log shippers; each carries the request id when there is one.

``pushdown serve`` uses it for its own and uvicorn's loggers when its log lines go to a
file or a pipe, or when asked (``--log-format json``, ``PUSHDOWN_LOG_FORMAT=json``); on a
terminal it writes plain lines a person reads (``--log-format text`` asks for those anywhere).
The fields: ``ts`` (UTC, ISO 8601), ``level``,
``logger``, ``message``, ``request_id`` while a request is served, what the call
passed in ``extra`` (the access log: method, path, route, status, duration_ms,
error), and ``exc_info`` as text for an exception.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
from contextvars import ContextVar
from typing import Any

#: Set by the HTTP layer for the duration of a request (``api.observability``); read by every log line.
request_id_var: ContextVar[str | None] = ContextVar("pushdown_request_id", default=None)

#: Attributes every ``LogRecord`` has; anything else on a record came from ``extra=`` and is logged as a field.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record.

    >>> record = logging.LogRecord("pushdown", logging.INFO, "", 0, "hello %s", ("you",), None)
    >>> json.loads(JsonFormatter().format(record))["message"]
    'hello you'
    """

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,  # which worker, with ``serve --workers N``
        }
        request_id = request_id_var.get()
        if request_id is not None:
            entry["request_id"] = request_id
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_") and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def resolve_log_format(fmt: str, stream: Any = None) -> str:
    """``auto``: ``text`` when the log goes to a terminal, ``json`` otherwise (a shipper, a file); others as given.

    >>> import io
    >>> resolve_log_format("auto", io.StringIO()), resolve_log_format("text", io.StringIO())
    ('json', 'text')
    """
    if fmt != "auto":
        return fmt
    out = sys.stderr if stream is None else stream
    isatty = getattr(out, "isatty", None)
    return "text" if callable(isatty) and isatty() else "json"


def log_config(level: str, fmt: str) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for uvicorn's ``log_config``: JSON (``json``) or plain text (``text``).

    The service's loggers (``pushdown.*``, ``api``, ``service``, ``costmodel``) and uvicorn's go to stderr;
    uvicorn's own access log is off, since ``pushdown.access`` logs every request with its id and route.
    """
    formatter = (
        {"()": f"{__name__}.JsonFormatter"}
        if fmt == "json"
        else {"format": "%(asctime)s %(levelname)-7s %(name)s: %(message)s", "datefmt": "%H:%M:%S"}
    )
    handler = {"class": "logging.StreamHandler", "formatter": "main", "stream": "ext://sys.stderr"}
    loggers = ("uvicorn", "uvicorn.error", "pushdown", "api", "service", "costmodel")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"main": formatter},
        "handlers": {"main": handler},
        "loggers": {
            **{name: {"handlers": ["main"], "level": level.upper(), "propagate": False} for name in loggers},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }
