"""Builds the package. With ``PUSHDOWN_COMPILE=1`` the engine (``costmodel/``) and the SQL adapter (``service/sql/``)
are also compiled to C extensions with mypyc (the engine about 1.4 times faster on TPC-H; the same answers, byte
for byte), as the Docker image and the README's serve command do. Editable installs for development stay pure
Python unless asked, so an edited module is the module that runs. Without a C compiler or Python's headers the
build says so and stays pure Python.

    PUSHDOWN_COMPILE=1 python -m pip install .
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Any

from setuptools import setup

#: The packages compiled: the engine, and the SQL adapter, whose Python walks and builds sqlglot trees on every
#: SQL request (compiled, a SQL request takes 7% fewer instructions; docs/performance.md).
COMPILED_PACKAGES = ("costmodel", "service/sql")
#: modules left as Python: the error classes, which the service derives its own from or catches (a compiled
#: class's methods refuse instances of Python subclasses), and a package's ``__init__`` that only re-exports
PYTHON_ONLY = frozenset(
    {
        "costmodel/errors.py",
        "costmodel/deadline.py",
        "service/sql/__init__.py",
        "service/sql/errors.py",
        "service/sql/type_names.py",  # puts a Python function in place of sqlglot's (its docstring says why)
    }
)

#: mypyc's optimisation level (``MYPYC_OPT_LEVEL`` as mypyc names it); 3 is its default and what is measured
OPT_LEVEL = os.environ.get("MYPYC_OPT_LEVEL", "3")


def can_compile() -> str | None:
    """Why a C build cannot run here, or None when it can."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if not shutil.which(os.environ.get("CC", compiler).split()[0]):
        return f"no C compiler ({compiler})"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python headers (Python.h)"
    return None


def compiled_extensions() -> list[Any]:
    """The C extensions mypyc builds of ``COMPILED_PACKAGES`` with ``PUSHDOWN_COMPILE=1``; none otherwise."""
    if os.environ.get("PUSHDOWN_COMPILE", "0") != "1":
        return []
    missing = can_compile()
    if missing:
        print(
            f"pushdown: PUSHDOWN_COMPILE=1 but {missing}: the engine and the SQL adapter stay pure Python",
            file=sys.stderr,
        )
        return []
    from mypyc.build import mypycify

    # the type check itself runs in the tests (pyproject.toml's [tool.mypy]); here mypy only has to see the types
    modules = sorted(
        str(path)
        for package in COMPILED_PACKAGES
        for path in Path(package).rglob("*.py")
        if str(path) not in PYTHON_ONLY
    )
    return mypycify(["--config-file=", "--ignore-missing-imports", *modules], opt_level=OPT_LEVEL)


setup(ext_modules=compiled_extensions())
