"""The one error type the SQL adapter raises.

Callers (the HTTP layer, the command line) turn it into a 4xx body with
``to_wire()``; it carries the SQL position so a user can find the problem.
"""

from __future__ import annotations

from typing import Any


class SqlError(ValueError):
    """SQL (or a plan) the adapter cannot translate faithfully.

    ``code`` is machine readable (``parse_error``, ``unknown_table``,
    ``unknown_column``, ``unsupported``, ``invalid_plan``); ``line`` and
    ``column`` are 1-based positions in the SQL text when known; ``detail``
    holds extra facts such as the columns that do exist.
    """

    def __init__(
        self,
        code: str,
        message: str,
        line: int | None = None,
        column: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        self.detail: dict[str, Any] = dict(detail or {})
        where = f" (line {line}, column {column})" if line is not None else ""
        super().__init__(f"{code}: {message}{where}")

    def to_wire(self) -> dict[str, Any]:
        """The JSON error body: what is wrong and where."""
        body: dict[str, Any] = {
            "error": self.code,
            "message": self.message,
            "line": self.line,
            "column": self.column,
        }
        if self.detail:
            body["detail"] = self.detail
        return body
