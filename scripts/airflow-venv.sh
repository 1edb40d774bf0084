#!/usr/bin/env bash
# Builds the Airflow environment the provider's tests run in (default .venv-airflow/), apart from the
# service's own: Airflow is heavy and pins its own dependencies. It has the service's client (pushdown_client/, the
# provider's dependency) but not the service. Idempotent: it rebuilds only when this
# script or the provider's pyproject changed. Used by tests/airflow/ (which builds it when missing).
#
#   bash scripts/airflow-venv.sh            # then:
#   PUSHDOWN_SERVICE_PYTHON=$(which python) .venv-airflow/bin/python -P -m pytest integrations/airflow/tests
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

AIRFLOW_VERSION=3.3.2          # the same as the apache/airflow image in docker-compose.yml
VENV="${PUSHDOWN_AIRFLOW_VENV:-.venv-airflow}"
PYTHON="${PYTHON:-python3}"

want="$(cat scripts/airflow-venv.sh integrations/airflow/pyproject.toml pushdown_client/pyproject.toml | sha256sum | cut -c1-16)"
if [ -x "$VENV/bin/airflow" ] && [ "$(cat "$VENV/.installed" 2>/dev/null)" = "$want" ]; then
  echo "airflow-venv: $VENV is up to date"
  exit 0
fi

echo "airflow-venv: installing apache-airflow==$AIRFLOW_VERSION, the client and the provider into $VENV"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check \
  "apache-airflow==$AIRFLOW_VERSION" -e "pushdown_client[spark]" -e "integrations/airflow[test]"
echo "$want" > "$VENV/.installed"
echo "airflow-venv: done ($("$VENV/bin/airflow" version))"
