"""The README's serve command and the Docker image's install, run from fresh virtualenvs as a new user would.

The README's install (``python -m pip install .``) is read from README.md and run in a new ``python -m venv``
on a copy of this checkout; then ``pushdown serve`` from that virtualenv, with none of the developer's
``PUSHDOWN_*`` settings and a data directory of the test's, answers ``/healthz`` and a SQL ``/optimize``. The
Dockerfile's ``pip install`` line is read from the Dockerfile and run, build isolation and all, in another new
virtualenv on the files the Dockerfile COPYs, short of a Docker engine (CI has none); the result imports and
``pushdown --version`` runs. The case "without a virtualenv" is CI itself: it runs the README's test command as
root on the system Python (``.ci/run``). pip may use its cache; PyPI must be reachable.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx
import pytest

from tests.deploy.test_deployment import SERVICE_DOCKERFILE, _image_context, _instructions

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
#: what a copy of the checkout leaves out: what a fresh clone does not have
IGNORED = shutil.ignore_patterns(
    ".git",
    ".venv*",
    "__pycache__",
    "*.egg-info",
    "build",
    "dist",
    "data",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
)
REQUEST = {
    "sql": "SELECT a FROM (SELECT a, b FROM t) s WHERE a > 1",
    "catalog": {
        "tables": {"t": {"columns": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}], "row_count": 1000}}
    },
}


def readme_serve_command() -> tuple[list[str], list[str]]:
    """The README's serve command (in "Set up", the line that runs ``pushdown serve``), as its install part and
    its serve part, each split as the shell splits it (leading ``NAME=value`` assignments included)."""
    setup = README_SECTION.search((ROOT / "README.md").read_text())
    assert setup, "README.md has no '## Set up' section"
    commands = [line.strip() for block in FENCE.findall(setup.group(1)) for line in block.splitlines()]
    (line,) = [c for c in commands if "pushdown serve" in c]
    install, serve = (part.strip() for part in line.split("&&"))
    return shlex.split(install), shlex.split(serve)


README_SECTION = re.compile(r"^## Set up\n(.*?)(?=^## )", re.MULTILINE | re.DOTALL)
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
FENCE = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)


def dockerfile_pip_install() -> list[str]:
    """The Dockerfile's ``pip install`` command (one step of its RUN), its ARGs' defaults filled in."""
    steps = _instructions(SERVICE_DOCKERFILE)
    defaults = dict(arg.split("=", 1) for op, arg in steps if op == "ARG" and "=" in arg)
    (run,) = [args for op, args in steps if op == "RUN" and "pip install" in args]
    (command,) = [part.strip() for part in run.split("&&") if part.strip().startswith("pip install")]
    for name, value in defaults.items():
        command = command.replace("${" + name + "}", value).replace("$" + name, value)
    return shlex.split(command)


def clean_env(tmp_path: Path, venv: Path) -> dict[str, str]:
    """A new user's environment: no PUSHDOWN_* settings, no checkout on the path, the virtualenv's bin first,
    the default data directory (under XDG_DATA_HOME) in the test's directory."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHDOWN_") and k not in dropped}
    (tmp_path / "xdg-data").mkdir(exist_ok=True)
    return {
        **env,
        "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "VIRTUAL_ENV": str(venv),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
    }


def fresh_venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, capture_output=True, timeout=300)
    return where


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{shlex.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(command: list[str], cwd: Path, env: dict[str, str], port: int) -> Iterator[httpx.Client]:
    log = (cwd / "serve.log").open("w+")
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            deadline = time.monotonic() + 90
            while True:
                assert proc.poll() is None, f"pushdown serve exited ({proc.returncode}):\n{log_text(log)}"
                try:
                    if http.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, f"no /healthz within 90 s:\n{log_text(log)}"
                time.sleep(0.3)
            yield http
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def log_text(log: IO[str]) -> str:
    log.flush()
    log.seek(0)
    return log.read()[-3000:]


def test_the_readme_serve_command_works_in_a_fresh_virtualenv(tmp_path: Path) -> None:
    install, serve = readme_serve_command()
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT, checkout, ignore=IGNORED)
    venv = fresh_venv(tmp_path / "venv")
    env = clean_env(tmp_path, venv)
    while install and ASSIGNMENT.match(install[0]):  # the shell's NAME=value prefix, as the shell would set it
        name, value = install.pop(0).split("=", 1)
        env[name] = value
    assert install[:4] == ["python", "-m", "pip", "install"], install
    assert serve[:2] == ["pushdown", "serve"], serve

    # exactly the README's install, with the fresh virtualenv's python, in the checkout's copy
    run([str(venv / "bin" / "python"), *install[1:]], checkout, env, timeout=900)

    elsewhere = tmp_path / "run"
    elsewhere.mkdir()
    where = run([str(venv / "bin" / "python"), "-c", "import costmodel; print(costmodel.__file__)"], elsewhere, env, 60)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    port = free_port()
    pushdown = str(venv / "bin" / "pushdown")
    with serving([pushdown, *serve[1:], "--host", "127.0.0.1", "--port", str(port)], elsewhere, env, port) as http:
        answer = http.post("/optimize", json=REQUEST)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["summary"] and body["summary"][0]["predicate"], body["summary"]
        assert "a > 1" in body["sql"], body["sql"]
        assert http.get("/dashboard").status_code == 200  # the packaged static files came with the install
    # the history went to the test's data directory, never the developer's
    assert any((tmp_path / "xdg-data").rglob("*")), "nothing written under XDG_DATA_HOME"


def test_the_dockerfile_install_builds_and_runs_in_a_fresh_virtualenv(tmp_path: Path) -> None:
    command = dockerfile_pip_install()
    assert command[:2] == ["pip", "install"] and ".[postgres]" in command, command
    context = _image_context(tmp_path / "context")
    venv = fresh_venv(tmp_path / "venv")
    env = clean_env(tmp_path, venv)

    # pip builds the wheel in an isolated build environment ([build-system] requires only), as in the image
    run([str(venv / "bin" / "python"), "-m", *command], context, env, timeout=900)

    elsewhere = tmp_path / "run"
    elsewhere.mkdir()
    check = (
        "import importlib.metadata as m, pathlib, costmodel, service, api, psycopg\n"
        "root = pathlib.Path(costmodel.__file__).parent\n"
        "assert not [p for p in root.rglob('*') if p.suffix in ('.so', '.pyd')], 'a compiled engine'\n"
        "print(root, m.version('pyspark'))\n"
    )
    done = run([str(venv / "bin" / "python"), "-c", check], elsewhere, env, timeout=120)
    root, spark = done.stdout.split()
    assert Path(root).is_relative_to(venv), root
    pinned = [c.split("==", 1)[1] for c in command if c.startswith("pyspark==")]
    assert [spark] == pinned, (spark, pinned)
    version = run([str(venv / "bin" / "pushdown"), "--version"], elsewhere, env, timeout=120)
    assert version.stdout.startswith("pushdown "), version.stdout
