"""How much work a ``POST /optimize`` body asks for, read from its raw bytes before anything is parsed.

The weight counts JSON objects (plan nodes, expressions, catalog entries) and SQL operators (OR, AND, JOIN,
UNION, SELECT): roughly the nodes the engine and the SQL adapter will walk. TPC-H's 22 queries weigh 140 to
280, as a plan or as SQL. Two uses: a request from ``PUSHDOWN_HEAVY_REQUEST_WEIGHT`` on runs in a worker
process (``service.worker_pool``), and one over ``PUSHDOWN_MAX_REQUEST_WEIGHT`` is refused at once, since it
could not finish within the time limit anyway.
"""

from __future__ import annotations

from service.errors import InputError

#: SQL words that each add a node of work, searched for in the lower-cased body (JSON text: a newline is \n).
_SQL_MARKERS = (b" or ", b"\\nor ", b" and ", b"\\nand ", b"join ", b"union ", b"select ")


def request_weight(raw: bytes) -> int:
    """JSON objects plus SQL operators in ``raw``: a few milliseconds per megabyte.

    >>> request_weight(b'{"sql": "SELECT a FROM t WHERE a = 1 OR a = 2"}')
    3
    """
    lowered = raw.lower()
    return raw.count(b"{") + sum(lowered.count(marker) for marker in _SQL_MARKERS)


def routing_weight(raw: bytes, heavy_bytes: int) -> int:
    """``request_weight``, or for a body of ``heavy_bytes`` or more its length (heavy either way): the event
    loop decides with this, and reading megabytes would hold it up.

    >>> routing_weight(b"x" * 10, 4)
    10
    """
    return len(raw) if len(raw) >= heavy_bytes else request_weight(raw)


def check_weight(raw: bytes, max_weight: int, limit_s: float) -> None:
    """422 ``too_complex`` for a body over ``max_weight``, which names the setting.

    >>> check_weight(b"{}", 1, 10.0)
    """
    weight = request_weight(raw)
    if weight > max_weight:
        raise InputError(
            "too_complex",
            f"the request weighs {weight} (plan and expression nodes, SQL operators), the limit is {max_weight} "
            f"(PUSHDOWN_MAX_REQUEST_WEIGHT): it could not be answered within the time limit of {limit_s:g} s. "
            "Split the query or plan",
            "$",
            {"limit": max_weight, "weight": weight},
        )
