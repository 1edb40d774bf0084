"""A SQL request leaves nothing for the cyclic garbage collector.

Every sqlglot node points at its parent, so a parsed or rendered tree is a reference cycle, freed only when the
collector walks it; on TPC-H those collections took about 4% of a SQL request's time. The adapter unlinks the
trees it is done with (``service.sql.common.release``) and makes no cycles of its own, so reference counting
frees everything as the request ends. Checked here with the collector saving what it would free: nothing.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from api.models import OptimizeInput
from service.optimize import OptimizeService

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
QUERIES = sorted((TPCH / "queries").glob("q*.sql"))


@pytest.fixture(scope="module")
def service() -> OptimizeService:
    return OptimizeService()


#: the packages whose objects a SQL request makes (garbage of other kinds may come from another thread in the
#: same window: a database driver an earlier test left to close, say)
OURS = ("sqlglot", "service", "costmodel", "api")


def cyclic_garbage(call: object) -> list[str]:
    """The types (of ``OURS``, and plain containers found with them) of the objects only the cyclic collector
    could free after ``call()``."""
    assert callable(call)
    call()  # warm: first calls fill memos, which are no garbage
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        call()
        gc.collect()
        ours = sorted({type(o).__qualname__ for o in gc.garbage if type(o).__module__.split(".")[0] in OURS})
        plain = sorted({type(o).__qualname__ for o in gc.garbage if type(o).__module__ == "builtins"})
        return ours + plain if ours else []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


@pytest.mark.parametrize("path", QUERIES, ids=[p.stem for p in QUERIES])
def test_a_tpch_sql_request_leaves_no_cyclic_garbage(path: Path, service: OptimizeService) -> None:
    catalog = json.loads((TPCH / "catalog.json").read_text())
    request = OptimizeInput(sql=path.read_text(), catalog=catalog)
    assert cyclic_garbage(lambda: service.answer(request, request_id="x", use_cache=False)) == []


def test_the_check_sees_a_cycle_of_ours_and_only_those() -> None:
    import sqlglot

    def cycle() -> None:
        a: list[object] = []
        a.append(a)

    assert {"Select", "Column", "dict"} <= set(cyclic_garbage(lambda: sqlglot.parse_one("SELECT a FROM t")))
    assert cyclic_garbage(cycle) == []  # plain containers alone: another thread's, as far as this check knows
