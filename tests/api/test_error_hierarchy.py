"""One error hierarchy, mapped to HTTP once.

Every exception class the project defines or raises in api/, service/ and costmodel/ is a ``ServiceError`` (with a
code and an HTTP status, answered by the one handler in ``api.errors``) or is listed below with the reason it never
reaches a caller as an answer. A new exception class, or a new raise of a builtin one, fails here until it joins
the hierarchy or states why not.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.exceptions import HTTPException

from api.errors import STATUS_BY_CODE, install_error_handling, status_of
from costmodel.deadline import DeadlineExceeded
from costmodel.errors import PlanError, ServiceError
from service.errors import InputError
from service.sql.errors import SqlError
from service.substrait.errors import SubstraitError

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("api", "service", "costmodel")

#: Exception classes outside the hierarchy, each where it is raised and why no caller ever gets it as an answer.
OUTSIDE: dict[tuple[str, str], str] = {
    ("service/answer.py", "NonFiniteNumber"): "caught by the route, which answers 422 with the input's path",
    ("service/answer.py", "TypeError"): "a bug: a value in an answer that JSON cannot write (orjson's default hook)",
    ("service/deep_json.py", "JSONDecodeError"): "json's own error, as json.loads raises it; jsonguard maps it to 422",
    ("service/deep_json.py", "TypeError"): "json.dumps' own error for a key JSON cannot carry: a bug in an answer",
    ("service/cli_savings.py", "Exit"): "the command line's exit status",
    ("service/cli_savings.py", "ValueError"): "a --from/--to day that is not a date, printed by the command",
    ("service/in_process_client.py", "PushdownError"): "the Python client's view of an error, in the caller's process",
    ("service/job_store.py", "ValueError"): "a bug: a job field the runner does not define",
    ("service/sql/render_block.py", "NotImplementedError"): "the base class's abstract dispatch: Renderer, the one "
    "subclass, matches every wire op",
    ("service/sql/bind.py", "Unbindable"): "control flow: the binder gives up and sqlglot's qualify takes over",
    ("service/sql/common.py", "ValueError"): "build_function raises as exp.func does; its callers catch sqlglot's "
    "failures (SQLGLOT_FAILURES) and answer unsupported or invalid_plan",
    ("service/sql/to_plan.py", "Unbindable"): "control flow, as above",
    ("service/worker_pool.py", "EOFError"): "caught just below: a worker that died while starting",
    ("service/worker_pool.py", "RuntimeError"): "a worker process that died without answering: a 500, as a bug",
    ("costmodel/kinds/registry.py", "UnknownKind"): "a bug (a node class with no kind): a 500, never a default",
    ("costmodel/kinds/registry.py", "ValueError"): "a bug at import: two kinds claiming one class or op",
    ("costmodel/sample.py", "Unsupported"): "control flow: the sample source declines and the chain goes on",
    ("service/sql/render_expr.py", "AssertionError"): "a bug: an unreachable branch",
    ("service/sql/render_cols.py", "ValueError"): "a bug: a column built with neither its expression nor the "
    "(name, table) that reaches it",
    ("service/sql/plan_query.py", "NotImplementedError"): "an abstract method",
    ("service/sql/plan_expr.py", "NotImplementedError"): "an abstract method",
    ("service/substrait/read_expr.py", "NotImplementedError"): "an abstract method (the Reader reads relations)",
    ("costmodel/wire/read_expr.py", "NotImplementedError"): "an abstract method (the Binder reads nodes)",
    ("service/cli.py", "Exit"): "the command line's exit status",
    ("service/cli_input.py", "Exit"): "the command line's exit status",
    ("service/cli_analyze.py", "Exit"): "the command line's exit status",
    ("service/analyze.py", "ValueError"): "AnalyzeRequest's own checks; the request's AnalyzeBody refuses them first",
    ("service/statistics.py", "ValueError"): "an unsupported store URL at start-up: the app runs without the store",
    ("service/database/backends.py", "ValueError"): "an unsupported database URL at start-up, as above",
    ("service/database/migrations.py", "ValueError"): "a bug: migrations out of order",
    ("service/history/store.py", "ValueError"): "a bug: a counter name the recorder does not define",
    ("service/idle_spark.py", "RuntimeError"): "an analyze job at shutdown: the job fails, its state says why",
    (
        "service/request.py",
        "PydanticCustomError",
    ): "inside a pydantic validator: becomes a ValidationError, then an InputError",
    ("api/deps.py", "HTTPException"): "the bearer check (401 + WWW-Authenticate), in the same body shape by api.errors",
    ("api/routes.py", "HTTPException"): "a missing /docs asset: Starlette's 404, in the same body shape by api.errors",
}

#: One instance of every ServiceError class, as the code raises it; a new class needs one here.
EXAMPLES: dict[type[ServiceError], Callable[[], ServiceError]] = {
    ServiceError: lambda: ServiceError("invalid_request", "a base-class error", "$.x"),
    PlanError: lambda: PlanError("unknown_column", "unknown column 'x'", "$.plan.predicate"),
    InputError: lambda: InputError("not_found", "no table 'x'", "$.name"),
    SqlError: lambda: SqlError("unknown_table", "unknown table 'x'", 1, 15, {"table": "x"}),
    SubstraitError: lambda: SubstraitError("unsupported", "a fetch is not supported", "$.substrait.relations[0]"),
    DeadlineExceeded: lambda: DeadlineExceeded(2.5),
}


def project_modules() -> Iterator[ModuleType]:
    for package in PACKAGES:
        yield importlib.import_module(package)
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            yield importlib.import_module(info.name)


def source_path(module: ModuleType) -> str:
    return str(Path(inspect.getfile(module)).resolve().relative_to(ROOT))


def raised_classes() -> dict[tuple[str, str], type[BaseException]]:
    """(file, class name) -> class, for every ``raise X(...)`` / ``raise f(...)`` in the project's packages.

    ``f`` is a helper returning the error (``unsupported(...)``): its return annotation names the class.
    """
    found: dict[tuple[str, str], type[BaseException]] = {}
    for module in project_modules():
        if module.__file__ is None:
            continue
        path = source_path(module)
        tree = ast.parse(Path(module.__file__).read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            cls = _resolve(module, target)
            if cls is not None:
                found[(path, cls.__name__)] = cls
    return found


def _resolve(module: ModuleType, target: ast.expr) -> type[BaseException] | None:
    """The exception class ``target`` (a name, ``a.b``, or a function returning an error) stands for, if any."""
    if isinstance(target, ast.Name):
        value = getattr(module, target.id, getattr(builtins, target.id, None))
    elif isinstance(target, ast.Attribute):
        owner = _resolve_value(module, target.value)
        value = getattr(owner, target.attr, None)
        if value is None and owner is not None and isinstance(owner, type):
            value = owner  # ``PushdownError.from_body(...)``: a classmethod making its own class
    else:
        return None  # ``raise exc`` of a caught error: raised where it was made
    if inspect.isclass(value) and issubclass(value, BaseException):
        return value
    if inspect.isfunction(value) or inspect.ismethod(value):
        hint = typing.get_type_hints(value).get("return")
        if inspect.isclass(hint) and issubclass(hint, BaseException):
            return hint
    return None


def _resolve_value(module: ModuleType, node: ast.expr) -> Any:
    if isinstance(node, ast.Name):
        return getattr(module, node.id, None)
    if isinstance(node, ast.Attribute):
        return getattr(_resolve_value(module, node.value), node.attr, None)
    return None


def service_error_classes() -> set[type[ServiceError]]:
    list(project_modules())  # every subclass defined in the project is imported
    out: set[type[ServiceError]] = set()
    stack: list[type[ServiceError]] = [ServiceError]
    while stack:
        cls = stack.pop()
        if cls.__module__.split(".")[0] in PACKAGES:
            out.add(cls)
        stack.extend(cls.__subclasses__())
    return out


def test_every_raised_exception_is_a_service_error_or_says_why() -> None:
    raised = raised_classes()
    outside = {key: cls for key, cls in raised.items() if not issubclass(cls, ServiceError)}
    unexplained = sorted(set(outside) - set(OUTSIDE))
    assert not unexplained, f"raised outside the ServiceError hierarchy with no reason in OUTSIDE: {unexplained}"
    stale = sorted(set(OUTSIDE) - set(outside))
    assert not stale, f"OUTSIDE names raises that are gone (or joined the hierarchy): {stale}"
    # the adapters' errors and the time limit are raised all over; they are in the hierarchy now
    names = {name for _, name in raised if issubclass(raised[(_, name)], ServiceError)}
    assert {"PlanError", "InputError", "SqlError", "SubstraitError", "DeadlineExceeded"} <= names


def test_every_exception_class_the_project_defines_is_accounted_for() -> None:
    """A class defined but raised nowhere the AST walk sees (raised through a variable) is held to the same rule."""
    defined = {
        (source_path(module), obj.__name__): obj
        for module in project_modules()
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, BaseException)
        and obj.__module__ == module.__name__
        and obj.__module__.split(".")[0] in PACKAGES
    }
    loose = sorted(key for key, cls in defined.items() if not issubclass(cls, ServiceError) and key not in OUTSIDE)
    assert not loose, f"exception classes outside the hierarchy with no reason in OUTSIDE: {loose}"


def test_every_service_error_class_has_an_example_and_a_status() -> None:
    classes = service_error_classes()
    assert set(EXAMPLES) == classes, "give every ServiceError class an example in EXAMPLES (and no stale ones)"
    for cls in classes:
        assert isinstance(cls.status, int) and 400 <= cls.status < 600, cls


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    """An app with only the error handling installed and one route per example error."""
    app = FastAPI()
    install_error_handling(app)

    @app.get("/raise/{name}")
    def raise_it(name: str) -> None:
        (make,) = [make for cls, make in EXAMPLES.items() if cls.__name__ == name]
        raise make()

    @app.get("/starlette")
    def starlette_error() -> None:
        raise HTTPException(405)

    with TestClient(app) as http:
        yield http


@pytest.mark.parametrize("cls", list(EXAMPLES), ids=lambda cls: cls.__name__)
def test_each_error_class_is_answered_by_the_one_handler(client: TestClient, cls: type[ServiceError]) -> None:
    error = EXAMPLES[cls]()
    response = client.get(f"/raise/{cls.__name__}")
    assert response.status_code == status_of(error) == STATUS_BY_CODE.get(error.code, cls.status)
    body = response.json()
    assert body["error"] == error.code and body["message"] == error.message and body["path"] == error.path
    assert body.get("detail", {}) == error.detail
    for header, value in cls.headers.items():
        assert response.headers[header] == value


def test_the_time_limit_is_a_503_to_retry(client: TestClient) -> None:
    response = client.get("/raise/DeadlineExceeded")
    assert response.status_code == 503 and response.headers["Retry-After"] == "1"
    assert response.json()["detail"] == {"limit_s": 2.5} and "2.5 s" in response.json()["message"]


def test_a_sql_error_that_escapes_the_service_is_a_422_with_its_position(client: TestClient) -> None:
    body = client.get("/raise/SqlError").json()
    assert (body["error"], body["line"], body["column"]) == ("unknown_table", 1, 15)


def test_starlette_errors_get_the_same_shape(client: TestClient) -> None:
    response = client.get("/starlette")
    assert response.status_code == 405 and response.json()["error"] == "method_not_allowed"


def test_the_app_registers_one_handler_for_the_hierarchy(make_settings: Callable[..., Any]) -> None:
    from api.app import create_app

    handlers = create_app(make_settings()).exception_handlers
    ours = {cls for cls in handlers if isinstance(cls, type) and issubclass(cls, ServiceError)}
    assert ours == {ServiceError}, "map ServiceError subclasses by status and code, not with handlers of their own"
