"""DAGs the operator tests run with ``dag.test()``; the test run links this file into its dags folder."""

from __future__ import annotations

from datetime import datetime

from airflow.sdk import DAG
from pushdown_airflow.operators import PushdownOptimizeOperator

SQL = "SELECT c.name FROM customers AS c JOIN orders AS o ON c.id = o.customer_id WHERE o.amount > 100"
CATALOG = {
    "tables": {
        "customers": {"columns": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}], "row_count": 100},
        "orders": {
            "columns": [{"name": "customer_id", "type": "int"}, {"name": "amount", "type": "double"}],
            "row_count": 10_000,
            "column_stats": {"amount": {"min": 0, "max": 1000, "null_count": 0}},
        },
    }
}
PLAN = {
    "op": "filter",
    "predicate": {"fn": ">", "args": [{"col": "amount"}, {"lit": 100, "type": "int"}]},
    "input": {
        "op": "project",
        "exprs": [{"expr": {"col": "amount"}, "as": "amount"}],
        "input": {"op": "scan", "table": "orders"},
    },
}


def _dag(dag_id: str, **operator_kwargs) -> DAG:
    with DAG(dag_id, schedule=None, start_date=datetime(2026, 1, 1), params={"amount": 100}) as dag:
        PushdownOptimizeOperator(task_id="optimize", **operator_kwargs)
    return dag


for mode, deferrable in (("sync", False), ("deferred", True)):
    # Templated SQL, and the catalog as JSON text rendered from the run's conf.
    _dag(
        f"summary_{mode}",
        sql="SELECT c.name FROM customers AS c JOIN orders AS o ON c.id = o.customer_id "
        "WHERE o.amount > {{ params.amount }}",
        catalog="{{ params.catalog | tojson }}",
        deferrable=deferrable,
    )
    _dag(f"bad_sql_{mode}", sql="SELECT FROM WHERE", catalog=CATALOG, deferrable=deferrable, retries=3)

_dag("plan_with_context", plan=PLAN, catalog=CATALOG, context={"pipeline": "nightly", "task": "t", "run": "r"})
