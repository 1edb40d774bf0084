"""Load test: the real server (``pushdown serve --workers N``) answering q05's request from many clients at once.

    python bench/load.py [--workers 2] [--clients 8,32,128] [--seconds 10] [--quick]

For each configuration (request cache on, then off) it starts ``pushdown serve`` in a fresh data directory with
the service's defaults (uvicorn picks uvloop and httptools when installed; history on, commit durability; JSON
access log lines at info), warms it up, then for each client count keeps that many HTTP/1.1 keep-alive
connections busy for the duration, each sending q05's plan request and waiting for the answer before the next.
The client is raw asyncio with the request bytes built once, so it costs little CPU; its CPU is reported.

Reported per run: requests/s, latency p50/p99 (ms), errors (anything but 200), server CPU per request (the
server processes' CPU time, master and workers from /proc, divided by requests), client CPU per request, and
the ``Pushdown-Cache`` header's counts, and what the server holds after each level (open file descriptors,
threads, resident memory). Targets (issue 19): >= 600 requests/s with 2 workers on 2 cores, p99 <= 50 ms at 32
clients, 0 errors; and descriptors that do not grow with requests. Writes bench/results/load.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TPCH = ROOT / "bench" / "tpch"
RESULTS = ROOT / "bench" / "results" / "load.json"
TARGET_RPS = 600.0
TARGET_P99_MS_AT_32 = 50.0
TICKS = os.sysconf("SC_CLK_TCK")
#: Descriptors a server may hold more after thousands of requests than after its start: a few (connections in a
#: pool, sockets of clients still open); one per request is a leak (a database connection per request thread,
#: fixed 2026-11-27, grew it by thousands).
MAX_DESCRIPTORS_GROWN = 64


def q05_body() -> bytes:
    catalog = json.loads((TPCH / "catalog.json").read_text())
    plan = json.loads((TPCH / "plans" / "q05.json").read_text())
    return json.dumps({"plan": plan, "catalog": catalog, "context": {"pipeline": "load", "task": "q05"}}).encode()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ------------------------------------------------------------------ server


def start_server(
    port: int, workers: int, data_dir: Path, env: dict[str, str], tree: Path = ROOT
) -> subprocess.Popen[bytes]:
    """``pushdown serve`` from ``tree`` (a checkout); ``PUSHDOWN_LOG_LEVEL`` in ``env`` becomes ``--log-level``."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHDOWN_")}
    full_env.update({"PUSHDOWN_DATA_DIR": str(data_dir), "PYTHONPATH": str(tree), **env})
    command = [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--workers", str(workers), "--log-level", full_env.pop("PUSHDOWN_LOG_LEVEL", "info")]
    proc = subprocess.Popen(command, cwd=tree, env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                if sock.recv(64).startswith(b"HTTP/1.1 200"):
                    return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the server did not start within 60 s")


def served_version(tree: Path) -> str:
    """What ``pushdown --version`` says from ``tree``: the version and sqlglot's build."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHDOWN_")}
    env["PYTHONPATH"] = str(tree)
    command = [sys.executable, "-m", "service.cli", "--version"]
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=60)
    return done.stdout.strip()


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _tree(pid: int) -> list[int]:
    """``pid`` and its live descendants (the uvicorn workers and their helpers)."""
    out: list[int] = []
    stack = [pid]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(_children(current))
    return out


def held(pid: int) -> dict[str, int]:
    """What the server (``pid`` and its live descendants) holds now: open file descriptors, threads, resident MB.
    Compared level by level: an answer that leaves something open shows as a count that grows with requests."""
    fds = threads = rss_kb = 0
    for current in _tree(pid):
        try:
            fds += len(os.listdir(f"/proc/{current}/fd"))
            status = Path(f"/proc/{current}/status").read_text().splitlines()
        except OSError:  # gone since listed
            continue
        fields = {line.split(":", 1)[0]: line.split(":", 1)[1].split() for line in status if ":" in line}
        threads += int(fields.get("Threads", ["0"])[0])
        rss_kb += int(fields.get("VmRSS", ["0"])[0])
    return {"fds": fds, "threads": threads, "rss_mb": rss_kb // 1024}


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and its live descendants (the uvicorn workers), from /proc."""
    total = 0.0
    for current in _tree(pid):
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone since listed
            continue
        total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


# ------------------------------------------------------------------ client


class Tally:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors = 0
        self.cache: Counter[str] = Counter()


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, str]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    cache = ""
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        lowered = name.lower()
        if lowered == b"content-length":
            length = int(value)
        elif lowered == b"pushdown-cache":
            cache = value.strip().decode()
    await reader.readexactly(length)
    return status, cache


async def client(port: int, request: bytes, stop_at: float, tally: Tally, record: bool) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            writer.write(request)
            try:
                status, cache = await _read_response(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                tally.errors += 1
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                continue
            if record:
                tally.latencies.append((time.perf_counter() - started) * 1000)
                tally.cache[cache or "none"] += 1
                if status != 200:
                    tally.errors += 1
    finally:
        writer.close()


async def drive(port: int, request: bytes, clients: int, seconds: float, record: bool = True) -> Tally:
    tally = Tally()
    stop_at = time.perf_counter() + seconds
    await asyncio.gather(*(client(port, request, stop_at, tally, record) for _ in range(clients)))
    return tally


def http_request(body: bytes) -> bytes:
    head = (
        "POST /optimize HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def run_level(port: int, pid: int, request: bytes, clients: int, seconds: float) -> dict[str, Any]:
    asyncio.run(drive(port, request, clients, min(2.0, seconds / 3), record=False))  # connections, caches warm
    cpu_before, client_before, wall_before = cpu_seconds(pid), time.process_time(), time.perf_counter()
    tally = asyncio.run(drive(port, request, clients, seconds))
    wall = time.perf_counter() - wall_before
    server_cpu, client_cpu = cpu_seconds(pid) - cpu_before, time.process_time() - client_before
    ordered = sorted(tally.latencies)
    count = len(ordered)
    return {
        "clients": clients,
        "requests": count,
        "seconds": round(wall, 2),
        "requests_per_s": round(count / wall, 1),
        "p50_ms": round(statistics.median(ordered), 2) if ordered else None,
        "p99_ms": round(percentile(ordered, 0.99), 2),
        "errors": tally.errors,
        "server_cpu_ms_per_request": round(server_cpu / max(count, 1) * 1000, 3),
        "server_cpu_cores_busy": round(server_cpu / wall, 2),
        "client_cpu_ms_per_request": round(client_cpu / max(count, 1) * 1000, 3),
        "cache_header": dict(tally.cache),
        "server_holds_after": held(pid),
    }


def run_configuration(name: str, env: dict[str, str], args: argparse.Namespace, request: bytes) -> dict[str, Any]:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="pushdown-load-") as data_dir:
        proc = start_server(port, args.workers, Path(data_dir), env, args.tree)
        try:
            at_start = held(proc.pid)
            levels = [run_level(port, proc.pid, request, n, args.seconds) for n in args.clients]
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    for level in levels:
        print(
            f"  {name:10} {level['clients']:>4} clients: {level['requests_per_s']:>8.1f} req/s  "
            f"p50 {level['p50_ms']:>7} ms  p99 {level['p99_ms']:>8} ms  errors {level['errors']}  "
            f"server CPU {level['server_cpu_ms_per_request']} ms/req  client CPU "
            f"{level['client_cpu_ms_per_request']} ms/req  cache {level['cache_header']}  "
            f"server holds {level['server_holds_after']}"
        )
    grown = levels[-1]["server_holds_after"]["fds"] - at_start["fds"] if levels else 0
    return {"settings": env, "server_holds_at_start": at_start, "levels": levels, "descriptors_grown": grown}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--clients", default="8,32,128", help="comma-separated client counts")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per client count")
    parser.add_argument("--quick", action="store_true", help="3 s per client count")
    parser.add_argument("--no-cache-off", action="store_true", help="skip the run with the cache off")
    parser.add_argument("--lean", action="store_true", help="also: history queued, access log off (warning level)")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to serve (default: this one)")
    args = parser.parse_args()
    args.clients = [int(n) for n in str(args.clients).split(",")]
    if args.quick:
        args.seconds = 3.0
    request = http_request(q05_body())
    load = os.getloadavg()
    print(f"q05 over HTTP, {args.workers} workers, {os.cpu_count()} CPUs, load average before {load[0]:.2f}")
    version = served_version(args.tree)
    print(version)
    configurations: dict[str, dict[str, str]] = {"cache_on": {}}
    if args.lean:
        configurations["cache_on_lean"] = {"PUSHDOWN_HISTORY_DURABILITY": "queue", "PUSHDOWN_LOG_LEVEL": "warning"}
    if not args.no_cache_off:
        configurations["cache_off"] = {"PUSHDOWN_CACHE_ENABLED": "false"}
    runs = {name: run_configuration(name, env, args, request) for name, env in configurations.items()}
    on = {level["clients"]: level for level in runs["cache_on"]["levels"]}
    best = max(level["requests_per_s"] for level in on.values())
    targets = {
        "requests_per_s": {"target": TARGET_RPS, "measured_best": best, "met": best >= TARGET_RPS},
        "p99_ms_at_32_clients": {
            "target": TARGET_P99_MS_AT_32,
            "measured": on[32]["p99_ms"] if 32 in on else None,
            "met": 32 in on and on[32]["p99_ms"] <= TARGET_P99_MS_AT_32,
        },
        "errors": {"target": 0, "measured": sum(lv["errors"] for r in runs.values() for lv in r["levels"])},
    }
    targets["errors"]["met"] = targets["errors"]["measured"] == 0
    grown = max(r["descriptors_grown"] for r in runs.values())
    targets["descriptors_grown"] = {"target": MAX_DESCRIPTORS_GROWN, "measured": grown}
    targets["descriptors_grown"]["met"] = grown <= MAX_DESCRIPTORS_GROWN
    for name, verdict in targets.items():
        print(f"  target {name}: {verdict}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_before": [round(x, 2) for x in load],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
        },
        "request": "bench/tpch/plans/q05.json with bench/tpch/catalog.json (plan input, default detail)",
        "workers": args.workers,
        "seconds_per_level": args.seconds,
        "server": "pushdown serve (uvicorn: uvloop, httptools; history on, commit durability; JSON access log)",
        "tree": str(args.tree),
        "version": version,
        "runs": runs,
        "targets": targets,
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
