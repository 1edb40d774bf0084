"""128 clients at once while a worst-case request runs: every small request is answered 200, the worst case
is answered or stopped at the limit, and /healthz keeps answering. Loopback only; bounded in count and time."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx

from tests.security import hostile
from tests.security.conftest import TOKEN, running_service

CLIENTS = 128
REQUESTS_PER_CLIENT = 2
#: The default limit: the small requests queue behind each other for slots and must fit in it.
LIMIT_S = 10.0


async def client_session(url: str, body: bytes, outcomes: list[Any]) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        for _ in range(REQUESTS_PER_CLIENT):
            try:
                answer = await client.post("/optimize", content=body, headers=headers)
                health = await client.get("/healthz")
                outcomes.append((answer.status_code, health.status_code))
            except httpx.HTTPError as exc:
                outcomes.append(repr(exc))


async def load(url: str) -> tuple[list[Any], int, float]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=url, timeout=60) as worst_client:
        worst = asyncio.ensure_future(
            worst_client.post("/optimize", content=hostile.union_branches(3000), headers=headers)
        )
        await asyncio.sleep(0.5)  # the worst case is computing before the crowd arrives
        outcomes: list[Any] = []
        small = hostile.dumps(hostile.small_request())
        started = time.monotonic()
        await asyncio.gather(*(client_session(url, small, outcomes) for _ in range(CLIENTS)))
        crowd_s = time.monotonic() - started
        worst_status = (await worst).status_code
    return outcomes, worst_status, crowd_s


def test_128_clients_while_a_worst_case_request_runs(tmp_path: Path) -> None:
    with running_service(tmp_path, api_token=TOKEN, request_time_limit_s=str(LIMIT_S)) as service:
        outcomes, worst_status, crowd_s = asyncio.run(load(service.url))
        log = service.log_text()
    errors = [o for o in outcomes if o != (200, 200)]
    assert len(outcomes) == CLIENTS * REQUESTS_PER_CLIENT
    assert not errors, f"{len(errors)} of {len(outcomes)} failed, e.g. {errors[:5]} (crowd took {crowd_s:.1f} s)"
    assert worst_status in (200, 503)
    assert "unhandled error" not in log
