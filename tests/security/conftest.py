"""The service in a process of its own, as an attacker meets it: real sockets, real signals, its own log."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.serving import free_port, wait_for_health

ROOT = Path(__file__).resolve().parents[2]
#: The time limit the process tests run with: short, so a test of a runaway request takes seconds, not tens.
LIMIT_S = 3.0
TOKEN = "sec-test-token-0123456789"


@dataclass
class ServiceProcess:
    """A ``pushdown serve`` process: its URL, process and log file."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str] = field(default_factory=dict)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def cpu_seconds(self) -> float:
        """User + system CPU time the process and its live worker processes have used so far (from /proc)."""
        total = 0
        for pid in [self.process.pid, *self.worker_pids()]:
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def worker_pids(self) -> list[int]:
        """The service's child processes (its heavy-request workers), from /proc."""
        return children_of(self.process.pid)


def children_of(pid: int) -> list[int]:
    """The live child processes of ``pid`` (any thread's), from /proc."""
    found: list[int] = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            found += [int(child) for child in children.read_text().split()]
    return found


def service_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """The environment of a service process: no developer PUSHDOWN_* variables, state under ``tmp_path``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHDOWN_")}
    env.update(
        PYTHONPATH=str(ROOT), PUSHDOWN_DATA_DIR=str(tmp_path / "data"), PUSHDOWN_REQUEST_TIME_LIMIT_S=str(LIMIT_S)
    )
    # Workers at normal priority: on a machine busy with other work a low-priority one gets next to no CPU,
    # and these tests time the answers. The lower priority is the bench's (defaults) to measure.
    env["PUSHDOWN_HEAVY_WORKER_NICENESS"] = "0"
    env.update({f"PUSHDOWN_{key.upper()}": value for key, value in settings.items()})
    return env


@contextmanager
def running_service(tmp_path: Path, *args: str, warm: bool = True, **settings: str) -> Iterator[ServiceProcess]:
    """``python -m service.cli serve`` on a free loopback port until the block ends (then SIGTERM); ``warm``:
    once its heavy-request workers answer."""
    port = free_port()
    log = tmp_path / f"service-{port}.log"
    env = service_env(tmp_path, **settings)
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(port), *args],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    service = ServiceProcess(f"http://127.0.0.1:{port}", process, log, env)
    try:
        wait_for_health(service.url, process, 60, output=service.log_text)
        if warm:
            wait_for_workers(service)
        yield service
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_for_workers(service: ServiceProcess) -> None:
    """Until the heavy-request workers have started (imported the engine, so they idle): on a busy machine that
    can take longer than a test's time limit. Until then the service answers heavy requests on threads."""
    wait_until_idle(service)


def wait_until_idle(service: ServiceProcess, timeout_s: float = 120.0) -> None:
    """Until the service and its workers use less than a fifth of a core (the workers have imported the engine)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        before = service.cpu_seconds()
        time.sleep(1.0)
        if service.cpu_seconds() - before < 0.2:
            return
    raise AssertionError(f"the service was still busy after {timeout_s} s")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """One service process for a module: token set, default settings otherwise (time limit LIMIT_S)."""
    with running_service(tmp_path_factory.mktemp("service"), api_token=TOKEN) as process:
        yield process


class HealthProbe:
    """Polls /healthz on one keep-alive connection in a thread while something else runs; records latencies."""

    def __init__(self, url: str, interval_s: float = 0.05) -> None:
        self.url = url
        self.interval_s = interval_s
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._connected = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        self._connected.wait(timeout=30)  # so even a request refused at once is watched by one poll at least
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=10) as client:
            client.get("/healthz")  # connect first: the probe measures answers, not the TCP handshake
            self._connected.set()
            while True:  # one poll at least, however soon the stop comes
                started = time.perf_counter()
                try:
                    status = client.get("/healthz").status_code
                except httpx.HTTPError as exc:
                    self.failures.append(repr(exc))
                else:
                    self.latencies.append(time.perf_counter() - started)
                    if status != 200:
                        self.failures.append(f"status {status}")
                if self._stop.wait(self.interval_s):
                    break

    def median(self) -> float:
        ordered = sorted(self.latencies)
        return ordered[len(ordered) // 2]

    def summary(self) -> str:
        ordered = sorted(self.latencies)
        if not ordered:
            return "no answers"
        p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
        ms = [round(x * 1000) for x in (self.median(), p95, ordered[-1])]
        return f"n={len(ordered)} median={ms[0]}ms p95={ms[1]}ms max={ms[2]}ms"


Auth = Callable[[], dict[str, str]]


def auth_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
