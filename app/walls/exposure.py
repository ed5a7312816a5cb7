"""Exposure of a wall, and the preview of issuing one.

Exposure answers the conflicts partner's first question after a wall goes up: who already
read what it now protects? From the retrieval audit, within a lookback: every person (and
session) who retrieved chunks of a matter the wall covers and whom the wall denies (screened
by an exclusionary wall, not an insider of an inclusionary one).

Every access decision here is the conflict graph's own (`MatrixSnapshot.covered_matters`,
`wall_denies`, `may_access`); the preview runs them on a copy of the snapshot with the
proposed wall added, and a matrix change runs them on the matrix before and after it
(`access_changes`, one comparison for both).

Who reads what (`matter_view`, the one policy for every reader of these answers): the
conflicts and compliance roles manage and audit the matrix, so they read the metadata of
every matter (ids, titles, who retrieved what), whatever walls say about its documents; their
answers are complete. Any other reader sees only the matters they may see now; the rest are
left out and the answer says ``partial``. Chunk text never passes through here.
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
# the roles that manage (conflicts) and audit (compliance) the conflict matrix
METADATA_ROLES = frozenset({"conflicts", "compliance"})


def caller_may_see(snap: MatrixSnapshot, person_id: str, at: datetime) -> MaySee:
    return lambda matter_id: snap.may_access(person_id, matter_id, at)


def matter_view(
    roles: Iterable[str], person_id: str, snap: MatrixSnapshot, at: datetime
) -> MaySee | None:
    """Which matters a reader of exposure, previews and wall details may have named: None
    (every one) for the matrix roles, else those the reader may see at ``at``. Whether the
    reader is a person in the matrix, or is screened by a wall, does not narrow the matrix
    roles' view: they issue and audit the walls, so they must see what the walls cover."""
    if METADATA_ROLES & set(roles):
        return None
    return caller_may_see(snap, person_id, at)


def matter_details(
    snap: MatrixSnapshot, matter_ids: Iterable[str], may_see: MaySee | None
) -> list[dict[str, Any]]:
    """What the matrix says of each matter an answer names (title, client, status, parties),
    for those the reader may have named: the conflicts and compliance roles, who manage and
    audit the matrix, read it for every one."""
    out = []
    for matter_id in sorted(set(matter_ids)):
        matter = snap.matters.get(matter_id)
        if matter is None or not (may_see is None or may_see(matter_id)):
            continue
        client = snap.clients.get(matter.client_id)
        out.append({
            "matter_id": matter_id,
            "title": matter.title,
            "status": matter.status,
            "client_id": matter.client_id,
            "client_name": client.name if client is not None else None,
            "parties": [{"name": p.name, "role": p.role} for p in snap.parties.get(matter_id, ())],
        })
    return out


@dataclasses.dataclass(frozen=True)
class AccessChange:
    person_id: str
    matter_id: str
    change: str  # "loses" | "gains"


def access_changes(
    before: MatrixSnapshot,
    after: MatrixSnapshot,
    pairs: Iterable[tuple[str, str]],
    at: datetime,
) -> list[AccessChange]:
    """The (person, matter) pairs whose access differs between two states of the matrix at
    ``at``, in the order given. A matter missing from ``before`` (created by the change) has
    no access to lose or gain, so it is skipped."""
    out: list[AccessChange] = []
    for person_id, matter_id in pairs:
        if matter_id not in before.matters:
            continue
        was = before.may_access(person_id, matter_id, at)
        now = after.may_access(person_id, matter_id, at)
        if was != now:
            out.append(AccessChange(person_id, matter_id, "gains" if now else "loses"))
    return out


@dataclasses.dataclass(frozen=True)
class WallImpact:
    """What issuing a wall would change, before anyone reads it: the API preview and the
    console preview both format this one computation."""

    wall: Wall
    after: MatrixSnapshot
    at: datetime  # the instant the wall would first be in force
    in_force: bool
    covered: tuple[str, ...]
    changes: tuple[AccessChange, ...]  # people in the matrix only (strangers have no walls)


def wall_impact(current: MatrixSnapshot, body: WallIn, now: datetime, wall_id: str) -> WallImpact:
    wall = proposed_wall(body, wall_id)
    after = with_wall(current, wall)
    at = max(now, body.effective_from) if body.effective_from is not None else now
    in_force = wall.active_at(at)
    covered = tuple(sorted(after.covered_matters[wall.wall_id]))
    changes: list[AccessChange] = []
    if in_force:
        # Access is the AND over the walls covering a matter, so one more wall can only take
        # access away, and only from the (active) people it denies: this keeps the work at
        # denied people x covered matters.
        denied = [
            p.person_id
            for p in sorted(after.people.values(), key=lambda p: p.person_id)
            if p.active and after.wall_denies(wall, p.person_id)
        ]
        changes = access_changes(current, after, ((p, m) for p in denied for m in covered), at)
    return WallImpact(wall, after, at, in_force, covered, tuple(changes))


def exposure(
    conn: Connection,
    wall_id: str,
    covered: Iterable[str],
    *,
    now: datetime,
    lookback_days: int,
    snapshot: Callable[[], MatrixSnapshot],
    may_see: MaySee | None = None,
    at: datetime | None = None,
) -> dict[str, Any]:
    """``{"items": [...], "partial": bool}`` for the wall ``wall_id`` covering ``covered``:
    who retrieved those matters within the lookback and is denied by the wall at ``at``
    (default: when it acts, now or its start if later; GET exposure asks for now). A wall
    that does not act then (lifted, its window over or not begun) denies nobody: no items.
    ``snapshot`` (with the wall in it) is read only when someone retrieved those matters;
    ``may_see`` None: the audit's own view (every matter), for the policy event's summary."""
    matter_ids = sorted(set(covered))
    since = now - timedelta(days=lookback_days)
    if not matter_ids or not repository.anyone_retrieved(conn, matter_ids, since):
        return {"items": [], "partial": False}
    snap = snapshot()
    wall = snap.walls[wall_id]
    if not wall.active_at(at or wall.takes_force(now)):
        return {"items": [], "partial": False}

    def denied(person_id: str) -> bool:
        return snap.wall_denies(wall, person_id)

    # The statement groups only the denied people's rows. Who they are is the graph's answer
    # for every person in the matrix; a reader the matrix does not know is denied by every
    # wall (they see only unwalled matters). The shorter list goes to the statement: the
    # denied with those readers (an exclusionary wall), or the admitted (an inclusionary one).
    screened: list[str] = []
    admitted: list[str] = []
    for person_id in sorted(snap.people):
        (screened if denied(person_id) else admitted).append(person_id)
    if len(screened) < len(admitted):
        # strangers to this snapshot (the people table may have moved since it was read)
        strangers = [p for p in repository.readers(conn) if p not in snap.people]
        rows = repository.exposure_rows(
            conn, matter_ids, since, denied=screened + strangers, admitted=None
        )
    else:
        rows = repository.exposure_rows(conn, matter_ids, since, denied=None, admitted=admitted)
    return aggregate(rows, denied, may_see)


def wall_report(
    conn: Connection,
    snap: MatrixSnapshot,
    wall_id: str,
    *,
    roles: Iterable[str],
    person_id: str,
    lookback_days: int,
    now: datetime,
) -> dict[str, Any]:
    """The exposure of an issued wall as its reader may have it named (GET
    /v1/walls/{id}/exposure and the console's wall page): the people it screens who
    retrieved its matters within the lookback, and the matters' details."""
    may_see = matter_view(roles, person_id, snap, now)
    covered = snap.covered_matters[wall_id]
    report = exposure(
        conn,
        wall_id,
        covered,
        now=now,
        lookback_days=lookback_days,
        snapshot=lambda: snap,
        may_see=may_see,
        at=now,
    )
    return {
        "wall_id": wall_id,
        "lookback_days": lookback_days,
        "at": iso(now),
        "in_force": snap.walls[wall_id].active_at(now),
        "policy_version": snap.version,
        **report,
        "matter_details": matter_details(snap, covered, may_see),
    }


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
    # returns one number. Its caller holds a connection of the request pool: the side
    # engine's, never a second one of that pool.
    with database.side_engine.begin() as conn:
        mark_writer(conn)
        return repository.count_chunks_in_matters(conn, matter_ids)


def preview(
    conn: Connection,
    database: Database,
    current: MatrixSnapshot,
    body: WallIn,
    *,
    may_see: MaySee | None,
    now: datetime,
    lookback_days: int,
) -> dict[str, Any]:
    """What issuing ``body`` would do, computed on a copy of the snapshot; nothing written.
    ``may_see``: the reader's `matter_view`."""
    impact = wall_impact(current, body, now, PREVIEW_WALL_ID)
    visible = [m for m in impact.covered if may_see is None or may_see(m)]
    shown = set(visible)
    lost: dict[str, list[str]] = {}
    for change in impact.changes:
        if change.change == "loses" and change.matter_id in shown:
            lost.setdefault(change.person_id, []).append(change.matter_id)
    conflicts = [
        {"matter_id": matter_id, **hit}
        for matter_id in visible
        for hit in impact.after.adverse_matters(matter_id)
        if may_see is None or (may_see(hit["client_in"]) and may_see(hit["adverse_in"]))
    ]
    report = exposure(
        conn,
        impact.wall.wall_id,
        impact.covered,
        now=now,
        lookback_days=lookback_days,
        snapshot=lambda: impact.after,
        may_see=may_see,
    )
    return {
        "policy_version": current.version,
        "at": iso(impact.at),
        "in_force": impact.in_force,
        "matters": visible,
        "loses": [{"person_id": p, "matters": ms} for p, ms in sorted(lost.items())],
        "gains": [],
        "chunks_to_retag": _chunks_in(database, visible),
        "conflicts": conflicts,
        "exposure": {"lookback_days": lookback_days, **report},
        "partial": len(visible) < len(impact.covered) or report["partial"],
        "matter_details": matter_details(
            impact.after,
            [*visible, *(m for c in conflicts for m in (c["client_in"], c["adverse_in"]))],
            may_see,
        ),
    }
