"""A virtualenv that holds what ``pip install ".[postgres]"`` (the Dockerfile's line) installs, and nothing else.

Building it from PyPI would download PySpark and friends on every run. Instead the project's declared
requirements are resolved against the distributions this interpreter already has (transitively, markers and
extras evaluated), and only those are linked into a fresh virtualenv through a ``.pth`` file; the project
itself is installed into it with ``pip install --no-deps`` from the image's build context. A module the
service needs but the project does not declare (protobuf, say, for Substrait) is then missing there, as in
the image.

This works the same inside a virtualenv and without one: the outer environment's packages are found with
``importlib.metadata`` from the running interpreter, never through ``--system-site-packages`` (which, from a
virtualenv's interpreter, means the base interpreter's packages and not the outer virtualenv's).
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def _project_requirements(extras: tuple[str, ...]) -> list[Requirement]:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in extras:
        reqs += [Requirement(r) for r in project.get("optional-dependencies", {}).get(extra, [])]
    return reqs


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def resolve(extras: tuple[str, ...] = ("postgres",)) -> list[metadata.Distribution]:
    """The installed distributions the project's requirements need, transitively; fails naming what is missing."""
    found: dict[str, metadata.Distribution] = {}
    pending: list[tuple[Requirement, frozenset[str]]] = [(r, frozenset()) for r in _project_requirements(extras)]
    missing: list[str] = []
    visited: set[tuple[str, frozenset[str]]] = set()
    while pending:
        req, parent_extras = pending.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in (parent_extras or {""})):
            continue
        key, wanted = _norm(req.name), frozenset(req.extras)
        if (key, wanted) in visited:
            continue
        visited.add((key, wanted))
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            missing.append(str(req))
            continue
        found[key] = dist
        pending += [(Requirement(line), wanted) for line in dist.requires or []]
    assert not missing, f"requirements not installed here, so not checkable: {missing}"
    return list(found.values())


def link_site(dists: list[metadata.Distribution], target: Path) -> Path:
    """A directory with a link to each top-level file or folder the distributions installed."""
    target.mkdir(parents=True, exist_ok=True)
    for dist in dists:
        base = Path(str(dist.locate_file("")))
        for file in dist.files or []:
            parts = Path(str(file)).parts
            if not parts or parts[0] in ("..", "__pycache__") or parts[0].endswith(".pth"):
                continue
            source, link = base / parts[0], target / parts[0]
            if source.exists() and not link.exists():
                link.symlink_to(source)
    return target


def image_like_venv(root: Path, context: Path, extras: tuple[str, ...] = ("postgres",)) -> Path:
    """A virtualenv under ``root`` with the project installed from ``context`` and only its declared dependencies;
    returns its ``bin`` directory."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.strip()
    )
    linked = link_site(resolve(extras), root / "deps")
    # pip installs the project (building it in an isolated environment, as the image's build does); it leaves
    # the path once the project is installed
    tools = link_site([metadata.distribution("pip")], root / "tools")
    pth = site / "pushdown-deps.pth"
    pth.write_text(f"{linked}\n{tools}\n")
    install = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", str(context)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    pth.write_text(f"{linked}\n")
    return venv / "bin"
