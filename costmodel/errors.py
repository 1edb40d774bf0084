"""Errors the engine raises for bad input.

Every error names *what* is wrong and *where*: a JSON path into the request
(``$.plan.input.predicate.args[0]``) so the HTTP layer can answer with a 4xx
that a caller can act on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PlanError(ValueError):
    """Input the engine cannot accept.

    ``code`` is machine readable (``unknown_column``, ``unknown_op``, ...),
    ``path`` is the JSON path of the offending value, ``detail`` carries extra
    facts such as the columns that do exist.
    """

    code: str
    message: str
    path: str = "$"
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(f"{self.message} (at {self.path})")

    def to_wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.code, "message": self.message, "path": self.path}
        if self.detail:
            body["detail"] = self.detail
        return body
