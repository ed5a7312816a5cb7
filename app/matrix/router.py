"""Conflict-matrix routes: people, source groups, clients, matters, bulk import."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from sqlalchemy import Connection

from app.auth.service import Principal
from app.deps import ConflictsOrAdmin, ConnDep, PolicyTurn, PolicyTx, ResourcesDep
from app.errors import NotFound
from app.matrix import repository as repo
from app.matrix.schemas import (
    ClientImport,
    ClientIn,
    ClientOut,
    GroupImport,
    GroupIn,
    GroupOut,
    ImportOut,
    MatrixImport,
    MatterImport,
    MatterIn,
    MatterOut,
    PartyIn,
    PersonImport,
    PersonIn,
    PersonOut,
)
from app.matrix.service import MatrixResult, apply_matrix
from app.resources import Resources
from app.types import GroupSource, Identifier, IdLookup

router = APIRouter(prefix="/v1", tags=["conflict matrix"])


def _apply(
    conn: Connection, principal: Principal, resources: Resources, action: str, **rows: Any
) -> MatrixResult:
    """One matrix write of a route, by its caller: an admin keeps the matrix; widening who
    sees a walled matter is for the conflicts role only."""
    return apply_matrix(
        conn,
        actor=principal.person_id,
        may_widen_walls=principal.has_any("conflicts"),
        lookback_days=resources.settings.exposure_lookback_days,
        action=action,
        **rows,
    )


@router.put("/people/{person_id}", response_model=PersonOut)
def put_person(
    person_id: Identifier,
    body: PersonIn,
    principal: ConflictsOrAdmin,
    turn: PolicyTurn,
    tx: PolicyTx,
    resources: ResourcesDep,
) -> PersonOut:
    def write(conn: Connection) -> tuple[MatrixResult, repo.KnownPerson | None]:
        # a name left out stays left out: the person keeps theirs (PersonIn)
        person = PersonImport(person_id=person_id, **body.model_dump(exclude_unset=True))
        result = _apply(conn, principal, resources, "person.upsert", people=[person])
        return result, repo.get_person(conn, person_id) if body.name is None else None

    result, stored = tx(write)
    return PersonOut(
        person_id=person_id,
        name=stored.name if stored is not None else body.name or "",
        active=body.active,
        aliases=sorted(set(body.aliases)),
        policy_version=result.policy_version,
    )


@router.get("/people/{person_id}", response_model=PersonOut)
def get_person(person_id: IdLookup, principal: ConflictsOrAdmin, conn: ConnDep) -> PersonOut:
    found = repo.get_person(conn, person_id)
    if found is None:
        raise NotFound("Person", person_id)
    return PersonOut(
        person_id=person_id,
        name=found.name,
        active=found.active,
        aliases=sorted(found.aliases),
    )


@router.put("/groups/{source}/{group_id}", response_model=GroupOut)
def put_group(
    source: GroupSource,
    group_id: Identifier,
    body: GroupIn,
    principal: ConflictsOrAdmin,
    turn: PolicyTurn,
    tx: PolicyTx,
    resources: ResourcesDep,
) -> GroupOut:
    """A source's group by hand (normally synced by its connector): any well-formed source
    name, also one that no connector reads (a pushed document's access list names it)."""
    group = GroupImport(source=source, group_id=group_id, members=body.members)  # folded
    result = tx(
        lambda conn: _apply(
            conn,
            principal,
            resources,
            "group.upsert",
            source_groups=[group],
        )
    )
    return GroupOut(
        source=group.source,
        group_id=group.group_id,
        members=sorted(set(body.members)),
        policy_version=result.policy_version,
    )


@router.put("/clients/{client_id}", response_model=ClientOut)
def put_client(
    client_id: Identifier,
    body: ClientIn,
    principal: ConflictsOrAdmin,
    turn: PolicyTurn,
    tx: PolicyTx,
    resources: ResourcesDep,
) -> ClientOut:
    result = tx(
        lambda conn: _apply(
            conn,
            principal,
            resources,
            "client.upsert",
            clients=[ClientImport(client_id=client_id, **body.model_dump())],
        )
    )
    return ClientOut(
        client_id=client_id,
        name=body.name,
        parent_id=body.parent_id,
        policy_version=result.policy_version,
    )


@router.get("/clients/{client_id}", response_model=ClientOut)
def get_client(client_id: IdLookup, principal: ConflictsOrAdmin, conn: ConnDep) -> ClientOut:
    found = repo.existing_clients(conn, [client_id]).get(client_id)
    if found is None:
        raise NotFound("Client", client_id)
    return ClientOut(client_id=client_id, name=found.name, parent_id=found.parent_id)


@router.put("/matters/{matter_id}", response_model=MatterOut)
def put_matter(
    matter_id: Identifier,
    body: MatterIn,
    principal: ConflictsOrAdmin,
    turn: PolicyTurn,
    tx: PolicyTx,
    resources: ResourcesDep,
) -> MatterOut:
    result = tx(
        lambda conn: _apply(
            conn,
            principal,
            resources,
            "matter.upsert",
            matters=[MatterImport(matter_id=matter_id, **body.model_dump())],
        )
    )
    return MatterOut(
        matter_id=matter_id,
        client_id=body.client_id,
        title=body.title,
        status=body.status,
        parties=body.parties,
        team=sorted(set(body.team)),
        policy_version=result.policy_version,
    )


@router.get("/matters/{matter_id}", response_model=MatterOut)
def get_matter(matter_id: IdLookup, principal: ConflictsOrAdmin, conn: ConnDep) -> MatterOut:
    found = repo.get_matter(conn, matter_id)
    if found is None:
        raise NotFound("Matter", matter_id)
    return MatterOut(
        matter_id=matter_id,
        client_id=found.client_id,
        title=found.title,
        status=found.status,
        parties=[PartyIn(name=n, role=r) for n, r in found.parties],
        team=sorted(found.team),
        wall_group_id=repo.matter_group(conn, matter_id),
    )


@router.post("/matrix/import", response_model=ImportOut)
def import_matrix(
    body: MatrixImport,
    principal: ConflictsOrAdmin,
    turn: PolicyTurn,
    tx: PolicyTx,
    resources: ResourcesDep,
) -> ImportOut:
    result = tx(
        lambda conn: _apply(
            conn,
            principal,
            resources,
            "matrix.import",
            people=body.people,
            clients=body.clients,
            matters=body.matters,
            source_groups=body.groups,  # GroupImport folds source and group id
        )
    )
    return ImportOut(
        policy_version=result.policy_version, changed=result.changed, counts=result.counts
    )
