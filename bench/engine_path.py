"""``--engine DIR`` for the benchmarks: import the engine and the service from DIR (an unpacked wheel, another
checkout, or a site-packages) instead of this checkout. Called before a benchmark imports them."""

from __future__ import annotations

import sys
from pathlib import Path


def use_engine_from_argv(argv: list[str] | None = None) -> None:
    """When ``argv`` (default ``sys.argv``) holds ``--engine DIR``, put DIR first on the path, ahead of the
    editable install's finders too."""
    args = sys.argv if argv is None else argv
    if "--engine" in args:
        where = Path(args[args.index("--engine") + 1]).resolve()
        sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("__editable__")]
        sys.path.insert(0, str(where))
