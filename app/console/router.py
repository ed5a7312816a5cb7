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
"""

from __future__ import annotations

import csv
import io
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, FastAPI, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from pydantic import ValidationError

from app.audit import service as audit_service
from app.audit.chain import canonical_json, now_utc, verify_all
from app.auth.service import Principal
from app.console import repository
from app.console.oidc import OidcClient
from app.console.preview import WallPreview, preview_wall
from app.console.sessions import (
    COOKIE,
    COOKIE_PATH,
    OIDC_COOKIE,
    SIGNIN_COOKIE,
    ConsoleSession,
    SessionStore,
    same_token,
)
from app.deps import get_resources
from app.errors import AppError
from app.resources import Resources
from app.walls import service as wall_service
from app.walls.resolution import read_snapshot
from app.walls.schemas import LiftIn, WallIn, WallOut

router = APIRouter(prefix="/console", include_in_schema=False)

HERE = Path(__file__).resolve().parent
CONSOLE_ROLES = ("conflicts", "compliance")
PAGE_SIZE = 50
MATTER_SCAN_LIMIT = 5000
EXPORT_PAGE = 500

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def _fmt_time(value: object) -> str:
    if value is None or value == "":
        return ""
    moment: object = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(moment, datetime):
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC)
        return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return str(value)


templates = Environment(
    loader=FileSystemLoader(str(HERE / "templates")),
    autoescape=select_autoescape(["html", "svg"], default=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
templates.filters["when"] = _fmt_time


# --- navigation, sessions, errors --------------------------------------------------------------


NAV = (
    ("/console/walls", "Walls", ("conflicts", "compliance")),
    ("/console/walls/new", "Issue a wall", ("conflicts",)),
    ("/console/access", "Access", ("conflicts", "compliance")),
    ("/console/conflicts", "Conflict search", ("conflicts",)),
    ("/console/audit", "Audit", ("compliance",)),
)


def _nav(session: ConsoleSession | None) -> list[tuple[str, str]]:
    if session is None:
        return []
    return [(href, label) for href, label, roles in NAV if session.has_any(*roles)]


class SignInNeeded(Exception):
    def __init__(self, next_url: str) -> None:
        super().__init__("sign-in needed")
        self.next_url = next_url


class PageRefused(Exception):
    """A page answered with an HTML error (wrong role, stale form, unknown id)."""

    def __init__(
        self, status: int, title: str, message: str, session: ConsoleSession | None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.title = title
        self.message = message
        self.session = session


def _store(resources: Resources) -> SessionStore:
    return resources.console_sessions


def _current(request: Request) -> ConsoleSession | None:
    return _store(get_resources(request)).get(request.cookies.get(COOKIE))


def _require(request: Request, *roles: str) -> ConsoleSession:
    session = _current(request)
    if session is None:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise SignInNeeded(target if request.method == "GET" else "/console")
    if not session.has_any(*roles):
        raise PageRefused(403, "Not for your role", "Your role does not allow this page.", session)
    request.state.person_id = session.person_id
    return session


def _check_csrf(session: ConsoleSession, given: str | None) -> None:
    if not same_token(given, session.csrf):
        raise PageRefused(
            403,
            "Form refused",
            "The form was refused: its security token is missing or stale. "
            "Open the page again and resubmit.",
            session,
        )


def render(
    request: Request,
    template: str,
    session: ConsoleSession | None,
    status: int = 200,
    **context: Any,
) -> HTMLResponse:
    body = templates.get_template(template).render(
        session=session,
        nav=_nav(session),
        path=request.url.path,
        **context,
    )
    return HTMLResponse(body, status_code=status, headers=PAGE_HEADERS)


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def _safe_next(value: str | None) -> str:
    """Only a console path of this site; anything else goes to the console's start."""
    if (
        value
        and value.startswith("/console")
        and not value.startswith("//")
        and not any(c in value for c in "\\\r\n")
    ):
        return value
    return "/console"


def install(app: FastAPI) -> None:
    """Mount the console and the handlers that answer its errors as pages."""
    app.include_router(router)

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


# --- static ------------------------------------------------------------------------------------


@router.get("/static/console.css")
def stylesheet() -> Response:
    return Response(
        (HERE / "static" / "console.css").read_text(encoding="utf-8"),
        media_type="text/css; charset=utf-8",
        headers={"Cache-Control": "max-age=300", "X-Content-Type-Options": "nosniff"},
    )


# --- sign-in -----------------------------------------------------------------------------------


def _signin_page(
    request: Request, *, status: int = 200, error: str | None = None, next_url: str = "/console"
) -> HTMLResponse:
    nonce = request.cookies.get(SIGNIN_COOKIE) or ""
    if len(nonce) < 32:
        nonce = secrets.token_urlsafe(32)
    settings = get_resources(request).settings
    response = render(
        request,
        "signin.html",
        None,
        status,
        csrf=nonce,
        error=error,
        next_url=_safe_next(next_url),
        auth_mode=settings.auth_mode,
    )
    response.set_cookie(
        SIGNIN_COOKIE,
        nonce,
        max_age=1800,
        path=COOKIE_PATH,
        httponly=True,
        secure=_secure(request),
        samesite="strict",
    )
    return response


@router.get("/signin")
def signin_form(request: Request, next: str | None = None) -> Response:
    if _current(request) is not None:
        return RedirectResponse(_safe_next(next), status_code=303)
    return _signin_page(request, next_url=_safe_next(next))


@router.post("/signin")
def signin(
    request: Request,
    token: Annotated[str, Form()] = "",
    csrf: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "/console",
) -> Response:
    expected = request.cookies.get(SIGNIN_COOKIE) or ""
    if len(expected) < 32 or not same_token(csrf, expected):
        return _signin_page(
            request,
            status=403,
            error="The form was refused: its security token is missing or stale. Try again.",
            next_url=next,
        )
    resources = get_resources(request)
    try:
        principal = resources.verifier.verify(token.strip())
    except AppError as exc:
        return _signin_page(request, status=401, error=exc.message, next_url=next)
    session = _start_session(request, principal)
    if session is None:
        return _signin_page(request, status=403, error=_no_console_pages(principal), next_url=next)
    response = RedirectResponse(_safe_next(next), status_code=303)
    _set_session_cookie(request, response, session)
    response.delete_cookie(SIGNIN_COOKIE, path=COOKIE_PATH)
    return response


def _oidc(resources: Resources) -> OidcClient:
    if resources.console_oidc is None:
        return OidcClient(resources.settings)  # raises SignInFailed: not configured
    return resources.console_oidc


def _start_session(request: Request, principal: Principal) -> ConsoleSession | None:
    """A session for a principal with a console role; None for anyone else."""
    if not principal.has_any(*CONSOLE_ROLES):
        return None
    return _store(get_resources(request)).create(principal)


def _no_console_pages(principal: Principal) -> str:
    return (
        f"{principal.person_id} has no console pages: the console is for the "
        "conflicts and compliance roles."
    )


def _set_session_cookie(request: Request, response: Response, session: ConsoleSession) -> None:
    response.set_cookie(
        COOKIE,
        session.sid,
        path=COOKIE_PATH,
        httponly=True,
        secure=_secure(request),
        samesite="strict",
    )


@router.get("/oidc/start")
def oidc_start(request: Request, next: str | None = None) -> Response:
    resources = get_resources(request)
    if resources.settings.auth_mode != "oidc":
        raise PageRefused(404, "Not available", "The console signs in with tokens here.", None)
    redirect_uri = resources.settings.console_oidc_redirect_url or str(
        request.url_for("oidc_callback")
    )
    try:
        url, state = _oidc(resources).begin(redirect_uri, _safe_next(next))
    except AppError as exc:
        return _signin_page(request, status=exc.status, error=exc.message, next_url=next or "")
    response = RedirectResponse(url, status_code=303, headers={"Cache-Control": "no-store"})
    # Lax, not Strict: the issuer's redirect back is a cross-site navigation, and this cookie
    # must come with it to bind the answer to the browser that started the sign-in
    response.set_cookie(
        OIDC_COOKIE,
        state,
        max_age=600,
        path=f"{COOKIE_PATH}/oidc",
        httponly=True,
        secure=_secure(request),
        samesite="lax",
    )
    return response


@router.get("/oidc/callback", name="oidc_callback")
def oidc_callback(request: Request, code: str = "", state: str = "", error: str = "") -> Response:
    resources = get_resources(request)
    if resources.settings.auth_mode != "oidc":
        raise PageRefused(404, "Not available", "The console signs in with tokens here.", None)
    if error:
        return _signin_page(
            request, status=401, error=f"The identity provider refused: {error[:200]}"
        )
    if not state or not same_token(request.cookies.get(OIDC_COOKIE), state):
        return _signin_page(
            request, status=403, error="This sign-in was not started in this browser; start again."
        )
    client = _oidc(resources)
    try:
        login = client.take(state)
        access_token = client.finish(login, code[:4096])
        principal = resources.verifier.verify(access_token)
    except AppError as exc:
        return _signin_page(request, status=exc.status, error=exc.message)
    session = _start_session(request, principal)
    if session is None:
        return _signin_page(request, status=403, error=_no_console_pages(principal))
    # A page, not a redirect: the SameSite=Strict session cookie is not sent on the rest of a
    # navigation that began at the issuer; the refresh starts a new one from this site.
    response = render(request, "signed_in.html", session, next_url=_safe_next(login.next_url))
    _set_session_cookie(request, response, session)
    response.delete_cookie(OIDC_COOKIE, path=f"{COOKIE_PATH}/oidc")
    return response


@router.post("/signout")
def signout(request: Request, csrf: Annotated[str, Form()] = "") -> Response:
    session = _require(request, *CONSOLE_ROLES)
    _check_csrf(session, csrf)
    _store(get_resources(request)).drop(session.sid)
    response = RedirectResponse("/console/signin", status_code=303)
    response.delete_cookie(COOKIE, path=COOKIE_PATH)
    return response


@router.get("")
@router.get("/")
def home(request: Request) -> Response:
    session = _require(request, *CONSOLE_ROLES)
    return RedirectResponse(_nav(session)[0][0], status_code=303)


# --- walls -------------------------------------------------------------------------------------


def wall_state(wall: WallOut, at: datetime) -> str:
    if wall.lifted_at is not None:
        return "lifted"
    if wall.effective_from is not None and at < wall.effective_from:
        return "scheduled"
    if wall.effective_until is not None and at >= wall.effective_until:
        return "expired"
    return "active"


STATES = ("scheduled", "active", "expired", "lifted")


def _matches(wall: WallOut, needle: str) -> bool:
    haystack = " ".join(
        [
            wall.wall_id,
            wall.title,
            wall.reason,
            wall.kind,
            *wall.protects.matters,
            *wall.protects.clients,
            *wall.screened,
            *wall.allowed,
        ]
    ).lower()
    return all(part in haystack for part in needle.lower().split())


@router.get("/walls")
def walls_page(request: Request, state: str = "", q: str = "", kind: str = "") -> HTMLResponse:
    session = _require(request, "conflicts", "compliance")
    resources = get_resources(request)
    now = now_utc()
    with resources.database.transaction() as conn:
        walls = wall_service.list_walls(conn, None)
    rows = [(w, wall_state(w, now)) for w in walls]
    counts = {s: sum(1 for _, st in rows if st == s) for s in STATES}
    if state in STATES:
        rows = [(w, st) for w, st in rows if st == state]
    if kind in ("exclusionary", "inclusionary"):
        rows = [(w, st) for w, st in rows if w.kind == kind]
    if q.strip():
        rows = [(w, st) for w, st in rows if _matches(w, q.strip()[:200])]
    rows.sort(key=lambda r: (STATES.index(r[1]) if r[1] != "active" else -1, r[0].title))
    return render(
        request,
        "walls.html",
        session,
        rows=rows,
        counts=counts,
        total=len(walls),
        state=state if state in STATES else "",
        kind=kind if kind in ("exclusionary", "inclusionary") else "",
        q=q[:200],
        states=STATES,
        now=now,
    )


@dataclass
class WallForm:
    """The issue-wall form as typed, so that a refused form comes back filled in."""

    kind: str = "exclusionary"
    title: str = ""
    reason: str = ""
    matters: str = ""
    clients: str = ""
    screened: str = ""
    allowed: str = ""
    include_team: bool = True
    effective_from: str = ""
    effective_until: str = ""
    errors: list[str] = field(default_factory=list)

    def hidden_fields(self) -> list[tuple[str, str]]:
        out = [
            ("kind", self.kind),
            ("title", self.title),
            ("reason", self.reason),
            ("matters", self.matters),
            ("clients", self.clients),
            ("screened", self.screened),
            ("allowed", self.allowed),
            ("effective_from", self.effective_from),
            ("effective_until", self.effective_until),
        ]
        if self.include_team:
            out.append(("include_team", "on"))
        return out


_SPLIT = re.compile(r"[,;\n\r]+")


def _ids(raw: str) -> list[str]:
    seen: dict[str, None] = {}
    for part in _SPLIT.split(raw):
        if part.strip():
            seen.setdefault(part.strip(), None)
    return list(seen)


def _instant(raw: str, label: str, errors: list[str]) -> datetime | None:
    """A datetime-local value (read as UTC) or an RFC 3339 time."""
    value = raw.strip()
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        errors.append(f"{label}: not a date and time ({value[:40]!r}).")
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _wall_body(form: WallForm) -> WallIn | None:
    """The API's request body built from the form; None (with form.errors) when invalid."""
    start = _instant(form.effective_from, "Effective from", form.errors)
    until = _instant(form.effective_until, "Effective until", form.errors)
    if form.errors:
        return None
    exclusionary = form.kind == "exclusionary"
    try:
        return WallIn.model_validate(
            {
                "kind": form.kind,
                "title": form.title,
                "reason": form.reason,
                "protects": {"matters": _ids(form.matters), "clients": _ids(form.clients)},
                "screened": _ids(form.screened) if exclusionary else [],
                "allowed": [] if exclusionary else _ids(form.allowed),
                "include_team": form.include_team,
                "effective_from": start,
                "effective_until": until,
            }
        )
    except ValidationError as exc:
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ())) or "form"
            form.errors.append(f"{where}: {err.get('msg', 'invalid')}")
        return None


def _form_choices(request: Request) -> dict[str, Any]:
    snap = read_snapshot(get_resources(request).database)
    return {
        "people": sorted((p.person_id, p.name) for p in snap.people.values() if p.active),
        "matters": sorted((m.matter_id, m.title) for m in snap.matters.values()),
        "clients": sorted((c.client_id, c.name) for c in snap.clients.values()),
    }


def _new_wall_page(
    request: Request, session: ConsoleSession, form: WallForm, status: int = 200
) -> HTMLResponse:
    return render(request, "wall_new.html", session, status, form=form, **_form_choices(request))


@router.get("/walls/new")
def new_wall(request: Request) -> HTMLResponse:
    session = _require(request, "conflicts")
    return _new_wall_page(request, session, WallForm())


WallField = Annotated[str, Form()]


@dataclass
class PostedWall:
    """The issue-wall form as posted (preview, edit and issue all take it)."""

    csrf: str
    form: WallForm


def _posted_wall(
    csrf: WallField = "",
    kind: WallField = "exclusionary",
    title: WallField = "",
    reason: WallField = "",
    matters: WallField = "",
    clients: WallField = "",
    screened: WallField = "",
    allowed: WallField = "",
    include_team: WallField = "",
    effective_from: WallField = "",
    effective_until: WallField = "",
) -> PostedWall:
    form = WallForm(
        kind=kind if kind in ("exclusionary", "inclusionary") else "exclusionary",
        title=title,
        reason=reason,
        matters=matters,
        clients=clients,
        screened=screened,
        allowed=allowed,
        include_team=include_team == "on",
        effective_from=effective_from,
        effective_until=effective_until,
    )
    return PostedWall(csrf, form)


PostedWallDep = Annotated[PostedWall, Depends(_posted_wall)]


@router.post("/walls/preview")
def preview(
    request: Request,
    posted: PostedWallDep,
) -> HTMLResponse:
    session = _require(request, "conflicts")
    _check_csrf(session, posted.csrf)
    form = posted.form
    body = _wall_body(form)
    if body is None:
        return _new_wall_page(request, session, form, 422)
    resources = get_resources(request)
    try:
        impact: WallPreview = preview_wall(
            resources.database,
            body,
            batch_size=resources.settings.retag_batch_size,
            caller_id=session.person_id,
            lookback_days=resources.settings.exposure_lookback_days,
        )
    except AppError as exc:
        form.errors.append(exc.message)
        return _new_wall_page(request, session, form, exc.status)
    return render(request, "wall_preview.html", session, form=form, body=body, impact=impact)


@router.post("/walls/edit")
def edit_wall(
    request: Request,
    posted: PostedWallDep,
) -> HTMLResponse:
    """Back from the preview to the form, filled in."""
    session = _require(request, "conflicts")
    _check_csrf(session, posted.csrf)
    form = posted.form
    return _new_wall_page(request, session, form)


@router.post("/walls")
def issue(
    request: Request,
    posted: PostedWallDep,
) -> Response:
    session = _require(request, "conflicts")
    _check_csrf(session, posted.csrf)
    form = posted.form
    body = _wall_body(form)
    if body is None:
        return _new_wall_page(request, session, form, 422)
    resources = get_resources(request)
    try:
        with resources.database.transaction() as conn:
            wall_id, _ = wall_service.issue_wall(
                conn,
                body,
                session.person_id,
                lookback_days=resources.settings.exposure_lookback_days,
            )
    except AppError as exc:
        form.errors.append(exc.message)
        return _new_wall_page(request, session, form, exc.status)
    worker = resources.retag_worker
    if worker is not None:
        worker.wake()
    return RedirectResponse(f"/console/walls/{wall_id}?issued=1", status_code=303)


def _wall_page(
    request: Request,
    session: ConsoleSession,
    wall_id: str,
    *,
    status: int = 200,
    lift_error: str | None = None,
    lift_reason: str = "",
) -> HTMLResponse:
    resources = get_resources(request)
    with resources.database.transaction() as conn:
        try:
            wall = wall_service.get_wall(conn, wall_id)
        except AppError as exc:
            raise PageRefused(exc.status, "No such wall", exc.message, session) from None
        history = audit_service.list_policy_events(
            conn,
            since=None,
            until=None,
            object_id=wall_id,
            limit=200,
            cursor=None,
            cursor_secret=audit_service.cursor_key(resources.settings),
        )["items"]
        covered = wall.covered_matters or []
        pending = repository.retag_progress(conn, covered)
    totals: dict[str, int] = {}
    if pending:
        with resources.database.transaction() as conn:
            totals = repository.chunks_per_matter(conn, [p["matter_id"] for p in pending])
    progress = [
        {**p, "total": max(totals.get(p["matter_id"], 0), int(p["retagged_chunks"]))}
        for p in pending
    ]
    return render(
        request,
        "wall.html",
        session,
        status,
        wall=wall,
        state=wall_state(wall, now_utc()),
        history=list(reversed(history)),
        covered=covered,
        progress=progress,
        issued=request.query_params.get("issued") == "1",
        lift_error=lift_error,
        lift_reason=lift_reason,
    )


@router.get("/walls/{wall_id}")
def wall_page(request: Request, wall_id: str) -> HTMLResponse:
    session = _require(request, "conflicts", "compliance")
    return _wall_page(request, session, wall_id[:200])


@router.post("/walls/{wall_id}/lift")
def lift(
    request: Request,
    wall_id: str,
    csrf: Annotated[str, Form()] = "",
    reason: Annotated[str, Form()] = "",
) -> Response:
    session = _require(request, "conflicts")
    _check_csrf(session, csrf)
    wall_id = wall_id[:200]
    try:
        body = LiftIn.model_validate({"reason": reason})
    except ValidationError:
        return _wall_page(
            request,
            session,
            wall_id,
            status=422,
            lift_error="Give a reason: a wall is never lifted without one.",
        )
    resources = get_resources(request)
    try:
        with resources.database.transaction() as conn:
            wall_service.lift_wall(conn, wall_id, body, session.person_id)
    except AppError as exc:
        if exc.status == 404:
            raise PageRefused(404, "No such wall", exc.message, session) from None
        return _wall_page(
            request,
            session,
            wall_id,
            status=exc.status,
            lift_error=exc.message,
            lift_reason=reason,
        )
    worker = resources.retag_worker
    if worker is not None:
        worker.wake()
    return RedirectResponse(f"/console/walls/{wall_id}", status_code=303)


# --- access and conflicts ----------------------------------------------------------------------


BOX_W, BOX_H, GAP, ROW_H = 170, 44, 96, 70
REL_LABEL = {
    ("wall", "client"): "protects",
    ("wall", "matter"): "protects",
    ("client", "client"): "parent of",
    ("client", "matter"): "owns",
}


def _short(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def explanation_diagram(explained: dict[str, Any]) -> dict[str, Any]:
    """Boxes and arrows for each wall covering the matter: person -> wall -> (clients) ->
    matter, drawn from the explanation's path (the SVG is laid out here, drawn in the
    template)."""
    rows = []
    person = explained["person_id"]
    width = 0
    for i, wall in enumerate(explained["walls"]):
        nodes = [("person", person)] + [
            tuple(p.split(":", 1)) for p in wall.get("path") or [] if ":" in p
        ]
        y = 10 + i * ROW_H
        boxes = []
        arrows = []
        for j, (kind, ident) in enumerate(nodes):
            x = 10 + j * (BOX_W + GAP)
            boxes.append({"x": x, "y": y, "kind": kind, "label": _short(ident)})
            if j:
                prev_kind = nodes[j - 1][0]
                if prev_kind == "person":
                    if wall["kind"] == "exclusionary":
                        label = "screened by" if wall["denies"] else "not screened"
                    else:
                        label = "not insider" if wall["denies"] else "insider of"
                else:
                    label = REL_LABEL.get((prev_kind, kind), "")
                arrows.append({"x1": x - GAP, "x2": x - 4, "y": y + BOX_H / 2, "label": label})
        width = max(width, 10 + len(nodes) * (BOX_W + GAP))
        rows.append(
            {"boxes": boxes, "arrows": arrows, "denies": wall["denies"], "active": wall["active"]}
        )
    return {
        "rows": rows,
        "width": max(width, 300),
        "height": 20 + len(rows) * ROW_H,
        "box_w": BOX_W,
        "box_h": BOX_H,
    }


@router.get("/access")
def access_page(request: Request, person_id: str = "", matter_id: str = "") -> HTMLResponse:
    session = _require(request, "conflicts", "compliance")
    person_id, matter_id = person_id.strip()[:200], matter_id.strip()[:200]
    explained = None
    error = None
    status = 200
    snap = read_snapshot(get_resources(request).database)
    if person_id and matter_id:
        try:
            explained = wall_service.explain_access(snap, person_id, matter_id, now_utc())
        except AppError as exc:
            error, status = exc.message, exc.status
    elif person_id or matter_id:
        error, status = "Give both a person and a matter.", 422
    return render(
        request,
        "access.html",
        session,
        status,
        person_id=person_id,
        matter_id=matter_id,
        explained=explained,
        diagram=explanation_diagram(explained) if explained else None,
        error=error,
        people=sorted((p.person_id, p.name) for p in snap.people.values()),
        matters=sorted((m.matter_id, m.title) for m in snap.matters.values()),
    )


@router.get("/conflicts")
def conflicts_page(request: Request, name: str = "") -> HTMLResponse:
    session = _require(request, "conflicts")
    name = name.strip()[:1000]
    hits: list[dict[str, Any]] | None = None
    version = None
    if name:
        snap = read_snapshot(get_resources(request).database)
        hits, version = snap.conflicts(name), snap.version
    return render(request, "conflicts.html", session, name=name, hits=hits, version=version)


# --- audit -------------------------------------------------------------------------------------


@dataclass
class AuditFilter:
    person_id: str = ""
    matter_id: str = ""
    chunk_id: str = ""
    since: str = ""
    until: str = ""

    def query(self, **extra: str) -> str:
        values = {k: v for k, v in vars(self).items() if v}
        values.update({k: v for k, v in extra.items() if v})
        return urlencode(values)

    def parsed(self) -> tuple[dict[str, Any], list[str]]:
        errors: list[str] = []
        args: dict[str, Any] = {
            "person_id": self.person_id or None,
            "matter_id": self.matter_id or None,
            "chunk_id": self.chunk_id or None,
            "since": _instant(self.since, "Since", errors),
            "until": _instant(self.until, "Until", errors),
        }
        return args, errors


def _audit_filter(
    person_id: str, matter_id: str, chunk_id: str, since: str, until: str
) -> AuditFilter:
    return AuditFilter(
        person_id.strip()[:200],
        matter_id.strip()[:200],
        chunk_id.strip()[:1000],
        since.strip()[:40],
        until.strip()[:40],
    )


def chain_banner(conn: Any) -> dict[str, Any]:
    report = verify_all(conn)
    report["verified_at"] = now_utc()
    return report


@router.get("/audit")
def audit_page(
    request: Request,
    person_id: str = "",
    matter_id: str = "",
    chunk_id: str = "",
    since: str = "",
    until: str = "",
    cursor: str = "",
) -> HTMLResponse:
    session = _require(request, "compliance")
    filt = _audit_filter(person_id, matter_id, chunk_id, since, until)
    args, errors = filt.parsed()
    resources = get_resources(request)
    page: dict[str, Any] = {"items": [], "next_cursor": None}
    status = 200
    with resources.database.transaction() as conn:
        banner = chain_banner(conn)
        if not errors:
            try:
                page = audit_service.list_retrievals(
                    conn,
                    limit=PAGE_SIZE,
                    cursor=cursor[:200] or None,
                    cursor_secret=audit_service.cursor_key(resources.settings),
                    **args,
                )
            except AppError as exc:
                errors.append(exc.message)
        if errors:
            status = 422
    return render(
        request,
        "audit.html",
        session,
        status,
        banner=banner,
        filt=filt,
        items=page["items"],
        next_cursor=page["next_cursor"],
        first_page=not cursor,
        errors=errors,
    )


def _filtered(resources: Resources, args: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every retrieval matching the filter, newest first, page by page in one snapshot."""
    with resources.database.transaction() as conn:
        cursor: str | None = None
        while True:
            page = audit_service.list_retrievals(
                conn,
                limit=EXPORT_PAGE,
                cursor=cursor,
                cursor_secret=audit_service.cursor_key(resources.settings),
                **args,
            )
            yield from page["items"]
            cursor = page["next_cursor"]
            if cursor is None:
                return


CSV_COLUMNS = (
    "seq",
    "at",
    "retrieval_id",
    "person_id",
    "purpose",
    "query",
    "mode",
    "k",
    "policy_version",
    "model",
    "prompt_version",
    "result_count",
    "matter_ids",
    "chunk_ids",
    "content_sha256",
    "hash",
)


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    # a spreadsheet must not run a query text as a formula
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _csv_row(item: dict[str, Any]) -> list[str]:
    results = item["results"]
    values = {
        **item,
        "matter_ids": " ".join(sorted({r["matter_id"] for r in results if r["matter_id"]})),
        "chunk_ids": " ".join(r["chunk_id"] for r in results),
        "content_sha256": " ".join(r["content_sha256"] for r in results),
    }
    return [_cell(values.get(c)) for c in CSV_COLUMNS]


@router.get("/audit/export.{fmt}")
def audit_export(
    request: Request,
    fmt: str,
    person_id: str = "",
    matter_id: str = "",
    chunk_id: str = "",
    since: str = "",
    until: str = "",
) -> Response:
    session = _require(request, "compliance")
    if fmt not in ("jsonl", "csv"):
        raise PageRefused(404, "No such export", "Exports are .jsonl or .csv.", session)
    filt = _audit_filter(person_id, matter_id, chunk_id, since, until)
    args, errors = filt.parsed()
    if errors:
        raise PageRefused(422, "Filter refused", " ".join(errors), session)
    resources = get_resources(request)
    stamp = now_utc().strftime("%Y%m%dT%H%M%SZ")

    def jsonl() -> Iterator[str]:
        for item in _filtered(resources, args):
            yield canonical_json(item) + "\n"

    def table() -> Iterator[str]:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(CSV_COLUMNS)
        for item in _filtered(resources, args):
            writer.writerow(_csv_row(item))
            if buffer.tell() > 64_000:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
        yield buffer.getvalue()

    headers = {
        "Content-Disposition": f'attachment; filename="ewall-audit-{stamp}.{fmt}"',
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
    }
    if fmt == "jsonl":
        return StreamingResponse(jsonl(), media_type="application/x-ndjson", headers=headers)
    return StreamingResponse(table(), media_type="text/csv; charset=utf-8", headers=headers)


@router.get("/audit/retrievals/{retrieval_id}")
def retrieval_page(request: Request, retrieval_id: str) -> HTMLResponse:
    session = _require(request, "compliance")
    resources = get_resources(request)
    with resources.database.transaction() as conn:
        try:
            item = audit_service.get_retrieval(conn, retrieval_id[:100])
        except AppError as exc:
            raise PageRefused(exc.status, "No such retrieval", exc.message, session) from None
        gates = repository.gate_events_for_retrieval(conn, item["retrieval_id"])
        banner = chain_banner(conn)
    return render(request, "retrieval.html", session, item=item, gates=gates, banner=banner)


TL_LEFT, TL_WIDTH, TL_LANE = 190, 560, 26


def timeline(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One lane per person, one dot per retrieval, time left to right (laid out here, drawn
    as inline SVG by the template)."""
    if not items:
        return None
    times = [datetime.fromisoformat(i["at"]) for i in items]
    t0, t1 = min(times), max(times)
    span = (t1 - t0).total_seconds()
    people = sorted({i["person_id"] for i in items})
    lane = {p: n for n, p in enumerate(people)}
    dots = []
    for item, at in zip(items, times, strict=True):
        frac = (at - t0).total_seconds() / span if span else 0.5
        dots.append(
            {
                "x": round(TL_LEFT + frac * TL_WIDTH, 1),
                "y": 20 + lane[item["person_id"]] * TL_LANE,
                "retrieval_id": item["retrieval_id"],
                "title": f"{_fmt_time(at)} · {item['person_id']} · {_short(item['query'], 60)}",
            }
        )
    return {
        "lanes": [{"person_id": p, "y": 20 + n * TL_LANE} for n, p in enumerate(people)],
        "dots": dots,
        "start": t0,
        "end": t1,
        "left": TL_LEFT,
        "right": TL_LEFT + TL_WIDTH,
        "width": TL_LEFT + TL_WIDTH + 20,
        "height": 40 + len(people) * TL_LANE,
        "axis_y": 10 + len(people) * TL_LANE,
    }


@router.get("/audit/matter")
def matter_page(request: Request, matter_id: str = "") -> HTMLResponse:
    session = _require(request, "compliance")
    matter_id = matter_id.strip()[:200]
    resources = get_resources(request)
    items: list[dict[str, Any]] = []
    truncated = False
    if matter_id:
        for item in _filtered(
            resources,
            {
                "person_id": None,
                "matter_id": matter_id,
                "chunk_id": None,
                "since": None,
                "until": None,
            },
        ):
            if len(items) >= MATTER_SCAN_LIMIT:
                truncated = True
                break
            items.append(item)
    by_person: dict[str, dict[str, Any]] = {}
    for item in items:
        chunks = {r["chunk_id"] for r in item["results"] if r["matter_id"] == matter_id}
        row = by_person.setdefault(
            item["person_id"],
            {
                "person_id": item["person_id"],
                "first_at": item["at"],
                "last_at": item["at"],
                "retrievals": 0,
                "chunks": set(),
            },
        )
        row["retrievals"] += 1
        row["chunks"] |= chunks
        row["first_at"] = min(row["first_at"], item["at"])
        row["last_at"] = max(row["last_at"], item["at"])
    people = sorted(by_person.values(), key=lambda r: r["last_at"], reverse=True)
    with resources.database.transaction() as conn:
        banner = chain_banner(conn)
    return render(
        request,
        "matter.html",
        session,
        matter_id=matter_id,
        people=people,
        items=items,
        chart=timeline(items),
        truncated=truncated,
        limit=MATTER_SCAN_LIMIT,
        banner=banner,
        filt=AuditFilter(matter_id=matter_id),
    )
