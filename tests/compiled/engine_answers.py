"""Run in a subprocess: the answers of the engine found under a given root, one JSON document per case.

    python tests/compiled/engine_answers.py ENGINE_ROOT CASES_JSON OUT_JSON

``ENGINE_ROOT`` holds a ``costmodel`` package, pure or compiled; the editable install's import hook is set aside
so that package, and no other, is the one imported. Each case is ``[plan, catalog, options]``; its answer is the
engine's JSON answer or, for a refused plan, the error as the wire shows it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def load_engine(root: Path) -> object:
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("__editable__")]
    sys.path.insert(0, str(root))
    import costmodel

    assert Path(costmodel.__file__).resolve().is_relative_to(root.resolve()), costmodel.__file__
    return costmodel


def main() -> None:
    root, cases, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    costmodel = load_engine(root)
    sys.setrecursionlimit(20_000)  # the standard library's JSON for plans 2,000 levels deep (orjson stops at 255)
    answers = []
    for plan, catalog, options in json.loads(cases.read_text()):
        try:
            answers.append(costmodel.optimize_wire(plan, catalog, options))  # type: ignore[attr-defined]
        except costmodel.PlanError as refused:  # type: ignore[attr-defined]
            answers.append({"refused": refused.to_wire()})
    out.write_text(json.dumps({"compiled": costmodel.COMPILED, "answers": answers}))  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
