"""What recording the optimization history costs ``POST /optimize``, per durability option, against recording off.

    python bench/history_overhead.py [--rounds 4] [--latency-requests 300] [--seconds 5] [--clients 4]
                                     [--database-url postgresql://...]

Each round starts a real service (``uvicorn --factory api.app:create_app``, one worker) three times: recording
off, ``PUSHDOWN_HISTORY_DURABILITY=queue`` (answer at once, write a moment later) and ``commit`` (answer once
the record is committed), in an order that rotates between rounds, on a fresh SQLite file (or the given
database), and sends the 22 TPC-H plans (with a context, as orchestrators do):

  * latency: one client, requests one after another; p50 and p99;
  * throughput: ``--clients`` threads, each with its own keep-alive connection, for ``--seconds``; requests/s.

Figures are the median over rounds. With recording on it also reports how many answers were recorded,
dropped or lost, and how many answers did not say ``recorded`` in commit mode, so a fast figure that dropped
records cannot pass; and the bytes stored per record beside the request's and answer's size. Target
(issue 7): recording costs under 10% of throughput. Writes bench/results/history_overhead.json.
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
from collections import Counter
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


HEADER = "Pushdown-History"


def latency(base: str, payloads: list[bytes], requests: int, outcomes: Counter[str]) -> dict[str, float]:
    headers = {"Content-Type": "application/json"}
    samples = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for i in range(len(payloads)):  # warm-up: every query once
            client.post("/optimize", content=payloads[i], headers=headers).raise_for_status()
        for i in range(requests):
            start = time.perf_counter_ns()
            answer = client.post("/optimize", content=payloads[i % len(payloads)], headers=headers)
            samples.append((time.perf_counter_ns() - start) / 1e6)
            answer.raise_for_status()
            outcomes[answer.headers.get(HEADER, "none")] += 1
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))], 3),
    }


def throughput(base: str, payloads: list[bytes], seconds: float, clients: int, outcomes: Counter[str]) -> float:
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
                    answer = client.post("/optimize", content=payloads[i % len(payloads)], headers=headers)
                    answer.raise_for_status()
                    outcomes[answer.headers.get(HEADER, "none")] += 1
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


MODES = ("off", "queue", "commit")


def run_mode(mode: str, args: argparse.Namespace, payloads: list[bytes], data_dir: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHDOWN_")}
    recording = mode != "off"
    env.update(PUSHDOWN_HISTORY_ENABLED=str(recording).lower(), PUSHDOWN_DATA_DIR=str(data_dir))
    if recording:
        env["PUSHDOWN_HISTORY_DURABILITY"] = mode
    if args.database_url:
        env["PUSHDOWN_DATABASE_URL"] = args.database_url
    service = Service(env)
    outcomes: Counter[str] = Counter()
    try:
        result: dict[str, Any] = latency(service.base, payloads, args.latency_requests, outcomes)
        cpu_before = process_cpu_seconds(service.proc.pid)
        result["requests_per_s"] = throughput(service.base, payloads, args.seconds, args.clients, outcomes)
        if recording:  # the writer's work for these requests counts too: wait for it before reading the CPU time
            wait_written(service.base)
        cpu = process_cpu_seconds(service.proc.pid) - cpu_before
        result["server_cpu_ms_per_request"] = round(cpu * 1000 / (result["requests_per_s"] * args.seconds), 3)
        result["answers_said"] = dict(outcomes)
        if recording:
            status = wait_written(service.base)
            result["history"] = {k: status[k] for k in ("backend", "submitted", "recorded", "dropped", "failed")}
            totals = status.get("totals") or {}
            if totals.get("kept"):
                result["stored_bytes_per_record"] = round(totals["stored_bytes"] / totals["kept"], 1)
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

    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="pushdown-bench-") as tmp:
        for n in range(args.rounds):
            for mode in MODES[n % 3 :] + MODES[: n % 3]:
                result = run_mode(mode, args, payloads, Path(tmp) / f"{mode}-{n}")
                runs[mode].append(result)
                extra = f"  history {result['history']}  said {result['answers_said']}" if "history" in result else ""
                print(
                    f"round {n + 1} recording {mode:>6}: p50 {result['p50_ms']:.3f} ms  "
                    f"p99 {result['p99_ms']:.3f} ms  {result['requests_per_s']:,.1f} req/s  "
                    f"CPU {result['server_cpu_ms_per_request']:.3f} ms/req{extra}",
                    flush=True,
                )

    def median(mode: str, key: str) -> float:
        return round(statistics.median(r[key] for r in runs[mode]), 3)

    keys = ("p50_ms", "p99_ms", "requests_per_s", "server_cpu_ms_per_request")
    figures = {mode: {k: median(mode, k) for k in keys} for mode in MODES}
    off = figures["off"]
    request_bytes = statistics.mean(len(p) for p in payloads)
    options: dict[str, dict[str, Any]] = {}
    for mode in MODES[1:]:
        on = figures[mode]
        lost = sum(r["history"]["dropped"] + r["history"]["failed"] for r in runs[mode])
        unconfirmed = sum(n for r in runs[mode] for said, n in r["answers_said"].items() if said != "recorded")
        options[mode] = {
            **on,
            "throughput_cost": round(1 - on["requests_per_s"] / off["requests_per_s"], 4),
            "p50_added_ms": round(on["p50_ms"] - off["p50_ms"], 3),
            "p50_change": round(on["p50_ms"] / off["p50_ms"] - 1, 4),
            "server_cpu_added_ms_per_request": round(
                on["server_cpu_ms_per_request"] - off["server_cpu_ms_per_request"], 3
            ),
            "records_lost": lost,
            "answers_not_saying_recorded": unconfirmed,
            "stored_bytes_per_record": statistics.median(r.get("stored_bytes_per_record", 0) for r in runs[mode]),
        }
    print(
        f"recording    off: p50 {off['p50_ms']:.3f} ms, {off['requests_per_s']:,.1f} req/s, "
        f"server CPU {off['server_cpu_ms_per_request']:.3f} ms per request"
    )
    for mode, o in options.items():
        verdict = "meets" if o["throughput_cost"] < TARGET_THROUGHPUT_COST and o["records_lost"] == 0 else "MISSES"
        print(
            f"recording {mode:>6}: p50 {o['p50_ms']:.3f} ms ({o['p50_added_ms']:+.3f} ms), "
            f"{o['requests_per_s']:,.1f} req/s (cost {o['throughput_cost']:.1%}), server CPU "
            f"{o['server_cpu_ms_per_request']:.3f} ms/req ({o['server_cpu_added_ms_per_request']:+.3f}), "
            f"records lost {o['records_lost']}, answers not saying 'recorded' {o['answers_not_saying_recorded']}, "
            f"{o['stored_bytes_per_record']:,.0f} bytes stored per record "
            f"(request {request_bytes:,.0f} bytes): {verdict} the target"
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
                "options": options,
                "request_bytes_mean": round(request_bytes, 1),
                "load_average": os.getloadavg()[0],
                "target_throughput_cost": TARGET_THROUGHPUT_COST,
                "runs": runs,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
