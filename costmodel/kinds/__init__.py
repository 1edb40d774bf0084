"""Operator kinds, one module each; importing this package registers them all (``costmodel.kinds.registry``).

To add a kind, write its module and add it to the import list below (docs/operator-kinds.md).
"""

from costmodel.kinds import (  # noqa: F401  (each module registers its kind on import)
    aggregate,
    alias,
    distinct,
    filter,
    generate,
    join,
    limit,
    project,
    sample,
    scan,
    setop,
    sort,
    window,
)
from costmodel.kinds.registry import OperatorKind, all_kinds, kind_for_op, kind_of

__all__ = ["OperatorKind", "all_kinds", "kind_for_op", "kind_of"]
