"""Text views of the optimizer's state after each pass, for the pass fixtures."""

from __future__ import annotations

from costmodel.explain import explain
from costmodel.passes import Work
from costmodel.passes.report import report
from costmodel.plan import op_name
from costmodel.positions import ON, SCAN, Position
from costmodel.render import to_sql


def _where(pos: Position) -> str:
    node = f"{op_name(pos.node)} {pos.node.id}"
    if pos.kind == SCAN:
        return f"into scan {pos.node.id}"
    if pos.kind == ON:
        return f"in the condition of {node}"
    return f"above {node}"


def _region(pos: Position, depth: int, lines: list[str]) -> None:
    text = f"{'  ' * depth}{_where(pos)}: {to_sql(pos.form)}"
    if pos.stop is not None:
        text += f"  -- blocked: {pos.stop.reason}"
    lines.append(text)
    for below in pos.below:
        _region(below, depth + 1, lines)


def _predicates(work: Work, kinds: tuple[str, ...] = ("where", "on", "derived")) -> list[str]:
    lines = []
    for pred in work.preds:
        if pred.kind not in kinds:
            continue
        origin = f", from filter {pred.origin_filter}" if pred.origin_filter else ""
        via = f", {pred.derived_reason} at {pred.via}" if pred.kind == "derived" else ""
        lines.append(f"{pred.kind}: {to_sql(pred.form)} ({_where(pred.root)}{origin}{via})")
    return lines


def _decisions(decisions: list[dict[str, object]]) -> list[str]:
    out = []
    for d in decisions:
        line = f"{d['action']} {d['reason']}: {d['predicate']} @{d['operator']}"
        if d["reason"] == "cheap_predicate" or d["action"] == "pulled_up":
            # the totals a reviewer checks: the model alone would keep a cheap predicate; rising paid
            line += f"  (cost_if_kept={d.get('cost_if_kept')}, cost_if_pushed={d.get('cost_if_pushed')})"
        out.append(line)
    return out


def _rewrites(rewrites: list[dict[str, object]]) -> list[str]:
    out = []
    for r in rewrites:
        if r["rule"] == "conjunct_order":
            out.append(f"  conjunct_order @{r['operator']}:")
            for part in r["order"]:  # type: ignore[attr-defined]
                out.append(
                    f"    {part['predicate']}  (cost={part['cost']}, selectivity={part['selectivity']}, "
                    f"rank={part['rank']})"
                )
        else:
            out.append(f"  {r['rule']}: {r['predicate']} @{r['operator']}")
    return out


def render(pass_name: str, work: Work) -> str:
    """The state a reviewer wants to see after ``pass_name``."""
    lines: list[str] = []
    if pass_name in ("normalize", "outer_joins"):
        assert work.skeleton is not None
        lines += ["skeleton:", *("  " + line for line in explain(work.skeleton).splitlines())]
        lines += ["to place:", *("  " + line for line in _predicates(work))]
        lines += ["rewrites:", *_rewrites(work.rewrites)]
        lines += ["decisions:", *("  " + line for line in _decisions(work.fixed))]
    elif pass_name == "legality":
        lines.append("positions:")
        for pred in work.preds:
            _region(pred.root, 1, lines)
    elif pass_name == "infer":
        lines += ["derived:", *("  " + line for line in _predicates(work, ("derived",)))]
    elif pass_name == "placement":
        lines.append("placed:")
        for pred in work.preds:
            where = ", ".join(_where(pos) for pos in pred.cut) or "nowhere (not worth adding)"
            lines.append(f"  {to_sql(pred.form)} -> {where}")
    elif pass_name == "rewrite":
        assert work.final is not None
        result = report(work, work.model.table(work.plan))
        lines += ["after:", *("  " + line for line in explain(work.final, ids=True).splitlines())]
        lines += ["decisions:", *("  " + line for line in _decisions(result.decisions))]
        lines += ["rewrites:", *_rewrites(result.rewrites)]
    else:
        raise ValueError(f"no view for pass {pass_name!r}")
    return "\n".join(lines)
