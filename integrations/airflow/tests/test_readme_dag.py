"""The README's Airflow snippet is a DAG file as written: loaded by Airflow's own DagBag from a folder that holds
only it, with no import error, it defines its DAG and the pushdown task."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"


def readme_dag() -> str:
    section = README.read_text().split("### Airflow", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_dag_file_loads_in_airflow(airflow_db, tmp_path):
    from airflow.dag_processing.dagbag import DagBag

    (tmp_path / "readme_dag.py").write_text(readme_dag())
    bag = DagBag(dag_folder=str(tmp_path))
    assert not bag.import_errors, bag.import_errors
    assert len(bag.dag_ids) == 1, bag.dag_ids
    dag = bag.get_dag(bag.dag_ids[0])
    assert any(type(task).__name__ == "PushdownSparkSqlOperator" for task in dag.tasks), dag.tasks
