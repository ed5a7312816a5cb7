"""Wall routes, access explanations and conflict checks."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from app.auth.service import Principal
from app.deps import (
    Conflicts,
    ConnDep,
    PolicyTurn,
    PolicyTx,
    ResourcesDep,
    WallReader,
    WallsTurn,
    require_roles,
)
from app.errors import NotFound
from app.types import Identifier, IdLookup, ShortText
from app.walls import exposure, repository, service
from app.walls.schemas import LiftIn, LiftOut, WallCreated, WallIn, WallList, WallOut

router = APIRouter(prefix="/v1", tags=["walls"])

AccessReader = Annotated[Principal, Depends(require_roles("conflicts", "compliance"))]
RetagReader = Annotated[Principal, Depends(require_roles("conflicts", "admin", "compliance"))]


@router.post("/walls", response_model=WallCreated, status_code=201)
def issue_wall(
    body: WallIn, principal: Conflicts, turn: PolicyTurn, tx: PolicyTx, resources: ResourcesDep
) -> WallCreated:
    lookback_days = resources.settings.exposure_lookback_days
    wall_id, version = tx(
        lambda conn: service.issue_wall(
            conn, body, principal.person_id, lookback_days=lookback_days
        )
    )
    return WallCreated(wall_id=wall_id, policy_version=version)


@router.post("/walls/preview")
def preview_wall(
    body: WallIn, principal: Conflicts, turn: WallsTurn, conn: ConnDep, resources: ResourcesDep
) -> dict[str, Any]:
    """What issuing this wall would do: who loses access to which matters, chunks to re-tag,
    conflicts found, and its exposure. Nothing is written."""
    service.check_wall(conn, body)
    # this request holds a connection of the pool: the matrix comes from the resolver's
    # cache, reloaded on the side engine
    # judged at the database's clock, read with the matrix's stamp (app/db/clock.py)
    snap, now = resources.require_resolver().matrix_now(conn, resources.database)
    return exposure.preview(
        conn,
        resources.database,
        snap,
        body,
        may_see=exposure.matter_view(principal.roles, principal.person_id, snap, now),
        now=now,
        lookback_days=resources.settings.exposure_lookback_days,
    )


@router.get("/walls/{wall_id}/exposure")
def wall_exposure(
    wall_id: str,
    principal: WallReader,
    turn: WallsTurn,
    conn: ConnDep,
    resources: ResourcesDep,
    lookback_days: Annotated[int | None, Query(ge=1, le=3650)] = None,
) -> dict[str, Any]:
    """Who retrieved chunks of the matters this wall protects within the lookback and is
    screened (or no longer admitted) by it."""
    snap, now = resources.require_resolver().matrix_now(conn, resources.database)
    if wall_id not in snap.walls:
        raise NotFound("Wall", wall_id)
    return exposure.wall_report(
        conn,
        snap,
        wall_id,
        roles=principal.roles,
        person_id=principal.person_id,
        lookback_days=lookback_days or resources.settings.exposure_lookback_days,
        now=now,
    )


@router.get("/walls", response_model=WallList)
def list_walls(principal: WallReader, conn: ConnDep, active: bool | None = None) -> WallList:
    return WallList(items=service.list_walls(conn, active))


@router.get("/walls/{wall_id}", response_model=WallOut)
def get_wall(
    wall_id: str, principal: WallReader, conn: ConnDep, resources: ResourcesDep
) -> WallOut:
    wall = service.get_wall(conn, wall_id)
    snap = resources.require_resolver().matrix(conn, resources.database)
    named = [*(wall.covered_matters or ()), *wall.protects.matters]
    # the reader is conflicts or compliance: every matter named, whatever the walls say
    wall.matter_details = exposure.matter_details(snap, named, None)
    return wall


@router.post("/walls/{wall_id}/lift", response_model=LiftOut)
def lift_wall(
    wall_id: str, body: LiftIn, principal: Conflicts, turn: PolicyTurn, tx: PolicyTx
) -> LiftOut:
    version, lifted_at = tx(
        lambda conn: service.lift_wall(conn, wall_id, body, principal.person_id)
    )
    return LiftOut(wall_id=wall_id, policy_version=version, lifted_at=lifted_at)


@router.get("/people/{person_id}/access")
def person_access(
    person_id: IdLookup,
    matter_id: Annotated[Identifier, Query()],
    principal: AccessReader,
    resources: ResourcesDep,
) -> dict[str, Any]:
    # judged at the database's clock, read with the matrix's stamp (app/db/clock.py)
    snap, at = resources.require_resolver().latest_matrix_now(resources.database)
    explained = service.explain_access(snap, person_id, matter_id, at)
    with resources.database.transaction() as conn:
        # a matter whose chunks still carry their old wall group is hidden from everyone
        # (searches find none of it) until the worker has moved them: say so beside the
        # walls' decision, which is what holds once it is done
        explained["retag_pending"] = repository.matter_retag_pending(conn, matter_id)
    return explained


@router.get("/conflicts")
def conflict_check(
    name: Annotated[ShortText, Query(min_length=1)], principal: Conflicts, resources: ResourcesDep
) -> dict[str, Any]:
    snap = resources.require_resolver().latest_matrix(resources.database)
    hits = snap.conflicts(name)
    return {"name": name, "policy_version": snap.version, "matches": hits}


@router.get("/admin/retag")
def retag_status(principal: RetagReader, conn: ConnDep) -> dict[str, Any]:
    pending = repository.retag_queue(conn)
    return {"pending_matters": len(pending), "items": pending}
