"""The one error type the SQL adapter raises: a ``ServiceError`` (422) carrying the position in the SQL text.

The service re-raises it as an ``InputError`` at ``$.sql`` with the position in ``detail``; one that escapes
is still answered by the one handler (``api.errors``) as a 422, never a 500.
"""

from __future__ import annotations

from typing import Any

from sqlglot.errors import SqlglotError

from costmodel.errors import ServiceError


class SqlError(ServiceError, ValueError):
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
        super().__init__(code, message, "$", detail)
        self.line = line
        self.column = column

    def __str__(self) -> str:
        where = f" (line {self.line}, column {self.column})" if self.line is not None else ""
        return f"{self.code}: {self.message}{where}"

    def to_wire(self) -> dict[str, Any]:
        """The JSON error body: what is wrong and where."""
        body: dict[str, Any] = {
            "error": self.code,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
        }
        if self.detail:
            body["detail"] = self.detail
        return body


#: What sqlglot's tokenizer, function builders and generators raise on odd input besides their own errors: they
#: index a call's arguments unchecked (MAP(a): IndexError; DATE_TRUNC(): ValueError; Spark's two-argument
#: REGEXP_REPLACE written out: KeyError), and its compiled build reads attributes its compiled objects may lack
#: (``exp.func`` without arguments: AttributeError; ``build_function`` avoids that one). The adapter reads them
#: as input it cannot translate.
SQLGLOT_SLIPS: tuple[type[Exception], ...] = (IndexError, KeyError, TypeError, ValueError, AttributeError)
#: sqlglot's own errors and its slips: whatever building or writing a call can raise on input it cannot take.
SQLGLOT_FAILURES: tuple[type[Exception], ...] = (SqlglotError, *SQLGLOT_SLIPS)
