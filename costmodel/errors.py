"""The one error hierarchy: every error a request can cause is a ``ServiceError``.

Each names *what* is wrong (``code``, machine readable, and ``message``) and
*where*: a JSON path into the request (``$.plan.input.predicate.args[0]``), so
the HTTP layer (``api.errors``, one handler) answers with a 4xx a caller can act
on and the command line prints the same. Layers add subclasses: the engine's
``PlanError`` here and ``DeadlineExceeded`` (``costmodel.deadline``), the
service's ``InputError`` (``service.errors``), the adapters' ``SqlError`` and
``SubstraitError``. Each class has an HTTP ``status``; ``api.errors.STATUS_BY_CODE``
gives some codes their own (``not_found`` is a 404 whichever class raises it).
tests/api/test_error_hierarchy.py fails when an exception class of the project is
outside the hierarchy without a stated reason.

    >>> PlanError("unknown_column", "unknown column 'x'", "$.plan.predicate").to_wire()["path"]
    '$.plan.predicate'
"""

from __future__ import annotations

from typing import Any, ClassVar


class ServiceError(Exception):
    """A request the service cannot serve as sent: ``code``, ``message``, ``path``, ``detail``."""

    #: the HTTP status of this class's errors, unless ``api.errors.STATUS_BY_CODE`` gives the code its own
    status: ClassVar[int] = 422
    #: HTTP headers the answer carries (``Retry-After`` for a temporary refusal)
    headers: ClassVar[dict[str, str]] = {}

    def __init__(self, code: str, message: str, path: str = "$", detail: dict[str, Any] | None = None) -> None:
        super().__init__(f"{message} (at {path})")
        self.code = code
        self.message = message
        self.path = path
        self.detail: dict[str, Any] = dict(detail or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r}, {self.path!r})"

    def to_wire(self) -> dict[str, Any]:
        """The JSON error body."""
        body: dict[str, Any] = {"error": self.code, "message": self.message, "path": self.path}
        if self.detail:
            body["detail"] = self.detail
        return body


class PlanError(ServiceError, ValueError):
    """Input the engine cannot accept: a plan, expression, catalog or options (``unknown_column``, ...)."""
