"""The one error type the Substrait adapter raises: a ``ServiceError`` (422).

It carries a JSON path into the Substrait document, so a caller can find the
relation or expression the adapter refused without reading a stack trace.
"""

from __future__ import annotations

from costmodel.errors import ServiceError


class SubstraitError(ServiceError, ValueError):
    """A Substrait plan (or a rewritten wire plan) the adapter cannot translate faithfully.

    ``code`` is machine readable (``invalid_substrait``, ``unsupported``,
    ``invalid_reference``, ``unknown_function``, ``schema_mismatch``,
    ``inconsistent_grouping``, ``invalid_plan``); ``path`` is a JSON path
    such as ``$.relations[0].root.input.join``; ``detail`` holds extra facts
    (for ``unsupported``: ``construct``).
    """

    def __str__(self) -> str:
        return f"{self.code}: {self.message} (at {self.path})"
