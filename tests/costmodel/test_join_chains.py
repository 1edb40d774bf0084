"""Join chains without the quadratic parts: the same answers, smaller estimates, indexes that agree with a walk.

Not timed (timing targets live in bench/scaling.py); each test checks the behaviour the linear form relies on.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

import costmodel.optimizer as optimizer_module
import costmodel.passes.place as place_module
from costmodel import catalog_from_wire, optimize_wire, plan_from_wire
from costmodel.cost import CostModel, column_infos
from costmodel.cut_change import cut_change
from costmodel.errors import PlanError
from costmodel.estimate import Estimator
from costmodel.estimate_live import ndv_drops
from costmodel.kinds.registry import kind_of
from costmodel.options import Options
from costmodel.plan import Join, Node, plan_memo, walk_plan
from costmodel.rules.infer_join_keys import KeyEqualities, _equal_to, column_pairs
from tests.correctness.plangen import TABLES, PlanGenerator, catalog, make_rows
from tests.costmodel.dsl import c, filter_, join, project, scan, table


def chain(joins: int, star: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """``t0 JOIN t1 ON ... JOIN t2 ...`` with a filter above each join (on t0's key for a star)."""
    plan = scan("t0")
    for i in range(1, joins + 1):
        key = c("t0.k") if star else c(f"t{i - 1}.k")
        plan = filter_(join(plan, scan(f"t{i}"), on=key == c(f"t{i}.k")), c(f"t{i}.v") > i)
    tables = {f"t{i}": table(["k", "v"], rows=1000 + 10 * i) for i in range(joins + 1)}
    return plan, {"tables": tables}


def answers(
    plan: dict[str, Any], tables: dict[str, Any], mode: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str]:
    """The answer with NDVs dropped where nothing reads them, and with every NDV kept."""
    with_drops = json.dumps(optimize_wire(plan, tables, {"mode": mode}), sort_keys=True)
    with monkeypatch.context() as patch:
        patch.setattr(place_module, "ndv_drops", lambda skeleton, preds: {})
        patch.setattr(optimizer_module, "ndv_drops", lambda skeleton, preds: {})
        without = json.dumps(optimize_wire(plan, tables, {"mode": mode}), sort_keys=True)
    return with_drops, without


@pytest.mark.parametrize("seed", range(40))
def test_dropping_unread_ndvs_changes_no_answer(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(20261122)
    cat = catalog({name: make_rows(rng, name, 30) for name in TABLES})
    plan = PlanGenerator(random.Random(seed)).query()
    for mode in ("cost", "always"):
        with_drops, without = answers(plan, cat, mode, monkeypatch)
        assert with_drops == without


@pytest.mark.parametrize("star", [False, True])
def test_join_chain_answers_are_the_same_with_and_without_drops(star: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    plan, tables = chain(40, star)
    with_drops, without = answers(plan, tables, "cost", monkeypatch)
    assert with_drops == without


def _model(plan: Node, tables: dict[str, Any]) -> CostModel:
    cat = catalog_from_wire(tables)
    return CostModel(cat, Options(), Estimator(column_infos(plan, cat)))


def test_a_join_chain_estimate_carries_only_the_ndvs_read_above() -> None:
    wire, tables = chain(60)
    with plan_memo():
        plan = plan_from_wire(wire, catalog_from_wire(tables))
        model = _model(plan, tables)
        model.drop_unread(ndv_drops(plan, []))
        joins = [node for node in walk_plan(plan) if isinstance(node, Join)]
        sizes = [len(model.row_estimate(node).ndv) for node in joins]
        kept = _model(plan, tables)
        full = [len(kept.row_estimate(node).ndv) for node in joins]
    # each join's estimate keeps its own tables' columns that the filter and the next join read, not all below
    assert max(sizes) <= 4
    assert max(full) == 2 * 61  # without drops, every column of every table below: what made chains quadratic


def test_a_key_every_join_reads_is_dropped_only_above_the_last_of_them() -> None:
    wire, tables = chain(5, star=True)
    with plan_memo():
        plan = plan_from_wire(wire, catalog_from_wire(tables))
        drops = ndv_drops(plan, [])
        joins = [node for node in walk_plan(plan) if isinstance(node, Join)]
    t0_k = next(f.cid for f in getattr(joins[-1].left, "fields", ()) if f.name == "k")  # the deepest join's left
    assert [node_id for node_id, cids in drops.items() if t0_k in cids] == [joins[0].id]  # the topmost join


def _walked_pairs(node: Join) -> list[Any]:
    """Key equalities the way inference always read them: the join's own, then a walk below each input."""
    pairs = column_pairs(node)
    for side in (node.left, node.right):
        stack = [side]
        while stack:
            current = stack.pop()
            found, inputs = kind_of(current).key_equalities(current)
            pairs += found
            stack.extend(inputs)
    return pairs


@pytest.mark.parametrize("star", [False, True])
def test_indexed_equalities_give_the_walks_answer_at_every_join(star: bool) -> None:
    wire, tables = chain(12, star)
    # a left join on top: its right side's equalities must not reach above it
    wire = join(wire, join(scan("u1"), scan("u2"), on=c("u1.k") == c("u2.k")), on=c("t0.k") == c("u1.k"), type="left")
    tables["tables"] |= {"u1": table(["k"], rows=10), "u2": table(["k"], rows=10)}
    with plan_memo():
        plan = plan_from_wire(wire, catalog_from_wire(tables))
        index = KeyEqualities(plan)
        for node in walk_plan(plan):
            if not isinstance(node, Join):
                continue
            for a, b in _walked_pairs(node):
                for column in (a, b):
                    assert _equal_to(column.cid, index.pairs_linking(column.cid, node)) == _equal_to(
                        column.cid, _walked_pairs(node)
                    )


def test_an_ambiguous_column_in_a_join_chain_lists_its_candidates_in_scope_order() -> None:
    plan = scan("t0")
    for i in range(1, 4):
        plan = join(plan, scan(f"t{i}"), on=c(f"t{i - 1}.k") == c(f"t{i}.k"))
    plan = filter_(plan, c("k") > 1)
    tables = catalog_from_wire({"tables": {f"t{i}": table(["k", "v"]) for i in range(4)}})
    with pytest.raises(PlanError) as info:
        plan_from_wire(plan, tables)
    assert info.value.code == "ambiguous_column"
    assert info.value.detail["candidates"] == ["t0.k", "t1.k", "t2.k", "t3.k"]


def test_columns_written_over_a_join_chain_keep_a_name_that_resolves_where_they_land() -> None:
    plan = scan("t0")
    for i in range(1, 4):
        plan = join(plan, scan(f"t{i}"), on=c(f"t{i - 1}.k") == c(f"t{i}.k"))
    plan = project(filter_(plan, c("t3.v") > 1), v=c("t3.v"))
    tables = {"tables": {f"t{i}": table(["k", "v"]) for i in range(4)}}
    answer = optimize_wire(plan, tables)
    text = json.dumps(answer["plan"])
    assert '"col": "t3.v"' in text and '"col": "v"' not in text.replace('"as": "v"', "")
    # the answer reads back: every name resolves to one column where it stands
    optimize_wire(answer["plan"], tables)


def test_cut_change_finds_what_left_and_what_came_however_the_lists_are_arranged() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        pool = [object() for _ in range(rng.randint(0, 12))]
        before = rng.sample(pool, rng.randint(0, len(pool)))
        after = rng.sample(pool, rng.randint(0, len(pool)))
        if rng.random() < 0.5 and before:  # the usual shape: a shared prefix, then the rest
            k = rng.randint(0, len(before))
            after = before[:k] + [x for x in after if x not in before[:k]]
        gone, came = cut_change(before, after)
        assert {id(x) for x in gone} == {id(x) for x in before} - {id(x) for x in after}
        assert {id(x) for x in came} == {id(x) for x in after} - {id(x) for x in before}
        assert len(gone) == len({id(x) for x in gone}) and len(came) == len({id(x) for x in came})
