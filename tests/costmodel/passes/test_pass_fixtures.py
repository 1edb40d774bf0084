"""Runs the text fixtures of each optimizer pass: tests/costmodel/passes/fixtures/<pass>.txt.

A fixture file holds cases::

    === name of the case
    options: {"mode": "always"}          (optional)
    plan: filter_(scan("t"), c("a") > 1)  (the tests/costmodel/dsl.py builders)
    --- before
    Filter: a > 1
      TableScan: t
    --- after
    <the state after the pass: tests/costmodel/passes/render.py>

The runner runs the pipeline up to and including the pass and compares both
trees as text, so a failure shows which pass and what tree. Like ``costmodel.optimizer.optimize`` it first puts
chains of inner joins in Catalyst's order (not in mode ``never``); "before" is the plan as written. Subqueries'
own plans are not decided here (``optimize`` decides them first, on their own). Set
``UPDATE_PASS_FIXTURES=1`` to rewrite the expected text after a deliberate change, then review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from costmodel import catalog_from_wire, options_from_wire, plan_from_wire
from costmodel.cost import CostModel, column_infos
from costmodel.estimate import DEFAULT_SOURCES, Estimator
from costmodel.estimate_live import ndv_drops
from costmodel.explain import explain
from costmodel.join_order import catalyst_join_order
from costmodel.optimizer import _tracked_columns
from costmodel.passes import PIPELINE, Work
from tests.costmodel import dsl
from tests.costmodel.passes.render import render

FIXTURES = Path(__file__).parent / "fixtures"
UPDATE = os.environ.get("UPDATE_PASS_FIXTURES") == "1"

#: The tables every fixture may read.
TABLES = {
    "t": dsl.table(["a", "b", "c"], rows=10_000, a={"ndv": 100, "min": 1, "max": 100}),
    "u": dsl.table(["a", "d"], rows=500, a={"ndv": 100, "min": 1, "max": 100}),
    "l": dsl.table(["k", "x"], rows=100_000, k={"ndv": 100_000}),
    "r": dsl.table(["k", "y"], rows=100, k={"ndv": 100}),
    # a small dimension with a selective key, and a fact table that joins it
    "d": dsl.table({"k": "int", "name": "string"}, rows=20, k={"ndv": 20, "min": 1, "max": 20}, name={"ndv": 20}),
    "fact": dsl.table(["id", "dk", "v"], rows=1_000_000, id={"ndv": 1_000_000}, dk={"ndv": 20, "min": 1, "max": 20}),
    # string columns (LIKE, casts that can raise)
    "s": dsl.table({"id": "int", "txt": "string", "n": "int"}, rows=1_000, id={"ndv": 1_000}),
}
CASE = re.compile(r"^=== (?P<name>.+?)\n(?P<body>.*?)(?=^=== |\Z)", re.S | re.M)


def _cases() -> list[tuple[str, str, str, str]]:
    out = []
    for path in sorted(FIXTURES.glob("*.txt")):
        text = path.read_text()
        assert any(name == path.stem for name, _ in PIPELINE), f"{path.name}: no pass named {path.stem}"
        for match in CASE.finditer(text):
            out.append((path.stem, match["name"], match["body"], str(path)))
    return out


def _section(body: str, name: str) -> str:
    match = re.search(rf"^--- {name}\n(.*?)(?=^--- |\Z)", body, re.S | re.M)
    return match.group(1).rstrip("\n") if match else ""


def _run(pass_name: str, body: str) -> tuple[str, str]:
    spec = dict(re.findall(r"^(options|plan): (.*)$", body, re.M))
    plan_wire: Any = eval(spec["plan"], vars(dsl))  # noqa: S307  (fixture files are ours)
    catalog = catalog_from_wire({"tables": TABLES})
    options = options_from_wire(json.loads(spec.get("options", "null")))
    written = plan_from_wire(plan_wire, catalog, functions=options.functions)
    plan = catalyst_join_order(written) if options.mode != "never" else written
    model = CostModel(catalog, options, Estimator(column_infos(plan, catalog), DEFAULT_SOURCES), _tracked_columns(plan))
    model.drop_unread(ndv_drops(plan, []))
    work = Work(plan, catalog, options, model)
    for name, run in PIPELINE:
        run(work)
        if name == pass_name:
            break
    return explain(written), render(pass_name, work)


def test_every_pass_has_fixtures() -> None:
    assert {stem for stem, *_ in _cases()} == {name for name, _ in PIPELINE}


def test_case_names_are_unique_per_pass() -> None:
    names = [(stem, name) for stem, name, *_ in _cases()]
    assert len(names) == len(set(names))


def test_at_least_150_cases() -> None:
    """The issue's bar: each rule with text fixtures a reviewer reads, at least 150 cases across the passes."""
    assert len(_cases()) >= 150


@pytest.mark.parametrize(("pass_name", "case", "body", "path"), _cases(), ids=lambda v: v if "\n" not in v else "")
def test_pass_fixture(pass_name: str, case: str, body: str, path: str) -> None:
    before, after = _run(pass_name, body)
    if UPDATE:
        text = Path(path).read_text()
        head = body.split("--- before")[0].rstrip("\n") + "\n"
        new_body = f"{head}--- before\n{before}\n--- after\n{after}\n\n"
        # the case's own header with its body: another case's body may hold this one's (the same plan, options)
        Path(path).write_text(text.replace(f"=== {case}\n{body}", f"=== {case}\n{new_body}", 1))
        return
    assert _section(body, "before") == before, f"{case}: the plan before"
    assert _section(body, "after") == after, f"{case}: after {pass_name}"
