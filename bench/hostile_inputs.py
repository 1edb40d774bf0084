"""Issue 15's hostile inputs against a real service on its default settings: time to the answer, the answer,
and /healthz latency while each runs, alone and several at once; and what the heavy-request workers cost small
requests.

    python bench/hostile_inputs.py [--rounds 1] [--limit 10] [--quick]

Starts ``pushdown serve`` on a free loopback port (time limit ``--limit`` seconds, the default 10), sends each
input once per round while a thread polls ``/healthz`` every 25 ms on its own keep-alive connection, and prints
per input: status and error code, seconds to the answer, healthz median / p95 / p99 / max. Then the heavy inputs
all at once, then 128 clients sending small requests while the worst case runs. Last, small requests (a TPC-H
plan) per second from 8 clients with the heavy-request workers on (the default) and off
(``PUSHDOWN_HEAVY_WORKERS=0``), alternating. ``--quick``: one round, the heavy inputs only, a 5 s limit, a
shorter throughput run. Writes bench/results/hostile_inputs.json (rewritten each run).
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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.request_weight import request_weight  # noqa: E402
from tests.security import hostile  # noqa: E402  (the same bodies the tests send)
from tests.security.conftest import HealthProbe  # noqa: E402
from tests.serving import free_port, wait_for_health  # noqa: E402

TOKEN = "bench-token"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
TPCH = ROOT / "bench" / "tpch"

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
HEAVY = ("4000 OR terms", "20000 OR terms", "500 joins", "3000-branch UNION ALL", "900 KB SQL")


def healthz_figures(probe: HealthProbe) -> dict[str, object]:
    ordered = sorted(probe.latencies)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000, 1) if ordered else float("nan")

    return {"n": len(ordered), "median": at(0.5), "p95": at(0.95), "p99": at(0.99), "max": at(1.0)}


def outcome(response: httpx.Response, elapsed: float) -> dict[str, object]:
    code = response.json().get("error") if response.status_code != 200 else None
    return {"status": response.status_code, "error": code, "seconds": round(elapsed, 3)}


def measure(url: str, body: bytes) -> dict[str, object]:
    with HealthProbe(url, interval_s=0.025) as probe:
        started = time.monotonic()
        response = httpx.post(f"{url}/optimize", content=body, headers=HEADERS, timeout=300)
        elapsed = time.monotonic() - started
    return {**outcome(response, elapsed), "healthz_ms": healthz_figures(probe), "healthz_failures": len(probe.failures)}


async def all_at_once(url: str, bodies: dict[str, bytes]) -> dict[str, object]:
    """Every heavy input at the same time, /healthz polled meanwhile."""

    async def one(client: httpx.AsyncClient, body: bytes) -> dict[str, object]:
        started = time.monotonic()
        response = await client.post("/optimize", content=body, headers=HEADERS)
        return outcome(response, time.monotonic() - started)

    with HealthProbe(url, interval_s=0.025) as probe:
        async with httpx.AsyncClient(base_url=url, timeout=300) as client:
            answers = await asyncio.gather(*(one(client, body) for body in bodies.values()))
    return {
        "inputs": dict(zip(bodies, answers, strict=True)),
        "healthz_ms": healthz_figures(probe),
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


def tpch_request() -> bytes:
    """A typical small request: TPC-H q21's plan (the largest) with the TPC-H catalog."""
    plan = json.loads((TPCH / "plans" / "q21.json").read_text())
    return json.dumps({"plan": plan, "catalog": json.loads((TPCH / "catalog.json").read_text())}).encode()


async def small_throughput(url: str, seconds: float, clients: int = 8) -> dict[str, object]:
    """Small requests answered per second by ``clients`` clients sending one after another."""
    body = tpch_request()
    done, errors = 0, 0
    stop_at = time.monotonic() + seconds

    async def client_loop(client: httpx.AsyncClient) -> None:
        nonlocal done, errors
        while time.monotonic() < stop_at:
            response = await client.post("/optimize", content=body, headers=HEADERS)
            done += 1
            errors += response.status_code != 200

    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        await client.post("/optimize", content=body, headers=HEADERS)  # warm
        started = time.monotonic()
        await asyncio.gather(*(client_loop(client) for _ in range(clients)))
        took = time.monotonic() - started
    return {"requests_per_s": round(done / took, 1), "requests": done, "errors": errors}


def weighing_cost_us() -> dict[str, float]:
    """What routing adds to every request, in-process: weighing a TPC-H body (median and max of 44, in µs)."""
    catalog = json.loads((TPCH / "catalog.json").read_text())
    bodies = [
        json.dumps({"plan": json.loads(p.read_text()), "catalog": catalog}).encode() for p in TPCH.glob("plans/*")
    ]
    bodies += [json.dumps({"sql": p.read_text(), "catalog": catalog}).encode() for p in TPCH.glob("queries/*.sql")]
    costs = []
    for body in bodies:
        started = time.perf_counter()
        for _ in range(100):
            request_weight(body)
        costs.append((time.perf_counter() - started) / 100 * 1e6)
    costs.sort()
    return {"median": round(costs[len(costs) // 2], 1), "max": round(costs[-1], 1), "bodies": len(costs)}


@contextmanager
def serving(limit: float, **settings: str) -> Iterator[str]:
    """``pushdown serve`` (one process, token set, time limit ``limit``) until the block ends."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    work = Path(tempfile.mkdtemp(prefix="pushdown-hostile-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHDOWN_")}
    env.update(
        PYTHONPATH=str(ROOT),
        PUSHDOWN_API_TOKEN=TOKEN,
        PUSHDOWN_DATA_DIR=str(work),
        PUSHDOWN_REQUEST_TIME_LIMIT_S=str(limit),
    )
    env.update({f"PUSHDOWN_{key.upper()}": value for key, value in settings.items()})
    with (work / "service.log").open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(port), "--log-level", "warning"],
            cwd=work,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_health(url, server, 60)
            wait_until_idle(server.pid)  # the heavy-request workers start with the service: until they have imported
            yield url
        finally:
            server.terminate()
            server.wait(timeout=60)


def wait_until_idle(pid: int, timeout_s: float = 120.0) -> None:
    """Until the process and its children use less than a fifth of a core over a second (from /proc)."""

    def cpu() -> float:
        pids = [pid] + [int(c) for f in Path(f"/proc/{pid}/task").glob("*/children") for c in f.read_text().split()]
        total = 0
        for each in pids:
            try:
                fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        before = cpu()
        time.sleep(1.0)
        if cpu() - before < 0.2:
            return


def print_input(name: str, result: dict[str, object]) -> None:
    h = result["healthz_ms"]
    assert isinstance(h, dict)
    print(
        f"{name:24} {result['status']} {result['error'] or '':22} {result['seconds']:7.2f} s   healthz median "
        f"{h['median']} ms, p95 {h['p95']}, p99 {h['p99']}, max {h['max']} ms (n={h['n']})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--limit", type=float, default=None, help="time limit in seconds (10; --quick: 5)")
    parser.add_argument("--quick", action="store_true", help="heavy inputs only, one round, shorter runs")
    args = parser.parse_args()
    limit = args.limit or (5.0 if args.quick else 10.0)
    rounds = 1 if args.quick else args.rounds
    names = HEAVY if args.quick else tuple(INPUTS)
    bodies = {name: INPUTS[name]() for name in names}
    results: dict[str, list[dict[str, object]]] = {}
    together: list[dict[str, object]] = []
    with serving(limit) as url:
        for _ in range(rounds):
            for name, body in bodies.items():
                result = measure(url, body)
                results.setdefault(name, []).append(result)
                print_input(name, result)
            time.sleep(2.0)  # workers killed at the limit are replaced meanwhile
            at_once = asyncio.run(all_at_once(url, {name: bodies[name] for name in HEAVY if name in bodies}))
            together.append(at_once)
            print(f"all heavy inputs at once: healthz {at_once['healthz_ms']}", flush=True)
            for name, answer in at_once["inputs"].items():  # type: ignore[attr-defined]
                print(f"    {name:24} {answer['status']} {answer['error'] or '':22} {answer['seconds']:7.2f} s")
        load = None if args.quick else asyncio.run(crowd(url))
        if load is not None:
            print(f"128 clients during the worst case: {load}", flush=True)
    seconds = 5.0 if args.quick else 15.0
    throughput: dict[str, list[dict[str, object]]] = {"heavy workers on": [], "heavy workers off": []}
    order = (("heavy workers on", "2"), ("heavy workers off", "0"))
    for round_ in range(1 if args.quick else 2):  # alternating, so drifting load favours neither
        for label, workers in order if round_ % 2 == 0 else order[::-1]:
            with serving(limit, heavy_workers=workers) as url:
                figures = asyncio.run(small_throughput(url, seconds))
            throughput[label].append(figures)
            print(f"small requests, {label}: {figures}", flush=True)
    weighing = weighing_cost_us()
    print(f"weighing a TPC-H body (added to every request): {weighing} µs", flush=True)
    out = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_at_end": os.getloadavg(),
        },
        "settings": {"request_time_limit_s": limit, "rounds": rounds, "quick": args.quick},
        "inputs": results,
        "all_heavy_at_once": together,
        "load": load,
        "small_requests": throughput,
        "weighing_tpch_body_us": weighing,
    }
    target = ROOT / "bench" / "results" / "hostile_inputs.json"
    target.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
