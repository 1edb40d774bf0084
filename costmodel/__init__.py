"""The pushdown decision engine: no I/O; pure Python, or compiled by mypyc (setup.py) with the same answers.

Library use, no server and no Spark::

    from costmodel import optimize_wire
    response = optimize_wire(plan_json, catalog_json, options_json)
"""

import costmodel.kinds  # noqa: F401  (registers every operator kind before anything asks for one)
from costmodel.catalog import Catalog, catalog_from_wire
from costmodel.errors import PlanError
from costmodel.optimizer import optimize, optimize_wire
from costmodel.options import Options, options_from_wire
from costmodel.wire import plan_from_wire, plan_to_wire

#: whether this engine is the mypyc-compiled build (an extension module) rather than its Python source
COMPILED: bool = not __file__.endswith(".py")
#: which build this is, for people (``pushdown --version``, the benchmarks' results)
BUILD: str = "compiled with mypyc" if COMPILED else "pure Python"

__all__ = [
    "BUILD",
    "COMPILED",
    "Catalog",
    "Options",
    "PlanError",
    "catalog_from_wire",
    "optimize",
    "optimize_wire",
    "options_from_wire",
    "plan_from_wire",
    "plan_to_wire",
]
