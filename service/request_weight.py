"""How much work a ``POST /optimize`` body asks for, read from its raw bytes before anything is parsed.

The weight counts JSON objects (plan nodes, expressions, catalog entries) and SQL operators (OR, AND, JOIN,
UNION, SELECT): roughly the nodes the engine and the SQL adapter will walk. TPC-H's 22 queries weigh 140 to
280, as a plan or as SQL. Two uses: a request over ``PUSHDOWN_MAX_REQUEST_WEIGHT`` is refused at once, since it
could not finish within the time limit anyway, and one from ``PUSHDOWN_HEAVY_REQUEST_WEIGHT`` on runs in a
worker process (``service.worker_pool``).
"""

from __future__ import annotations

from service.errors import InputError

#: SQL words that each add a node of work, searched for in the lower-cased body (JSON text: a newline is \n).
_SQL_MARKERS = (b" or ", b"\\nor ", b" and ", b"\\nand ", b"join ", b"union ", b"select ")
#: Counted a slice at a time: each count is one C call holding the interpreter lock, and between two of them
#: the event loop can take it back (a megabyte in one call took 5 to 50 ms).
CHUNK_BYTES = 64 * 1024


def request_weight(raw: bytes) -> int:
    """JSON objects plus SQL operators in ``raw`` (a marker cut by a slice boundary is missed: an estimate).

    >>> request_weight(b'{"sql": "SELECT a FROM t WHERE a = 1 OR a = 2"}')
    3
    """
    sql = b'"sql"' in raw  # without a query, only the JSON objects count (a plan: half the time of the full count)
    if len(raw) <= CHUNK_BYTES:
        return _weigh(raw, sql)
    view = memoryview(raw)
    return sum(_weigh(view[at : at + CHUNK_BYTES].tobytes(), sql) for at in range(0, len(raw), CHUNK_BYTES))


def _weigh(chunk: bytes, sql: bool) -> int:
    objects = chunk.count(b"{")
    if not sql:
        return objects
    lowered = chunk.lower()
    return objects + sum(lowered.count(marker) for marker in _SQL_MARKERS)


def check_weight(weight: int, max_weight: int, limit_s: float) -> None:
    """422 ``too_complex`` for a request over ``max_weight``, naming the setting.

    >>> check_weight(3, 3, 10.0)
    """
    if weight > max_weight:
        raise InputError(
            "too_complex",
            f"the request weighs {weight} (plan and expression nodes, SQL operators), the limit is {max_weight} "
            f"(PUSHDOWN_MAX_REQUEST_WEIGHT): it could not be answered within the time limit of {limit_s:g} s. "
            "Split the query or plan",
            "$",
            {"limit": max_weight, "weight": weight},
        )
