"""Console access decision (with its diagram) and conflict search."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.console.pages import (
    render,
    require,
    shorten,
)
from app.deps import get_resources
from app.errors import AppError
from app.types import lookup_id
from app.walls import service as wall_service

router = APIRouter(prefix="/console", include_in_schema=False)

# --- access and conflicts ----------------------------------------------------------------------


BOX_W, BOX_H, GAP, ROW_H = 170, 44, 96, 70
REL_LABEL = {
    ("wall", "client"): "protects",
    ("wall", "matter"): "protects",
    ("client", "client"): "parent of",
    ("client", "matter"): "owns",
}


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
            boxes.append({"x": x, "y": y, "kind": kind, "label": shorten(ident)})
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
    session = require(request, "conflicts", "compliance")
    person_id, matter_id = lookup_id(person_id.strip()[:200]), lookup_id(matter_id.strip()[:200])
    explained = None
    error = None
    status = 200
    resources = get_resources(request)
    # judged at the database's clock, read with the matrix's stamp (app/db/clock.py)
    snap, at = resources.require_resolver().latest_matrix_now(resources.database)
    if person_id and matter_id:
        try:
            explained = wall_service.explain_access(snap, person_id, matter_id, at)
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
    session = require(request, "conflicts")
    name = name.strip()[:1000]
    hits: list[dict[str, Any]] | None = None
    version = None
    if name:
        resources = get_resources(request)
        snap = resources.require_resolver().latest_matrix(resources.database)
        hits, version = snap.conflicts(name), snap.version
    return render(request, "conflicts.html", session, name=name, hits=hits, version=version)
