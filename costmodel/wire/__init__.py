"""The wire format (design.md's contract): strict reading and binding (``read``), writing back (``write``)."""

from costmodel.wire.names import Namer
from costmodel.wire.read import MAX_DEPTH, Binder, json_depth, plan_from_wire
from costmodel.wire.write import expr_to_wire, keys_to_wire, named_to_wire, plan_to_wire

__all__ = [
    "MAX_DEPTH",
    "Binder",
    "Namer",
    "expr_to_wire",
    "json_depth",
    "keys_to_wire",
    "named_to_wire",
    "plan_from_wire",
    "plan_to_wire",
]
