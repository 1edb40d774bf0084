"""Comments and docs cite files and modules that exist: a moved or renamed file leaves no stale pointer behind.

Checked: every repository path (``service/sql/parse.py``, ``docs/api.md``, ``tests/roundtrip/``) and every
double-backticked dotted name of the project (````costmodel.errors.ServiceError````) in the production code's
comments and docstrings, the docs and the README. Paths with placeholders (``qNN``, ``<name>``, ``*``) and bench
outputs (``bench/results/``, written when a bench runs) are not checked.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATH_REF = re.compile(r"(?<![\w/.])((?:api|service|costmodel|tests|bench|docs|scripts|integrations|docker)/[\w./-]*\w)")
DOTTED_REF = re.compile(r"``((?:api|service|costmodel)(?:\.\w+)+)(?:\(\))?``")
PLACEHOLDER = re.compile(r"NN|[<>{}*]")


def sources() -> list[Path]:
    code = [p for folder in ("api", "service", "costmodel") for p in (ROOT / folder).rglob("*.py")]
    return code + sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def resolves(dotted: str) -> bool:
    """``a.b.c``: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def stale_references(text: str) -> list[str]:
    """The paths and dotted names in ``text`` that do not exist.

    >>> stale_references("see ``costmodel.errors.ServiceError`` and service/nowhere.py")
    ['service/nowhere.py']
    """
    out = []
    for match in PATH_REF.finditer(text):
        ref = match.group(1).rstrip(".")
        if not PLACEHOLDER.search(ref) and not ref.startswith("bench/results/") and not (ROOT / ref).exists():
            out.append(ref)
    out += [m.group(1) for m in DOTTED_REF.finditer(text) if not resolves(m.group(1))]
    return out


def test_cited_files_and_modules_exist() -> None:
    stale = {str(path.relative_to(ROOT)): refs for path in sources() if (refs := stale_references(path.read_text()))}
    assert not stale, f"references to files or modules that do not exist: {stale}"


def test_the_check_finds_a_stale_reference() -> None:
    assert stale_references("moved to costmodel/nowhere.py; see ``service.sql.no_such_thing``") == [
        "costmodel/nowhere.py",
        "service.sql.no_such_thing",
    ]
    assert stale_references("``service.sql.errors.SqlError`` in service/sql/errors.py") == []
