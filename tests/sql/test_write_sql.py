"""``write_sql`` writes the renderer's trees exactly as sqlglot's own ``generate`` does, in every dialect sqlglot
has, and leaves out only transforms that cannot change such a tree."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import sqlglot
from sqlglot import exp, transforms
from sqlglot.dialects import DIALECTS

from costmodel import optimize_wire
from service.sql import SqlError, sql_to_plan
from service.sql.common import dialect_of
from service.sql.to_sql import render_tree
from service.sql.write_sql import _fast_dispatch, _preprocess_steps, write_sql
from tests.correctness.plangen import TABLES, PlanGenerator, catalog

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
GENERATED = 40


@pytest.fixture(scope="module")
def corpus() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(plan, catalog): the 22 TPC-H answers, and generated plans as written and as the engine rewrote them."""
    tpch_catalog = json.loads((TPCH / "catalog.json").read_text())
    out = []
    for path in sorted((TPCH / "queries").glob("q*.sql")):
        plan = sql_to_plan(path.read_text(), tpch_catalog)
        out.append((optimize_wire(plan, tpch_catalog)["plan"], tpch_catalog))
    generated_catalog = catalog({name: [] for name in TABLES})
    for seed in range(GENERATED):
        plan = PlanGenerator(random.Random(seed)).query()
        out += [(plan, generated_catalog), (optimize_wire(plan, generated_catalog)["plan"], generated_catalog)]
    return out


@pytest.mark.parametrize("dialect", sorted(name.lower() for name in DIALECTS))
def test_every_rendered_tree_is_written_as_sqlglot_writes_it(
    dialect: str, corpus: list[tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    written = 0
    for plan, plan_catalog in corpus:
        try:
            ours = render_tree(plan, dialect, plan_catalog)
        except SqlError:  # a plan this dialect cannot express: refused before writing, either way
            continue
        theirs = render_tree(plan, dialect, plan_catalog)  # a tree of its own: writing may change it
        try:
            expected = theirs.sql(dialect=dialect_of(dialect), pretty=True, copy=False)
        except Exception as err:  # noqa: BLE001 - whatever sqlglot raises, ours raises too
            with pytest.raises(type(err)):
                write_sql(ours, dialect)
            continue
        assert write_sql(ours, dialect) == expected, json.dumps(plan)[:300]
        written += 1
    assert written >= len(corpus) // 2, f"{dialect}: only {written} plans written"


def test_spark_writes_select_from_and_tables_without_their_transforms() -> None:
    generator_class = type(dialect_of("spark").generator())
    dispatch = _fast_dispatch(generator_class, lateral_view=True)
    assert dispatch is not None, "the installed sqlglot's generator no longer has the shape write_sql reads"
    assert dispatch[exp.Select] is generator_class.select_sql
    assert dispatch[exp.From] is generator_class.from_sql
    assert dispatch[exp.Table] is generator_class.table_sql


def test_a_transform_that_can_change_a_rendered_tree_still_runs() -> None:
    # Spark's SELECT transforms turn UNNEST into EXPLODE: kept where the renderer writes UNNEST
    spark = type(dialect_of("spark").generator())
    assert transforms.unnest_to_explode in (_preprocess_steps(spark()._dispatch[exp.Select]) or [])
    unnesting = _fast_dispatch(spark, lateral_view=False)
    assert unnesting is not None and unnesting[exp.Select] is spark()._dispatch[exp.Select]
    # Postgres has no semi join: its SELECT transform writes one as EXISTS, through write_sql too
    postgres = type(dialect_of("postgres").generator())
    kept = _fast_dispatch(postgres, lateral_view=False)
    assert kept is not None and kept[exp.Select] is postgres()._dispatch[exp.Select]
    tree = sqlglot.parse_one("SELECT a FROM t LEFT SEMI JOIN u ON t.a = u.b", read="spark")
    assert "EXISTS" in write_sql(tree, "postgres")
