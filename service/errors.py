"""Errors the service layer raises: subclasses of the one hierarchy, ``costmodel.errors.ServiceError``.

The HTTP layer maps ``code`` to a status in one handler (``api.errors``); the command line prints message and path.
"""

from __future__ import annotations

from costmodel.errors import ServiceError


class InputError(ServiceError):
    """A request the service cannot accept: what is wrong (``code``, ``message``) and where (``path``)."""


__all__ = ["InputError", "ServiceError"]
