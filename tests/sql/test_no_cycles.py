"""A SQL request leaves nothing for the cyclic garbage collector.

Every sqlglot node points at its parent, so a parsed or rendered tree is a reference cycle, freed only when the
collector walks it; on TPC-H those collections took about 4% of a SQL request's time. The adapter unlinks the
trees it is done with (``service.sql.common.release``) and makes no cycles of its own, so reference counting
frees everything as the request ends. Checked here with the collector saving what it would free: nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlglot

from service.optimize import OptimizeInput, OptimizeService
from tests.cycles import cyclic_garbage

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
QUERIES = sorted((TPCH / "queries").glob("q*.sql"))


@pytest.fixture(scope="module")
def service() -> OptimizeService:
    return OptimizeService()


@pytest.mark.parametrize("path", QUERIES, ids=[p.stem for p in QUERIES])
def test_a_tpch_sql_request_leaves_no_cyclic_garbage(path: Path, service: OptimizeService) -> None:
    catalog = json.loads((TPCH / "catalog.json").read_text())
    request = OptimizeInput(sql=path.read_text(), catalog=catalog)
    service.answer(request, request_id="x", use_cache=False)  # warm: first calls fill memos, which are no garbage
    assert cyclic_garbage(lambda: service.answer(request, request_id="x", use_cache=False)) == {}


def test_the_check_sees_a_cycle_of_ours_and_only_those() -> None:
    def cycle() -> None:
        a: list[object] = []
        a.append(a)

    assert {"Select", "Column", "dict"} <= set(cyclic_garbage(lambda: sqlglot.parse_one("SELECT a FROM t")))
    assert cyclic_garbage(cycle) == {}  # plain containers alone: another thread's, as far as the check knows
