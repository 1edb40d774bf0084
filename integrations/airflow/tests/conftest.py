"""Real Airflow in a temporary AIRFLOW_HOME, and a real pushdown service started for the run.

Run from the project's root (the main suite does it for you, see tests/airflow/)::

    PUSHDOWN_SERVICE_PYTHON=$(which python) .venv-airflow/bin/python -P -m pytest integrations/airflow/tests

``PUSHDOWN_SERVICE_PYTHON`` is the interpreter that has the service installed (``pip install -e .``); the
Airflow environment itself only needs this provider. Airflow reads its configuration when first imported, so
the environment is set here, before any test module imports it.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

EXAMPLE_DAGS = Path(__file__).resolve().parents[1] / "example_dags"
TEST_DAGS = Path(__file__).resolve().parent / "dags"
TOKEN = "airflow-test-token"

_home = Path(tempfile.mkdtemp(prefix="pushdown-airflow-home-"))
# The dags folder holds links to the example DAG and to the operator tests' DAGs, as a deployment would.
DAGS_FOLDER = _home / "dags"
DAGS_FOLDER.mkdir()
for _file in [*EXAMPLE_DAGS.glob("*.py"), *TEST_DAGS.glob("*.py")]:
    (DAGS_FOLDER / _file.name).symlink_to(_file)
sys.path.insert(0, str(TEST_DAGS))
os.environ.update(
    {
        "AIRFLOW_HOME": str(_home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{_home / 'airflow.db'}",
        "PUSHDOWN_EXAMPLE_SPARK_MASTER": "local[2]",
    }
)


def _airflow(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("airflow")), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=os.environ.copy())


@pytest.fixture(scope="session")
def airflow_db() -> Path:
    """``airflow db migrate`` in the temporary AIRFLOW_HOME, as a user would run it."""
    done = _airflow("db", "migrate")
    assert done.returncode == 0, done.stdout + done.stderr
    return _home


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen[bytes], deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the pushdown service exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the pushdown service did not answer {url}/healthz within {deadline_s} s")


@pytest.fixture(scope="session")
def service_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``pushdown serve`` in a subprocess with a token; ``pushdown_default`` points at it through the environment."""
    python = os.environ.get("PUSHDOWN_SERVICE_PYTHON")
    if not python:
        pytest.fail("set PUSHDOWN_SERVICE_PYTHON to the interpreter that has the pushdown service installed")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PUSHDOWN_", "AIRFLOW"))}
    env.update(
        {
            "PUSHDOWN_API_TOKEN": TOKEN,
            "PUSHDOWN_DATA_DIR": str(tmp_path_factory.mktemp("pushdown-data")),
            "PUSHDOWN_HOST": "127.0.0.1",
            "PUSHDOWN_PORT": str(port),
        }
    )
    log = (tmp_path_factory.mktemp("pushdown-log") / "service.log").open("wb")
    process = subprocess.Popen(
        [python, "-m", "service.cli", "serve", "--log-level", "warning"], env=env, stdout=log, stderr=log
    )
    try:
        _wait_healthy(url, process)
        os.environ["AIRFLOW_CONN_PUSHDOWN_DEFAULT"] = f"pushdown://:{TOKEN}@127.0.0.1:{port}"
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@pytest.fixture(scope="session")
def example_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the example DAG writes and reads its Parquet tables (empty: the DAG fills it)."""
    return tmp_path_factory.mktemp("example-data")


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for the run; the example DAG's tasks pick up the same one."""
    sys.path.insert(0, str(EXAMPLE_DAGS))
    from pushdown_optimize_then_spark import spark_session

    session = spark_session()
    yield session
    session.stop()
    logging.getLogger("py4j").setLevel(logging.WARNING)  # its connections log on close, after pytest's streams


def xcom(dag_run, task_id: str, key: str = "return_value"):
    """A task's XCom from Airflow's database after ``dag.test()``."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        query = XComModel.get_many(run_id=dag_run.run_id, dag_ids=dag_run.dag_id, task_ids=task_id, key=key)
        return session.scalar(query.with_only_columns(XComModel.value))


def task_states(dag_run) -> dict[str, str]:
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session

    with create_session() as session:
        rows = session.query(TaskInstance.task_id, TaskInstance.state).filter_by(run_id=dag_run.run_id)
        return {task_id: str(state) for task_id, state in rows}
