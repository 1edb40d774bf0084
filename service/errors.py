"""Input errors the service layer raises, in the same wire shape as ``costmodel.PlanError``.

The HTTP layer maps ``code`` to a status; the command line prints message and path.
"""

from __future__ import annotations

from typing import Any


class InputError(Exception):
    """A request the service cannot accept: what is wrong (``code``, ``message``) and where (``path``)."""

    def __init__(self, code: str, message: str, path: str = "$", detail: dict[str, Any] | None = None) -> None:
        super().__init__(f"{message} (at {path})")
        self.code = code
        self.message = message
        self.path = path
        self.detail = detail or {}

    def to_wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.code, "message": self.message, "path": self.path}
        if self.detail:
            body["detail"] = self.detail
        return body
