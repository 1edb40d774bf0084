"""The cost-savings dashboard: one page and its assets, served by the service itself (no CDN, no internet).

The page and its assets hold no data; everything it shows comes from ``/api/...``, which needs the bearer
token when one is set. With a token configured the page asks for it (a login form) and posts it, as JSON,
to ``/dashboard/login``, which answers with an HttpOnly, SameSite=Strict session cookie: the page's script
never keeps the token, and it never travels in a URL (where access logs and browser history would keep it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, ValidationError

from api.deps import SESSION_COOKIE, SettingsDep, read_body, session_value, token_matches
from service.errors import InputError
from service.jsonguard import parse_json
from service.request import validation_error

STATIC_DIR = Path(__file__).parent / "static" / "dashboard"
ASSETS_PATH = "/dashboard/assets"

router = APIRouter(include_in_schema=False)


@router.get("/dashboard")
async def dashboard_page() -> FileResponse:
    # The page is a shell that fetches its data; never cache it, so a new release shows at once.
    return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})


@router.get("/dashboard/")
async def dashboard_slash() -> RedirectResponse:
    return RedirectResponse("/dashboard", status_code=307)


class Login(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    token: str


def _parse_login(raw: bytes) -> Login:
    try:
        return Login.model_validate(parse_json(raw, 4))
    except ValidationError as exc:
        raise validation_error(exc) from None


@router.post("/dashboard/login", status_code=204)
async def login(request: Request, settings: SettingsDep) -> Response:
    """Trade the token for a session cookie; 401 for a wrong token."""
    body = await run_in_threadpool(_parse_login, await read_body(request, 4096))
    expected = settings.api_token
    if expected is None:
        return Response(status_code=204)
    if not token_matches(body.token, expected):
        raise InputError("unauthorized", "that token was refused", "$.token")
    response = Response(status_code=204)
    response.set_cookie(
        SESSION_COOKIE,
        session_value(expected),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


@router.post("/dashboard/logout", status_code=204)
async def logout() -> Response:
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


@router.get("/dashboard/session")
async def session(request: Request, settings: SettingsDep) -> dict[str, Any]:
    """Whether the service wants a token and whether this browser is signed in (for the page's buttons)."""
    expected = settings.api_token
    cookie = request.cookies.get(SESSION_COOKIE, "")
    signed_in = expected is not None and bool(cookie) and token_matches(cookie, session_value(expected))
    return {"auth_required": expected is not None, "signed_in": signed_in}


def install(app: FastAPI) -> None:
    """Serve ``/dashboard`` and its assets on ``app``."""
    app.include_router(router)
    app.mount(ASSETS_PATH, StaticFiles(directory=STATIC_DIR), name="dashboard-assets")
