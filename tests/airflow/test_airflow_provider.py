"""The Airflow provider's suite (integrations/airflow/tests) in real Airflow, in its own virtual environment.

Airflow is heavy and pins its own dependencies, so it lives in ``.venv-airflow`` (``scripts/airflow-venv.sh``),
not in the service's environment. This test builds that environment when it is missing or stale, then runs the
provider's suite there; that suite starts this environment's service (``PUSHDOWN_SERVICE_PYTHON``) over HTTP,
runs ``airflow db migrate`` in a temporary AIRFLOW_HOME, the hook, operator and trigger against the service,
``airflow providers list``, and the example DAG with ``dag.test()`` on local Spark.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from tests.airflow.conftest import ROOT, clean_env

#: Every module of the provider's suite must run and pass: a collection error or a skip is a failure here.
REQUIRED_MODULES = {
    "test_example_dag",
    "test_hook",
    "test_operator",
    "test_provider",
    "test_readme_dag",
    "test_spark_dataframe_operator",
    "test_spark_sql_operator",
    "test_trigger",
}


def _outcomes(junit: Path) -> dict[str, str]:
    """``module::test`` -> passed / failed / error / skipped, from pytest's JUnit XML."""
    outcomes = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "").rpartition(".")[2]
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[f"{module}::{case.get('name')}"] = kinds[0] if kinds else "passed"
    return outcomes


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_provider_suite_passes_in_real_airflow(airflow_python: Path, tmp_path: Path) -> None:
    junit = tmp_path / "airflow-provider.xml"
    # -P: the checkout's root is not put on sys.path, so the service's packages cannot be imported from it by
    # accident: the provider must work with only the client installed, as in Airflow's own environment.
    command = [str(airflow_python), "-P", "-m", "pytest", "integrations/airflow/tests", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*command, f"--junitxml={junit}"],
        cwd=ROOT,
        env=clean_env(PUSHDOWN_SERVICE_PYTHON=sys.executable),
        capture_output=True,
        text=True,
        timeout=1500,
    )
    report = f"{' '.join(command)}\n{done.stdout[-8000:]}\n{done.stderr[-4000:]}"
    assert done.returncode == 0, report
    outcomes = _outcomes(junit)
    assert set(Counter(outcomes.values())) == {"passed"}, report
    ran = {name.partition("::")[0] for name in outcomes}
    assert ran >= REQUIRED_MODULES, f"modules that did not run: {sorted(REQUIRED_MODULES - ran)}"
    assert "test_example_dag::test_example_dag_optimizes_then_counts_rows_on_spark" in outcomes
    assert "test_spark_sql_operator::test_the_run_sends_actual_rows_to_the_history_record" in outcomes
    assert "test_spark_dataframe_operator::test_the_docs_example_runs_as_written" in outcomes
