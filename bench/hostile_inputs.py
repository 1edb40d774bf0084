"""Issue 15's hostile inputs against a real service on its default settings: time to the answer, the answer,
and /healthz latency while each runs.

    python bench/hostile_inputs.py [--rounds 1] [--limit 10]

Starts ``pushdown serve`` on a free loopback port (time limit ``--limit`` seconds, the default 10), sends each
input once per round while a thread polls ``/healthz`` every 50 ms on its own keep-alive connection, and prints
per input: status and error code, seconds to the answer, healthz median / p95 / max. Then 128 clients send
small requests while the worst case runs. Writes bench/results/hostile_inputs.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.security import hostile  # noqa: E402  (the same bodies the tests send)
from tests.security.conftest import HealthProbe  # noqa: E402
from tests.serving import free_port, wait_for_health  # noqa: E402

TOKEN = "bench-token"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}

INPUTS = {
    "costs 1e308": lambda: hostile.with_costs(1e308),
    "literal 1e999": lambda: hostile.literal("1e999"),
    "5000-digit integer": lambda: hostile.literal("9" * 5000),
    "lone surrogate": hostile.lone_surrogate_value,
    "10000 levels deep": lambda: hostile.deep(10_000),
    "4000 OR terms": lambda: hostile.or_terms(4000),
    "20000 OR terms": lambda: hostile.or_terms(20_000),
    "500 joins": lambda: hostile.joins(500),
    "3000-branch UNION ALL": lambda: hostile.union_branches(3000),
    "5 MiB SQL": lambda: hostile.sql_of_size(5 * 1024 * 1024),
    "900 KB SQL": lambda: hostile.sql_of_size(900_000),
    "11 MiB body": lambda: b'{"sql": "' + b"x" * (11 * 1024 * 1024) + b'"}',
}


def measure(url: str, body: bytes) -> dict[str, object]:
    with HealthProbe(url) as probe:
        started = time.monotonic()
        response = httpx.post(f"{url}/optimize", content=body, headers=HEADERS, timeout=300)
        elapsed = time.monotonic() - started
    code = response.json().get("error") if response.status_code != 200 else None
    ordered = sorted(probe.latencies) or [float("nan")]
    return {
        "status": response.status_code,
        "error": code,
        "seconds": round(elapsed, 3),
        "healthz_ms": {
            "n": len(probe.latencies),
            "median": round(ordered[len(ordered) // 2] * 1000, 1),
            "p95": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 1),
            "max": round(ordered[-1] * 1000, 1),
        },
        "healthz_failures": len(probe.failures),
    }


async def crowd(url: str, clients: int = 128, per_client: int = 2) -> dict[str, object]:
    async def one(outcomes: list[object]) -> None:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            for _ in range(per_client):
                try:
                    a = await client.post("/optimize", content=hostile.dumps(hostile.small_request()), headers=HEADERS)
                    h = await client.get("/healthz")
                    outcomes.append((a.status_code, h.status_code))
                except httpx.HTTPError as exc:
                    outcomes.append(repr(exc))

    async with httpx.AsyncClient(base_url=url, timeout=60) as worst_client:
        worst = asyncio.ensure_future(
            worst_client.post("/optimize", content=hostile.union_branches(3000), headers=HEADERS)
        )
        await asyncio.sleep(0.5)
        outcomes: list[object] = []
        started = time.monotonic()
        await asyncio.gather(*(one(outcomes) for _ in range(clients)))
        took = time.monotonic() - started
        worst_status = (await worst).status_code
    return {
        "clients": clients,
        "requests": len(outcomes),
        "errors": sum(o != (200, 200) for o in outcomes),
        "seconds": round(took, 2),
        "worst_case_status": worst_status,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--limit", type=float, default=10.0)
    args = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    work = Path(tempfile.mkdtemp(prefix="pushdown-hostile-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHDOWN_")}
    env.update(
        PYTHONPATH=str(ROOT),
        PUSHDOWN_API_TOKEN=TOKEN,
        PUSHDOWN_DATA_DIR=str(work),
        PUSHDOWN_REQUEST_TIME_LIMIT_S=str(args.limit),
    )
    log = (work / "service.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port), "--log-level", "warning"],
        cwd=work,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    results: dict[str, list[dict[str, object]]] = {}
    try:
        wait_for_health(url, server, 60)
        bodies = {name: make() for name, make in INPUTS.items()}
        for _ in range(args.rounds):
            for name, body in bodies.items():
                result = measure(url, body)
                results.setdefault(name, []).append(result)
                h = result["healthz_ms"]
                print(
                    f"{name:24} {result['status']} {result['error'] or '':22} {result['seconds']:7.2f} s   "
                    f"healthz median {h['median']} ms, p95 {h['p95']} ms, max {h['max']} ms (n={h['n']})",
                    flush=True,
                )
        load = asyncio.run(crowd(url))
        print(f"128 clients during the worst case: {load}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    out = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "settings": {"request_time_limit_s": args.limit, "rounds": args.rounds},
        "inputs": results,
        "load": load,
    }
    target = ROOT / "bench" / "results" / "hostile_inputs.json"
    target.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
