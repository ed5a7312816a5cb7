"""Console walls pages: the list, one wall, issuing (form, preview, edit, issue) and lifting."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from app.audit import service as audit_service
from app.console import repository
from app.console.pages import (
    PageRefused,
    check_csrf,
    form_instant,
    render,
    require,
)
from app.console.preview import WallPreview, preview_wall
from app.console.sessions import ConsoleSession
from app.db.clock import db_now
from app.deps import POLICY_ATTEMPTS, PolicyTurn, WallsTurn, get_resources
from app.errors import AppError
from app.resources import Resources
from app.walls import exposure
from app.walls import service as wall_service
from app.walls.schemas import LiftIn, WallIn, WallOut

router = APIRouter(prefix="/console", include_in_schema=False)

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
    session = require(request, "conflicts", "compliance")
    resources = get_resources(request)
    with resources.database.transaction() as conn:
        walls = wall_service.list_walls(conn, None)
        now = db_now(conn)  # the database's clock, which judged each wall (app/db/clock.py)
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


def _wall_body(form: WallForm) -> WallIn | None:
    """The API's request body built from the form; None (with form.errors) when invalid."""
    start = form_instant(form.effective_from, "Effective from", form.errors)
    # the end rounded up, as the API reads it (app/walls/schemas.py): the wall holds for at
    # least the window asked
    until = form_instant(form.effective_until, "Effective until", form.errors, rounded_up=True)
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
    resources = get_resources(request)
    snap = resources.require_resolver().latest_matrix(resources.database)
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
    session = require(request, "conflicts")
    return _new_wall_page(request, session, WallForm())


WallField = Annotated[str, Form()]


@dataclass
class PostedWall:
    """The issue-wall form as posted (preview, edit and issue all take it)."""

    csrf: str
    form: WallForm


def _posted_wall(
    csrf: WallField = "",
    kind: WallField = "",  # missing or empty is no choice, not the first kind
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
    known = kind in ("exclusionary", "inclusionary")
    form = WallForm(
        kind=kind if known else "exclusionary",
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
    if not known:  # never a guess: the two kinds deny in opposite ways
        form.errors.append("Kind: choose exclusionary or inclusionary.")
    return PostedWall(csrf, form)


PostedWallDep = Annotated[PostedWall, Depends(_posted_wall)]


def _partner_session(request: Request, posted: PostedWall) -> ConsoleSession:
    """The conflicts partner's session, once the posted form's CSRF token matches it."""
    session = require(request, "conflicts")
    check_csrf(session, posted.csrf)
    return session


WallAction = Callable[[Resources, ConsoleSession, WallIn], Response]


def _on_posted_wall(request: Request, posted: PostedWall, action: WallAction) -> Response:
    """Run ``action`` on the posted wall; a form that does not make a wall, or a wall the
    service refuses, comes back as the form with the reason."""
    session = _partner_session(request, posted)
    form = posted.form
    body = _wall_body(form)
    if body is None:
        return _new_wall_page(request, session, form, 422)
    try:
        return action(get_resources(request), session, body)
    except AppError as exc:
        form.errors.append(exc.message)
        return _new_wall_page(request, session, form, exc.status)


@router.post("/walls/preview")
def preview(request: Request, posted: PostedWallDep, turn: WallsTurn) -> Response:
    def show_impact(resources: Resources, session: ConsoleSession, body: WallIn) -> Response:
        impact: WallPreview = preview_wall(
            resources.database,
            body,
            batch_size=resources.settings.retag_batch_size,
            caller_id=session.person_id,
            caller_roles=session.roles,
            lookback_days=resources.settings.exposure_lookback_days,
        )
        return render(
            request, "wall_preview.html", session, form=posted.form, body=body, impact=impact
        )

    return _on_posted_wall(request, posted, show_impact)


@router.post("/walls/edit")
def edit_wall(
    request: Request,
    posted: PostedWallDep,
) -> HTMLResponse:
    """Back from the preview to the form, filled in."""
    session = _partner_session(request, posted)
    form = posted.form
    return _new_wall_page(request, session, form)


@router.post("/walls")
def issue(request: Request, posted: PostedWallDep, turn: PolicyTurn) -> Response:
    def issue_it(resources: Resources, session: ConsoleSession, body: WallIn) -> Response:
        # run again, whole, when PostgreSQL failed it for a concurrent change (app/deps.py)
        wall_id, _ = resources.database.retried(
            lambda conn: wall_service.issue_wall(
                conn,
                body,
                session.person_id,
                lookback_days=resources.settings.exposure_lookback_days,
            ),
            POLICY_ATTEMPTS,
        )
        worker = resources.retag_worker
        if worker is not None:
            worker.wake()
        return RedirectResponse(f"/console/walls/{wall_id}?issued=1", status_code=303)

    return _on_posted_wall(request, posted, issue_it)


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
        snap, now = resources.require_resolver().matrix_now(conn, resources.database)
        exposed = (
            exposure.wall_report(
                conn,
                snap,
                wall_id,
                roles=session.roles,
                person_id=session.person_id,
                lookback_days=resources.settings.exposure_lookback_days,
                now=now,
            )
            if wall_id in snap.walls
            else None  # issued after the snapshot was read: the next refresh has it
        )
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
        state=wall_state(wall, now),
        history=list(reversed(history)),
        covered=covered,
        progress=progress,
        exposure=exposed,
        issued=request.query_params.get("issued") == "1",
        lift_error=lift_error,
        lift_reason=lift_reason,
    )


@router.get("/walls/{wall_id}")
def wall_page(request: Request, wall_id: str) -> HTMLResponse:
    session = require(request, "conflicts", "compliance")
    return _wall_page(request, session, wall_id[:200])


@router.post("/walls/{wall_id}/lift")
def lift(
    request: Request,
    wall_id: str,
    turn: PolicyTurn,
    csrf: Annotated[str, Form()] = "",
    reason: Annotated[str, Form()] = "",
) -> Response:
    session = require(request, "conflicts")
    check_csrf(session, csrf)
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
        resources.database.retried(
            lambda conn: wall_service.lift_wall(conn, wall_id, body, session.person_id),
            POLICY_ATTEMPTS,
        )
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
