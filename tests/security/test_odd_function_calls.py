"""Every function sqlglot knows, called with zero to three arguments, is answered or refused with the service's
input error (a 4xx), never an internal error: sqlglot's own builders and generators index a call's arguments
unchecked (``MAP(a)`` raised IndexError, ``DATE_TRUNC()`` ValueError, Spark's two-argument ``REGEXP_REPLACE``
KeyError), and those reached the client as a 500."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import sqlglot

from api.errors import status_of
from costmodel.errors import ServiceError
from service.optimize import OptimizeInput, OptimizeService
from tests.security.conftest import ServiceProcess, auth_headers

CATALOG = json.loads((Path(__file__).resolve().parents[2] / "bench" / "tpch" / "catalog.json").read_text())
COLUMNS = ["n_name", "n_nationkey", "n_regionkey"]
#: Calls only writing the answer's plan as SQL trips over (sqlglot's generator, the renderer's types).
WRITING_ONLY = [
    "J_S_O_N_CAST(n_name, n_nationkey)",
    "REGEXP_REPLACE(n_name, n_nationkey)",
    "COMBINED_PARAMETERIZED_AGG(n_name, n_nationkey, n_regionkey)",
]
#: Each of these was a 500 before (one per kind of slip: parser, translator, type, generator).
ONCE_INTERNAL = ["MAP(n_name)", "DATE_TRUNC()", "DATEDIFF()", *WRITING_ONLY]
#: The input errors a refusal of such a call is.
REFUSALS = {"parse_error", "unsupported", "invalid_plan"}


def odd_calls() -> list[str]:
    names = set(sqlglot.Dialect().parser_class.FUNCTIONS)
    for dialect in ("spark", "duckdb"):
        names |= set(sqlglot.Dialect.get_or_raise(dialect).parser_class.FUNCTIONS)
    return [f"{name}({', '.join(COLUMNS[:count])})" for name in sorted(names) for count in range(4)]


@pytest.mark.parametrize("dialect", ["spark", "duckdb"])
def test_every_function_call_is_answered_or_refused_as_input(dialect: str) -> None:
    service = OptimizeService()
    answered = refused = 0
    for call in odd_calls():
        sql = f"SELECT {call} AS x FROM nation WHERE n_nationkey > 1"
        try:
            service.optimize(OptimizeInput(sql=sql, catalog=CATALOG, dialect=dialect))
            answered += 1
        except ServiceError as err:  # the errors the API answers with a 4xx (api/errors.py)
            assert status_of(err) < 500, err
            refused += 1
    assert answered > 300 and refused > 300  # both outcomes happen: neither is everything


def test_calls_that_were_internal_errors_are_4xx_over_http_and_the_service_keeps_serving(
    service: ServiceProcess,
) -> None:
    """Each such call is refused as input; but where Spark runs a query as written, the service hands the query
    back untouched without writing its plan as SQL (nothing of that writing would be sent), so a call only the
    writing trips over is answered as written, and Spark reports its own error when it runs it. In a dialect
    whose answer is the written plan, those calls are refused."""

    def ask(call: str, dialect: str) -> httpx.Response:
        body = {"sql": f"SELECT {call} AS x FROM nation WHERE n_nationkey > 1", "catalog": CATALOG, "dialect": dialect}
        response = httpx.post(f"{service.url}/optimize", json=body, headers=auth_headers(), timeout=60)
        assert "Traceback" not in response.text
        return response

    def refused(response: httpx.Response) -> bool:
        return 400 <= response.status_code < 500 and response.json()["error"] in REFUSALS

    as_written = []
    for call in ONCE_INTERNAL:
        response = ask(call, "spark")
        if response.status_code == 200:
            answer = response.json()
            assert answer["spark"]["as_written"] and answer["sql"] == answer["sql_portable"], (call, answer)
            assert call in answer["sql"]
            as_written.append(call)
        else:
            assert refused(response), (call, response.text)
    assert as_written == WRITING_ONLY
    assert all(refused(ask(call, "duckdb")) for call in WRITING_ONLY)
    fine = {"sql": "SELECT n_name FROM nation WHERE n_nationkey > 1", "catalog": CATALOG}
    assert httpx.post(f"{service.url}/optimize", json=fine, headers=auth_headers(), timeout=60).status_code == 200
