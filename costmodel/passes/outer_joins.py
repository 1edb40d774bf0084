"""Pass 3, outer joins: an outer join whose null-supplying side a WHERE predicate rejects becomes inner.

    Filter: s.name = 'x'                     Filter: s.name = 'x'
      Join: left c.state_id = s.id    ->       Join: inner c.state_id = s.id

A predicate's legal positions say which joins it sits above; the rule
(``rules.outer_to_inner``) decides. After each change the verdicts are taken
again, since an inner join lets predicates pass that the outer one stopped.
"""

from __future__ import annotations

from dataclasses import replace

from costmodel.deadline import check_deadline
from costmodel.passes.legality import legality
from costmodel.passes.work import Work
from costmodel.plan import Join, replace_node
from costmodel.positions import ABOVE, iter_region
from costmodel.render import to_sql
from costmodel.rules.outer_to_inner import simplify_outer_join


def outer_joins(work: Work) -> None:
    if work.options.mode == "never":
        return
    skeleton = work.require_skeleton()
    while True:
        check_deadline()  # the request's time limit (costmodel.deadline)
        change = None
        for pred in work.preds:
            for pos in iter_region(pred.root):
                if pos.kind == ABOVE and pos.stop is not None and isinstance(pos.node, Join):
                    new_type = simplify_outer_join(pos.form, pos.node)
                    if new_type is not None:
                        change = (pos.node, new_type, pos.form)
                        break
            if change:
                break
        if change is None:
            return
        join, new_type, form = change
        work.rewrites.append(
            {
                "rule": "outer_to_inner",
                "operator": join.id,
                "from": join.type,
                "to": new_type,
                "predicate": to_sql(form),
                "detail": f"{to_sql(form)} is never true on the rows the {join.type} join pads with NULLs",
            }
        )
        skeleton = replace_node(skeleton, join.id, replace(join, type=new_type))
        work.skeleton = skeleton
        legality(work)
