"""The console under /console: server-rendered pages for the conflicts partner and compliance.

No front-end framework and no script: every page is HTML from a Jinja2 template, forms post
back, charts are inline SVG, and the Content-Security-Policy allows nothing but the page's
own stylesheet and forms to itself. Every page calls the service functions that the API
routes call (app.walls.service, the matrix snapshot, app.audit.service): no rule has a
second implementation here. Which pages exist for whom follows the API's roles:

| page                               | roles                 | API twin                         |
|------------------------------------|-----------------------|----------------------------------|
| walls list, wall page              | conflicts, compliance | GET /v1/walls, /v1/walls/{id}    |
| issue (preview, issue), lift       | conflicts             | POST /v1/walls, .../lift         |
| access decision                    | conflicts, compliance | GET /v1/people/{id}/access       |
| conflict search                    | conflicts             | GET /v1/conflicts                |
| audit, retrieval, matter, export   | compliance            | GET /v1/audit/*                  |

The pages live by concern in ``signin``, ``walls_pages``, ``access_pages`` and
``audit_pages``; ``pages`` holds what they share (templates, headers, session and CSRF checks).
"""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import RedirectResponse, Response

from app.console import access_pages, audit_pages, signin, walls_pages
from app.console.pages import PageRefused, SignInNeeded, render

router = APIRouter(include_in_schema=False)
for pages in (signin, walls_pages, access_pages, audit_pages):
    router.include_router(pages.router)


def install(app: FastAPI) -> None:
    """The handlers that answer the console's errors as pages (app.api includes ``router``)."""

    @app.exception_handler(SignInNeeded)
    async def _sign_in(request: Request, exc: SignInNeeded) -> Response:
        query = urlencode({"next": exc.next_url}) if exc.next_url != "/console" else ""
        return RedirectResponse(
            "/console/signin" + (f"?{query}" if query else ""),
            status_code=303,
            headers={"Cache-Control": "no-store"},
        )

    @app.exception_handler(PageRefused)
    async def _refused(request: Request, exc: PageRefused) -> Response:
        return render(
            request,
            "error.html",
            exc.session,
            exc.status,
            title=exc.title,
            message=exc.message,
        )
