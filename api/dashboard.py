"""The cost-savings dashboard: one page and its assets, served by the service itself (no CDN, no internet).

The page and its assets hold no data; everything it shows comes from ``/api/...``, which needs the bearer
token when one is set. With a token configured the page asks for it (a login form), or takes it once
from ``/dashboard?token=...`` and keeps it in the tab's session storage.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

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


def install(app: FastAPI) -> None:
    """Serve ``/dashboard`` and its assets on ``app``."""
    app.include_router(router)
    app.mount(ASSETS_PATH, StaticFiles(directory=STATIC_DIR), name="dashboard-assets")
