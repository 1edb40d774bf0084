"""The one error type the Substrait adapter raises.

It carries a JSON path into the Substrait document, so a caller can find the
relation or expression the adapter refused without reading a stack trace.
"""

from __future__ import annotations

from typing import Any


class SubstraitError(ValueError):
    """A Substrait plan (or a rewritten wire plan) the adapter cannot translate faithfully.

    ``code`` is machine readable (``invalid_substrait``, ``unsupported``,
    ``invalid_reference``, ``unknown_function``, ``schema_mismatch``,
    ``inconsistent_grouping``, ``invalid_plan``); ``path`` is a JSON path
    such as ``$.relations[0].root.input.join``; ``detail`` holds extra facts
    (for ``unsupported``: ``construct``).
    """

    def __init__(self, code: str, message: str, path: str = "$", detail: dict[str, Any] | None = None) -> None:
        self.code = code
        self.message = message
        self.path = path
        self.detail: dict[str, Any] = dict(detail or {})
        super().__init__(f"{code}: {message} (at {path})")

    def to_wire(self) -> dict[str, Any]:
        """The JSON error body: what is wrong and where."""
        body: dict[str, Any] = {"error": self.code, "message": self.message, "path": self.path}
        if self.detail:
            body["detail"] = self.detail
        return body
