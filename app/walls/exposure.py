"""Exposure of a wall, and the preview of issuing one.

Exposure answers the conflicts partner's first question after a wall goes up: who already
read what it now protects? From the retrieval audit, within a lookback: every person (and
session) who retrieved chunks of a matter the wall covers and whom the wall denies (screened
by an exclusionary wall, not an insider of an inclusionary one).

Every access decision here is the conflict graph's own (`MatrixSnapshot.covered_matters`,
`wall_denies`, `may_access`); the preview runs them on a copy of the snapshot with the
proposed wall added. Nothing in an answer names a matter the caller may not see now: such
matters are left out and the answer says ``partial``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection

from app.audit.chain import iso
from app.db.engine import Database
from app.walls import repository
from app.walls.access import mark_writer
from app.walls.graph import MatrixSnapshot, Wall
from app.walls.schemas import WallIn

MaySee = Callable[[str], bool]
PREVIEW_WALL_ID = "preview"
SUMMARY_ITEMS = 100


def caller_may_see(snap: MatrixSnapshot, person_id: str, at: datetime) -> MaySee:
    return lambda matter_id: snap.may_access(person_id, matter_id, at)


def exposure(
    conn: Connection,
    wall_id: str,
    covered: Iterable[str],
    *,
    since: datetime,
    snapshot: Callable[[], MatrixSnapshot],
    may_see: MaySee | None = None,
) -> dict[str, Any]:
    """``{"items": [...], "partial": bool}`` for the wall ``wall_id`` covering ``covered``.
    ``snapshot`` (with the wall in it) is read only when someone retrieved those matters;
    ``may_see`` None: the audit's own view (every matter), for the policy event's summary."""
    matter_ids = sorted(set(covered))
    if not matter_ids or not repository.anyone_retrieved(conn, matter_ids, since):
        return {"items": [], "partial": False}
    snap = snapshot()
    wall = snap.walls[wall_id]

    def denied(person_id: str) -> bool:
        return snap.wall_denies(wall, person_id)

    # The statement groups only the denied people's rows. Who they are is the graph's answer
    # for every person in the matrix, and for a stranger to it (an id it does not know).
    known = sorted(snap.people)
    strangers_denied = denied(_stranger(snap))
    rows = repository.exposure_rows(
        conn,
        matter_ids,
        since,
        denied=None if strangers_denied else [p for p in known if denied(p)],
        admitted=[p for p in known if not denied(p)] if strangers_denied else None,
    )
    return aggregate(rows, denied, may_see)


def _stranger(snap: MatrixSnapshot) -> str:
    candidate = "stranger"
    while candidate in snap.people:
        candidate += "_"
    return candidate


def aggregate(
    rows: Iterable[Mapping[Any, Any]], denied: Callable[[str], bool], may_see: MaySee | None
) -> dict[str, Any]:
    """Rows per (person, session, matter) -> one item per (person, session) whom the wall
    denies, over the matters the reader may see."""
    items: dict[tuple[str, str | None], dict[str, Any]] = {}
    partial = False
    for row in rows:
        person_id = row["person_id"]
        if not denied(person_id):
            continue
        if may_see is not None and not may_see(row["matter_id"]):
            partial = True
            continue
        key = (person_id, row["session_id"])
        item = items.get(key)
        if item is None:
            item = items[key] = {
                "person_id": person_id,
                "session_id": row["session_id"],
                "first_at": row["first_at"],
                "last_at": row["last_at"],
                "chunks": 0,
                "documents": set(),
                "matters": set(),
            }
        item["first_at"] = min(item["first_at"], row["first_at"])
        item["last_at"] = max(item["last_at"], row["last_at"])
        item["chunks"] += int(row["chunks"])
        item["documents"].update(row["documents"])
        item["matters"].add(row["matter_id"])
    out = [
        {
            **item,
            "first_at": iso(item["first_at"]),
            "last_at": iso(item["last_at"]),
            "documents": sorted(item["documents"]),
            "matters": sorted(item["matters"]),
        }
        for item in items.values()
    ]
    out.sort(key=lambda i: (i["first_at"], i["person_id"], i["session_id"] or ""))
    return {"items": out, "partial": partial}


def summary(report: dict[str, Any], lookback_days: int) -> dict[str, Any]:
    """The exposure as the policy event keeps it: counts and who, without documents."""
    items = report["items"]
    return {
        "lookback_days": lookback_days,
        "people": len({i["person_id"] for i in items}),
        "sessions": len(items),
        "chunks": sum(i["chunks"] for i in items),
        "items": [
            {k: i[k] for k in ("person_id", "session_id", "first_at", "last_at", "chunks")}
            for i in items[:SUMMARY_ITEMS]
        ],
        "truncated": len(items) > SUMMARY_ITEMS,
    }


def proposed_wall(body: WallIn, wall_id: str = PREVIEW_WALL_ID) -> Wall:
    return Wall(
        wall_id=wall_id,
        kind=body.kind,
        title=body.title,
        include_team=body.include_team if body.kind == "inclusionary" else True,
        effective_from=body.effective_from,
        effective_until=body.effective_until,
        lifted=False,
        protected_matters=frozenset(body.protects.matters),
        protected_clients=frozenset(body.protects.clients),
        screened=frozenset(body.screened),
        allowed=frozenset(body.allowed),
    )


def with_wall(snap: MatrixSnapshot, wall: Wall) -> MatrixSnapshot:
    """A copy of the snapshot with one more wall; its derived views are computed afresh."""
    return dataclasses.replace(snap, walls={**snap.walls, wall.wall_id: wall})


def _chunks_in(database: Database, matter_ids: list[str]) -> int:
    if not matter_ids:
        return 0
    # A count over every chunk of these matters, including documents private to others in
    # the source system: writer mode (mark_writer's rule), in a transaction of its own that
    # returns one number.
    with database.transaction() as conn:
        mark_writer(conn)
        return repository.count_chunks_in_matters(conn, matter_ids)


def preview(
    conn: Connection,
    database: Database,
    current: MatrixSnapshot,
    body: WallIn,
    *,
    caller_id: str,
    now: datetime,
    lookback_days: int,
) -> dict[str, Any]:
    """What issuing ``body`` would do, computed on a copy of the snapshot; nothing written."""
    wall = proposed_wall(body)
    after = with_wall(current, wall)
    may_see = caller_may_see(current, caller_id, now)
    # the instant the wall would first be in force
    at = max(now, body.effective_from) if body.effective_from is not None else now
    in_force = body.effective_until is None or at < body.effective_until
    covered = sorted(after.covered_matters[wall.wall_id])
    visible = [m for m in covered if may_see(m)]
    loses: list[dict[str, Any]] = []
    if in_force:
        # Access is the AND over the walls covering a matter, so one more wall can only take
        # access away, and only from the people it denies.
        for person_id in sorted(after.people):
            if not after.wall_denies(wall, person_id):
                continue
            lost = [
                m
                for m in visible
                if current.may_access(person_id, m, at) and not after.may_access(person_id, m, at)
            ]
            if lost:
                loses.append({"person_id": person_id, "matters": lost})
    conflicts = [
        {"matter_id": matter_id, **hit}
        for matter_id in visible
        for hit in after.adverse_matters(matter_id)
        if may_see(hit["client_in"]) and may_see(hit["adverse_in"])
    ]
    report = exposure(
        conn,
        wall.wall_id,
        covered,
        since=now - timedelta(days=lookback_days),
        snapshot=lambda: after,
        may_see=may_see,
    )
    return {
        "policy_version": current.version,
        "at": iso(at),
        "in_force": in_force,
        "matters": visible,
        "loses": loses,
        "gains": [],
        "chunks_to_retag": _chunks_in(database, visible),
        "conflicts": conflicts,
        "exposure": {"lookback_days": lookback_days, **report},
        "partial": len(visible) < len(covered) or report["partial"],
    }
