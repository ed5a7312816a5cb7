"""Issuing, lifting and reading walls; access explanations and conflict checks."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.errors import Conflict, NotFound, Unprocessable
from app.walls import exposure, groups, policy, repository
from app.walls.graph import MatrixSnapshot
from app.walls.repository import NewWall, WallRow
from app.walls.resolution import load_snapshot
from app.walls.schemas import LiftIn, Protects, WallIn, WallOut


def _missing(conn: Connection, what: str, ids: list[str]) -> list[str]:
    if not ids:
        return []
    return sorted(set(ids) - repository.known_ids(conn, what, ids))


def check_wall(conn: Connection, body: WallIn) -> None:
    if not body.protects.matters and not body.protects.clients:
        raise Unprocessable(
            "protects_nothing",
            "A wall must protect at least one matter or client.",
            field="protects",
        )
    if body.kind == "exclusionary":
        if body.allowed:
            raise Unprocessable(
                "invalid_wall", "Only inclusionary walls list allowed people.", field="allowed"
            )
        if not body.screened:
            raise Unprocessable(
                "invalid_wall",
                "An exclusionary wall must screen at least one person.",
                field="screened",
            )
    elif body.screened:
        raise Unprocessable(
            "invalid_wall", "Only exclusionary walls list screened people.", field="screened"
        )
    if (
        body.effective_from is not None
        and body.effective_until is not None
        and body.effective_until <= body.effective_from
    ):
        raise Unprocessable(
            "invalid_window",
            "effective_until must be later than effective_from.",
            field="effective_until",
        )
    for field_name, ids, what in (
        ("protects.matters", body.protects.matters, "matter"),
        ("protects.clients", body.protects.clients, "client"),
        ("screened", body.screened, "person"),
        ("allowed", body.allowed, "person"),
    ):
        missing = _missing(conn, what, list(ids))
        if missing:
            named = ", ".join(missing[:10]) + (
                f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            )  # the message stays a line; details.ids has them all
            raise Unprocessable(
                f"unknown_{what}",
                f"Unknown {what}{'s' if len(missing) > 1 else ''}: {named}.",
                field=field_name,
                id=missing[0],
                ids=missing,
            )


def issue_wall(
    conn: Connection, body: WallIn, actor: str, *, lookback_days: int = 180
) -> tuple[str, int]:
    check_wall(conn, body)
    wall_id = f"W-{uuid.uuid4().hex[:12]}"
    created_at = repository.insert_wall(
        conn,
        NewWall(
            wall_id=wall_id,
            kind=body.kind,
            title=body.title,
            reason=body.reason,
            include_team=body.include_team if body.kind == "inclusionary" else True,
            effective_from=body.effective_from,
            effective_until=body.effective_until,
            created_by=actor,
        ),
    )
    repository.insert_protected(
        conn, wall_id, sorted(set(body.protects.matters)), sorted(set(body.protects.clients))
    )
    members = [(p, "screened") for p in set(body.screened)]
    members += [(p, "allowed") for p in set(body.allowed)]
    repository.insert_wall_people(conn, wall_id, sorted(members, key=lambda m: m[0]))
    # who already read what the wall now protects: the matrix as this transaction sees it,
    # the new wall included
    # (the resolution snapshot suffices: it decides who the wall denies, insiders included)
    report = exposure.exposure(
        conn,
        wall_id,
        _covered(conn, wall_id),
        now=created_at,  # the database's clock, not this host's
        lookback_days=lookback_days,
        snapshot=lambda: load_snapshot(conn, full=False),
    )
    version = _regroup_and_record(
        conn,
        wall_id,
        actor=actor,
        action="wall.issued",
        reason=body.reason,
        details={
            "kind": body.kind,
            "title": body.title,
            "protects": body.protects.model_dump(),
            "screened": sorted(set(body.screened)),
            "allowed": sorted(set(body.allowed)),
            "include_team": body.include_team,
            "effective_from": body.effective_from.isoformat() if body.effective_from else None,
            "effective_until": (body.effective_until.isoformat() if body.effective_until else None),
            "exposure": exposure.summary(report, lookback_days),
        },
    )
    return wall_id, version


def _covered(conn: Connection, wall_id: str) -> list[str]:
    direct = [m for _, m in repository.protected_matters(conn, [wall_id])]
    client_ids = [c for _, c in repository.protected_clients(conn, [wall_id])]
    return sorted(set(direct) | set(groups.matters_under_clients(conn, client_ids)))


def _regroup_and_record(
    conn: Connection,
    wall_id: str,
    *,
    actor: str,
    action: str,
    reason: str,
    details: dict[str, Any],
) -> int:
    """A wall was issued or lifted: bump the policy, move the matters it covers to their new
    groups (queuing re-tags) and log the change, all in the caller's transaction."""
    version, at = policy.bump_at(conn)
    covered = _covered(conn, wall_id)
    changed = groups.recompute(conn, covered, version)
    policy.record_change(
        conn,
        actor=actor,
        action=action,
        object_type="wall",
        object_id=wall_id,
        reason=reason,
        details={**details, "covered_matters": len(covered), "regrouped_matters": len(changed)},
        version=version,
        at=at,
    )
    return version


def lift_wall(conn: Connection, wall_id: str, body: LiftIn, actor: str) -> tuple[int, datetime]:
    row = repository.lock_wall(conn, wall_id)
    if row is None:
        raise NotFound("Wall", wall_id)
    if row.lifted_at is not None:
        raise Conflict(
            "already_lifted",
            f"Wall {wall_id!r} was already lifted at {row.lifted_at.isoformat()}.",
            {"wall_id": wall_id},
        )
    # the database's clock, like the instant every search judges the wall at
    lifted_at = repository.lift_wall(conn, wall_id, lifted_by=actor, reason=body.reason)
    version = _regroup_and_record(
        conn, wall_id, actor=actor, action="wall.lifted", reason=body.reason, details={}
    )
    return version, lifted_at


def _wall_out(
    conn: Connection, rows: list[WallRow], *, with_coverage: bool = False
) -> list[WallOut]:
    if not rows:
        return []
    ids = [r.wall_id for r in rows]
    pm: dict[str, list[str]] = {i: [] for i in ids}
    pc: dict[str, list[str]] = {i: [] for i in ids}
    scr: dict[str, list[str]] = {i: [] for i in ids}
    alw: dict[str, list[str]] = {i: [] for i in ids}
    for wall_id, matter_id in repository.protected_matters(conn, ids):
        pm[wall_id].append(matter_id)
    for wall_id, client_id in repository.protected_clients(conn, ids):
        pc[wall_id].append(client_id)
    for wall_id, person_id, role in repository.wall_people(conn, ids):
        (scr if role == "screened" else alw)[wall_id].append(person_id)
    return [
        WallOut(
            wall_id=r.wall_id,
            kind=r.kind,
            title=r.title,
            reason=r.reason,
            protects=Protects(matters=sorted(pm[r.wall_id]), clients=sorted(pc[r.wall_id])),
            screened=sorted(scr[r.wall_id]),
            allowed=sorted(alw[r.wall_id]),
            include_team=r.include_team,
            effective_from=r.effective_from,
            effective_until=r.effective_until,
            created_by=r.created_by,
            created_at=r.created_at,
            lifted_at=r.lifted_at,
            lifted_by=r.lifted_by,
            lift_reason=r.lift_reason,
            active=r.active,  # judged by the database's clock (sql/walls.sql)
            covered_matters=_covered(conn, r.wall_id) if with_coverage else None,
        )
        for r in rows
    ]


def get_wall(conn: Connection, wall_id: str) -> WallOut:
    row = repository.wall(conn, wall_id)
    if row is None:
        raise NotFound("Wall", wall_id)
    return _wall_out(conn, [row], with_coverage=True)[0]


def list_walls(conn: Connection, active: bool | None) -> list[WallOut]:
    items = _wall_out(conn, repository.all_walls(conn))
    if active is not None:
        items = [w for w in items if w.active == active]
    return items


def explain_access(
    snap: MatrixSnapshot, person_id: str, matter_id: str, at: datetime
) -> dict[str, Any]:
    if matter_id not in snap.matters:
        raise NotFound("Matter", matter_id)
    return snap.explain(person_id, matter_id, at)
