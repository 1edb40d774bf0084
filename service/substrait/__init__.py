"""Substrait adapter: Substrait plan JSON <-> wire plan, pure functions with no I/O.

``substrait_to_plan`` turns a producer's (unoptimized) Substrait plan into the
wire plan the cost model optimises; ``plan_to_substrait`` writes the rewritten
wire plan back as Substrait, reusing the original's declarations. Both raise
``SubstraitError`` for anything they cannot translate faithfully.
"""

from service.substrait.errors import SubstraitError
from service.substrait.to_plan import substrait_to_plan
from service.substrait.to_substrait import plan_to_substrait

__all__ = ["SubstraitError", "plan_to_substrait", "substrait_to_plan"]
