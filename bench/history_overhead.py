"""What recording the optimization history costs ``POST /optimize``: p50 latency and throughput, on against off.

    python bench/history_overhead.py [--rounds 4] [--latency-requests 300] [--seconds 5] [--clients 4]
                                     [--database-url postgresql://...]

Each round starts a real service (``uvicorn --factory api.app:create_app``, one worker) twice, with
``PUSHDOWN_HISTORY_ENABLED`` false and true (order alternating between rounds), on a fresh SQLite file
(or the given database), and sends the 22 TPC-H plans (with a context, as orchestrators do):

  * latency: one client, requests one after another; p50 and p99;
  * throughput: ``--clients`` threads, each with its own keep-alive connection, for ``--seconds``; requests/s.

Figures are the median over rounds. With recording on it also reports how many answers were recorded,
dropped or lost, so a fast figure that dropped records cannot pass. Target (issue 7): recording costs
under 10% of throughput. Writes bench/results/history_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
TPCH = ROOT / "bench" / "tpch"
RESULTS = ROOT / "bench" / "results" / "history_overhead.json"
TARGET_THROUGHPUT_COST = 0.10


def bodies() -> list[bytes]:
    catalog = json.loads((TPCH / "catalog.json").read_text())
    out = []
    for path in sorted((TPCH / "plans").glob("q*.json")):
        body = {
            "plan": json.loads(path.read_text()),
            "catalog": catalog,
            "context": {"pipeline": "tpch", "task": path.stem, "run": "bench"},
        }
        out.append(json.dumps(body).encode())
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Service:
    """The service in its own process, on a free port, with the given environment."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "api.app:create_app",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--log-level",
                "warning",
                "--no-access-log",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/healthz", timeout=0.5).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("the service did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def latency(base: str, payloads: list[bytes], requests: int) -> dict[str, float]:
    headers = {"Content-Type": "application/json"}
    samples = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for i in range(len(payloads)):  # warm-up: every query once
            client.post("/optimize", content=payloads[i], headers=headers).raise_for_status()
        for i in range(requests):
            start = time.perf_counter_ns()
            client.post("/optimize", content=payloads[i % len(payloads)], headers=headers).raise_for_status()
            samples.append((time.perf_counter_ns() - start) / 1e6)
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))], 3),
    }


def throughput(base: str, payloads: list[bytes], seconds: float, clients: int) -> float:
    headers = {"Content-Type": "application/json"}
    counts = [0] * clients
    errors: list[BaseException] = []
    start_at = time.perf_counter() + 0.2
    stop_at = start_at + seconds

    def work(slot: int) -> None:
        try:
            with httpx.Client(base_url=base, timeout=30) as client:
                client.get("/healthz")
                while time.perf_counter() < start_at:
                    time.sleep(0.001)
                i = slot
                while time.perf_counter() < stop_at:
                    client.post("/optimize", content=payloads[i % len(payloads)], headers=headers).raise_for_status()
                    counts[slot] += 1
                    i += 1
        except BaseException as exc:  # reported by the caller
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return round(sum(counts) / seconds, 1)


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux), all its threads: a cost the machine's load cannot skew."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_written(base: str, timeout: float = 30) -> dict[str, Any]:
    """The history's counters once everything submitted is written or counted as lost."""
    deadline = time.monotonic() + timeout
    while True:
        status = httpx.get(f"{base}/api/history/status", timeout=10).json()
        settled = status["recorded"] + status["dropped"] + status["failed"]
        if settled >= status["submitted"] or time.monotonic() > deadline:
            return dict(status)
        time.sleep(0.1)


def run_mode(recording: bool, args: argparse.Namespace, payloads: list[bytes], data_dir: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHDOWN_")}
    env.update(PUSHDOWN_HISTORY_ENABLED=str(recording).lower(), PUSHDOWN_DATA_DIR=str(data_dir))
    if args.database_url:
        env["PUSHDOWN_DATABASE_URL"] = args.database_url
    service = Service(env)
    try:
        result: dict[str, Any] = latency(service.base, payloads, args.latency_requests)
        cpu_before = process_cpu_seconds(service.proc.pid)
        result["requests_per_s"] = throughput(service.base, payloads, args.seconds, args.clients)
        if recording:  # the writer's work for these requests counts too: wait for it before reading the CPU time
            wait_written(service.base)
        cpu = process_cpu_seconds(service.proc.pid) - cpu_before
        result["server_cpu_ms_per_request"] = round(cpu * 1000 / (result["requests_per_s"] * args.seconds), 3)
        if recording:
            status = wait_written(service.base)
            result["history"] = {k: status[k] for k in ("backend", "submitted", "recorded", "dropped", "failed")}
    finally:
        service.stop()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--latency-requests", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--database-url", default=None, help="record into this database instead of a new SQLite file")
    args = parser.parse_args()
    payloads = bodies()
    print(
        f"{len(payloads)} TPC-H plans; {args.rounds} rounds; {args.latency_requests} sequential requests, "
        f"then {args.clients} clients for {args.seconds:g} s; store: {args.database_url or 'SQLite (WAL)'}"
    )

    runs: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
    with tempfile.TemporaryDirectory(prefix="pushdown-bench-") as tmp:
        for n in range(args.rounds):
            for mode in ("off", "on") if n % 2 == 0 else ("on", "off"):
                result = run_mode(mode == "on", args, payloads, Path(tmp) / f"{mode}-{n}")
                runs[mode].append(result)
                extra = f"  history {result['history']}" if "history" in result else ""
                print(
                    f"round {n + 1} recording {mode:>3}: p50 {result['p50_ms']:.3f} ms  "
                    f"p99 {result['p99_ms']:.3f} ms  {result['requests_per_s']:,.1f} req/s  "
                    f"CPU {result['server_cpu_ms_per_request']:.3f} ms/req{extra}"
                )

    def median(mode: str, key: str) -> float:
        return round(statistics.median(r[key] for r in runs[mode]), 3)

    keys = ("p50_ms", "p99_ms", "requests_per_s", "server_cpu_ms_per_request")
    off = {k: median("off", k) for k in keys}
    on = {k: median("on", k) for k in keys}
    cpu_cost = round(on["server_cpu_ms_per_request"] / off["server_cpu_ms_per_request"] - 1, 4)
    cost = round(1 - on["requests_per_s"] / off["requests_per_s"], 4)
    p50_delta = round(on["p50_ms"] / off["p50_ms"] - 1, 4)
    lost = sum(r["history"]["dropped"] + r["history"]["failed"] for r in runs["on"])
    for mode, figures in (("off", off), ("on", on)):
        print(
            f"recording {mode:>3}: p50 {figures['p50_ms']:.3f} ms, {figures['requests_per_s']:,.1f} req/s, "
            f"server CPU {figures['server_cpu_ms_per_request']:.3f} ms per request"
        )
    verdict = "meets" if cost < TARGET_THROUGHPUT_COST and lost == 0 else "MISSES"
    print(
        f"throughput cost {cost:.1%} (target < {TARGET_THROUGHPUT_COST:.0%}), p50 {p50_delta:+.1%}, "
        f"server CPU per request {cpu_cost:+.1%}, records lost {lost}: {verdict} the target"
    )
    print(
        f"(load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs: other work on the machine skews "
        "throughput and latency, not the CPU time per request)"
    )

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "when": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": {
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "platform": platform.platform(),
                },
                "settings": vars(args),
                "off": off,
                "on": on,
                "throughput_cost": cost,
                "p50_change": p50_delta,
                "server_cpu_per_request_change": cpu_cost,
                "load_average": os.getloadavg()[0],
                "records_lost": lost,
                "target_throughput_cost": TARGET_THROUGHPUT_COST,
                "meets_target": verdict == "meets",
                "runs": runs,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
