"""TPC-H in DataFusion for the Substrait tests: the real producer and consumer, on generated data.

``tpchgen-cli`` writes a scale-factor-0.01 data set once per session. The
producer's plan is the unoptimized logical plan. DataFusion 55's producer
cannot write outer (correlated) references, so for the six queries with
correlated subqueries the plan is taken after only DataFusion's two
decorrelation rules, which turn the subqueries into semi/anti/left joins
and push no filter anywhere.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

datafusion = pytest.importorskip("datafusion")
from datafusion import SessionConfig, SessionContext  # noqa: E402
from datafusion.substrait import Consumer, Plan, Producer  # noqa: E402

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
CATALOG: dict[str, Any] = json.loads((TPCH / "catalog.json").read_text())
QUERIES = sorted((TPCH / "queries").glob("q*.sql"))
NAMES = [q.stem for q in QUERIES]
TABLES = ("customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier")
DECORRELATION_RULES = frozenset({"decorrelate_predicate_subquery", "scalar_subquery_to_join"})
#: DataFusion 55's logical optimizer rules, every one of which is removed except the decorrelation ones.
OPTIMIZER_RULES = (
    "rewrite_set_comparison",
    "optimize_unions",
    "unions_to_filter",
    "simplify_expressions",
    "replace_distinct_aggregate",
    "eliminate_join",
    "decorrelate_predicate_subquery",
    "scalar_subquery_to_join",
    "decorrelate_lateral_join",
    "extract_equijoin_predicate",
    "eliminate_duplicated_expr",
    "eliminate_filter",
    "eliminate_cross_join",
    "eliminate_limit",
    "propagate_empty_relation",
    "filter_null_join_keys",
    "eliminate_outer_join",
    "push_down_limit",
    "push_down_filter",
    "single_distinct_aggregation_to_group_by",
    "eliminate_group_by_constant",
    "common_sub_expression_eliminate",
    "extract_leaf_expressions",
    "push_down_leaf_projections",
    "optimize_projections",
)


class Tpch:
    """A context over the data, one that only decorrelates, and the query helpers the tests share."""

    def __init__(self, data: Path, empty: bool = False) -> None:
        self.ctx = self._context(data, empty, decorrelate_only=False)
        self.decorrelating = self._context(data, empty, decorrelate_only=True)

    @staticmethod
    def _context(data: Path, empty: bool, decorrelate_only: bool) -> SessionContext:
        # TPC-H (and Spark) read 0.06 as a decimal; DataFusion reads it as a double unless told otherwise,
        # and a double constant compared with decimal(15,2) gives other rows on engines that compare in double
        config = SessionConfig().set("datafusion.sql_parser.parse_float_as_decimal", "true")
        ctx = SessionContext(config)
        for table in TABLES:
            if empty:  # the same schema, no rows
                ctx.from_arrow(pq.read_schema(data / f"{table}.parquet").empty_table(), name=table)
            else:
                ctx.register_parquet(table, str(data / f"{table}.parquet"))
        if decorrelate_only:
            for rule in OPTIMIZER_RULES:
                if rule not in DECORRELATION_RULES:
                    assert ctx.remove_optimizer_rule(rule), rule
        return ctx

    def substrait(self, sql: str) -> dict[str, Any]:
        """The producer's JSON for the plan before optimization (decorrelated only when it must be)."""
        try:
            plan = Producer.to_substrait_plan(self.ctx.sql(sql).logical_plan(), self.ctx)
        except Exception as exc:  # DataFusion 55: "Cannot convert OuterReferenceColumn ... to Substrait"
            if "OuterReferenceColumn" not in str(exc):
                raise
            df = self.decorrelating.sql(sql)
            plan = Producer.to_substrait_plan(df.optimized_logical_plan(), self.decorrelating)
        return json.loads(plan.to_json())

    def run_sql(self, sql: str) -> list[tuple[Any, ...]]:
        return rows(self.ctx.sql(sql).to_arrow_table().to_pylist())

    def run_substrait(self, doc: dict[str, Any]) -> list[tuple[Any, ...]]:
        logical = Consumer.from_substrait_plan(self.ctx, Plan.from_json(json.dumps(doc)))
        return rows(self.ctx.create_dataframe_from_logical_plan(logical).to_arrow_table().to_pylist())


def rows(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """A multiset of rows, floats rounded so a different summation order does not matter."""
    return sorted((tuple(round(v, 6) if isinstance(v, float) else v for v in r.values()) for r in records), key=repr)


@pytest.fixture(scope="session")
def tpch_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TPC-H at scale factor 0.01 (lineitem: 60k rows), written once per session."""
    if shutil.which("tpchgen-cli") is None:
        pytest.skip("tpchgen-cli is not installed")
    out = tmp_path_factory.mktemp("tpch")
    subprocess.run(
        ["tpchgen-cli", "parquet", "-s", "0.01", "--output-dir", str(out)], check=True, capture_output=True, timeout=120
    )
    return out


@pytest.fixture(scope="session")
def tpch(tpch_data: Path) -> Iterator[Tpch]:
    yield Tpch(tpch_data)


@pytest.fixture(scope="session")
def tpch_empty(tpch_data: Path) -> Iterator[Tpch]:
    yield Tpch(tpch_data, empty=True)
