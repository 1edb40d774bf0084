"""Helpers for tests that run the service in a process of its own: a free port, waiting for /healthz, and waiting
for any condition to come true."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_health(
    base_url: str, process: subprocess.Popen, timeout_s: float = 30, output: Callable[[], str] = lambda: ""
) -> None:
    """Polls ``/healthz`` until it answers 200; fails with ``output()`` if the process exits first.

    ``output`` is only called once the process has exited, so it may read the process's pipes to the end.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            raise AssertionError(f"the service exited with {process.returncode}: {output()}")
        try:
            if httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"the service did not answer {base_url}/healthz within {timeout_s} s")
        time.sleep(0.1)


def wait_until(condition: Callable[[], object], timeout_s: float = 10) -> bool:
    """Whether ``condition()`` comes true within ``timeout_s``, polled every 20 ms."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
