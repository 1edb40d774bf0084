"""``optimize_dataframe`` never changes a pipeline's result: random DataFrame pipelines (``dataframe_gen``), each run
as written and as optimized on local Spark, give the same multiset of rows under the same schema (column names,
order, types, nullability). The long campaign is ``bench/dataframe_differential.py``."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from service.client import PushdownClient
from tests.correctness.dataframe_check import Outcome, check_seed
from tests.correctness.dataframe_gen import DataFrameGenerator, make_udfs, register_tables
from tests.spark_session import get_spark, java_available

pytestmark = pytest.mark.skipif(not java_available(), reason="local Spark needs a Java runtime")

#: pipelines in this campaign (seeds 0..PIPELINES-1): a few minutes on two cores
PIPELINES = 80


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Any]:
    spark = get_spark()
    register_tables(spark, tmp_path_factory.mktemp("dataframe-differential"))
    return spark, make_udfs(), PushdownClient()


@pytest.fixture(scope="module")
def outcomes() -> dict[int, Outcome]:
    """Outcomes by seed, as the tests below find them (the summary test runs the seeds no test ran)."""
    return {}


def outcome_of(world: tuple[Any, Any, Any], outcomes: dict[int, Outcome], seed: int) -> Outcome:
    if seed not in outcomes:
        outcomes[seed] = check_seed(*world[:2], seed, world[2])
    return outcomes[seed]


@pytest.mark.parametrize("seed", range(PIPELINES))
def test_an_optimized_pipeline_gives_the_original_rows_and_schema(world, outcomes, seed):
    outcome = outcome_of(world, outcomes, seed)
    assert outcome.status == "same", f"seed {seed}: {outcome.reason}\nops {outcome.ops}\n{outcome.detail}"


def test_the_campaign_rewrites_pipelines_and_moves_predicates_both_ways(world, outcomes):
    """The comparisons above prove something only if the service changed some pipelines: some answers are applied
    (not the caller's DataFrame), some move a predicate down and some pull one up."""
    found = [outcome_of(world, outcomes, seed) for seed in range(PIPELINES)]
    assert sum(o.rewritten for o in found) >= PIPELINES // 10, [o.seed for o in found if o.rewritten]
    assert sum(1 for o in found if o.downward) >= PIPELINES // 2
    assert any(o.upward for o in found)


def test_the_generator_writes_every_operator_kind(world):
    """Over the campaign's seeds: every join type, UDFs of each kind, filters early (on a table) and late (on top),
    and the other operators the SQL generator has. Building a DataFrame only analyzes it: nothing runs."""
    spark, udfs, _ = world
    seen: Counter[str] = Counter()
    for seed in range(PIPELINES):
        seen.update(DataFrameGenerator(spark, udfs, seed).pipeline().ops)
    joins = {f"join_{how}" for how in ("inner", "left", "right", "full", "left_semi", "left_anti", "cross")}
    udf_kinds = {"udf_expensive", "udf_cheap", "pandas_udf_expensive", "pandas_udf_cheap", "udf_undeclared"}
    udf_kinds |= {"udf_nondeterministic", "udf_value", "udf_in_join_condition"}
    others = {"aggregate", "window", "union", "union_by_name", "distinct", "drop_duplicates", "explode", "limit"}
    others |= {"drop_duplicates_subset", "explode_outer", "posexplode", "sort", "with_column", "select"}
    others |= {"early_filter", "late_filter", "join_inner_using", "join_full_using", "join_cross_unconditioned"}
    expected = joins | udf_kinds | others
    assert expected <= set(seen), sorted(expected - set(seen))
