"""The service in a process of its own (``uvicorn --factory api.app:create_app``), to stop as a supervisor would
(SIGTERM) or as the kernel would (SIGKILL)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.serving import free_port, wait_for_health

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class ServiceProcess:
    proc: subprocess.Popen[str]
    base_url: str

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> str:
        """Send ``sig`` and wait for the exit; the process's output."""
        self.proc.send_signal(sig)
        try:
            return self.proc.communicate(timeout=timeout)[0]
        except subprocess.TimeoutExpired:
            self.proc.kill()
            output = self.proc.communicate()[0]
            raise AssertionError(f"the service did not exit within {timeout} s of signal {sig}: {output}") from None


def start_service(env: dict[str, str], factory: str = "api.app:create_app") -> ServiceProcess:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            factory,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base_url, proc, 30, output=lambda: proc.communicate()[0])
    except BaseException:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        raise
    return ServiceProcess(proc, base_url)


@contextmanager
def service(env: dict[str, str]) -> Iterator[httpx.Client]:
    """A service for the block; SIGTERM at the end, and it must exit cleanly."""
    running = start_service(env)
    try:
        with httpx.Client(base_url=running.base_url, timeout=30) as http:
            yield http
    finally:
        output = running.stop(signal.SIGTERM)
        # uvicorn shuts down gracefully (lifespan included), then re-raises the signal it caught.
        assert running.proc.returncode in (0, -signal.SIGTERM), output
