"""The pushdown decision engine: no I/O, pure Python.

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

__all__ = [
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
