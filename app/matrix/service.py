"""Applying matrix changes: one code path for single PUTs and all-or-nothing bulk imports.

Every call validates all references first (422 naming the id), then writes only what
changed. A change that can alter access bumps policy_version once, recomputes the wall
groups of the matters it touches (queuing re-tags) and is logged as a policy event, all in
the caller's transaction. Changes that cannot alter access (a title, a party list) are
logged without a bump.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

from app.errors import Conflict, Unprocessable
from app.matrix import repository as repo
from app.matrix.schemas import ClientImport, GroupImport, MatterImport, PersonImport
from app.walls import groups, policy
from app.walls.names import normalize_name


@dataclass
class MatrixResult:
    policy_version: int
    changed: bool
    counts: dict[str, int] = field(default_factory=dict)


def _duplicates(ids: Sequence[str], what: str, field_name: str) -> None:
    seen: set[str] = set()
    for ident in ids:
        if ident in seen:
            raise Unprocessable(
                "duplicate_id",
                f"{what} {ident!r} appears twice in the request.",
                field=field_name,
                id=ident,
            )
        seen.add(ident)


def _order_parents_first(rows: list[ClientImport]) -> list[ClientImport]:
    by_id = {r.client_id: r for r in rows}
    ordered: list[ClientImport] = []
    placed: set[str] = set()

    def place(row: ClientImport, trail: set[str]) -> None:
        if row.client_id in placed:
            return
        if row.client_id in trail:
            raise Unprocessable(
                "client_cycle",
                f"Client {row.client_id!r} would be its own ancestor.",
                field="clients.parent_id",
                id=row.client_id,
            )
        parent = by_id.get(row.parent_id) if row.parent_id else None
        if parent is not None:
            place(parent, trail | {row.client_id})
        placed.add(row.client_id)
        ordered.append(row)

    for row in rows:
        place(row, set())
    return ordered


def apply_matrix(
    conn: Connection,
    *,
    actor: str,
    people: Sequence[PersonImport] = (),
    clients: Sequence[ClientImport] = (),
    matters: Sequence[MatterImport] = (),
    source_groups: Sequence[GroupImport] = (),
    action: str = "matrix.import",
) -> MatrixResult:
    people, clients, matters = list(people), list(clients), list(matters)
    _duplicates([p.person_id for p in people], "Person", "people.person_id")
    _duplicates([c.client_id for c in clients], "Client", "clients.client_id")
    _duplicates([m.matter_id for m in matters], "Matter", "matters.matter_id")
    _duplicates([f"{g.source}/{g.group_id}" for g in source_groups], "Group", "groups.group_id")

    # --- reference checks (nothing is written before all pass) ---------------------------
    team_ids = {pid for m in matters for pid in m.team}
    known_people = repo.existing_people(conn, {p.person_id for p in people} | team_ids)
    payload_people = {p.person_id for p in people}
    for matter in matters:
        for pid in matter.team:
            if pid not in payload_people and pid not in known_people:
                raise Unprocessable(
                    "unknown_person",
                    f"Team member {pid!r} of matter {matter.matter_id!r} is not a known person.",
                    field="team",
                    id=pid,
                )
    client_refs = {c.parent_id for c in clients if c.parent_id} | {m.client_id for m in matters}
    known_clients = repo.existing_clients(conn, client_refs | {c.client_id for c in clients})
    payload_clients = {c.client_id for c in clients}
    for client in clients:
        if client.parent_id and client.parent_id not in payload_clients | set(known_clients):
            raise Unprocessable(
                "unknown_client",
                f"Parent client {client.parent_id!r} of {client.client_id!r} does not exist.",
                field="parent_id",
                id=client.parent_id,
            )
    for matter in matters:
        if matter.client_id not in payload_clients and matter.client_id not in known_clients:
            raise Unprocessable(
                "unknown_client",
                f"Client {matter.client_id!r} of matter {matter.matter_id!r} does not exist.",
                field="client_id",
                id=matter.client_id,
            )
    ordered_clients = _order_parents_first(clients)
    parent_changes = [
        c
        for c in clients
        if c.client_id in known_clients and known_clients[c.client_id]["parent_id"] != c.parent_id
    ]
    if parent_changes:
        parents = repo.client_parents(conn)
        parents.update({c.client_id: c.parent_id for c in clients})
        for client in parent_changes:
            seen = {client.client_id}
            current = client.parent_id
            while current is not None:
                if current in seen:
                    raise Unprocessable(
                        "client_cycle",
                        f"Making {client.parent_id!r} the parent of {client.client_id!r} "
                        "creates a cycle.",
                        field="parent_id",
                        id=client.client_id,
                    )
                seen.add(current)
                current = parents.get(current)

    # aliases are unique across people
    owners = repo.alias_owners(conn, {a for p in people for a in p.aliases})
    claimed: dict[str, str] = {}
    for person in people:
        for alias in person.aliases:
            if alias in claimed and claimed[alias] != person.person_id:
                raise Conflict(
                    "alias_taken",
                    f"Alias {alias!r} is given to two people.",
                    {"alias": alias},
                )
            claimed[alias] = person.person_id
            owner = owners.get(alias)
            if owner is not None and owner != person.person_id and owner not in payload_people:
                raise Conflict(
                    "alias_taken",
                    f"Alias {alias!r} already belongs to {owner!r}.",
                    {"alias": alias, "person_id": owner},
                )

    # --- diff ------------------------------------------------------------------------------
    events: list[dict[str, Any]] = []
    relevant = False
    affected_matters: set[str] = set()

    people_rows: list[dict[str, Any]] = []
    alias_changes: dict[str, set[str]] = {}
    for person in people:
        before = known_people.get(person.person_id)
        aliases = set(person.aliases)
        if before is None:
            people_rows.append(
                {"person_id": person.person_id, "name": person.name, "active": person.active}
            )
            alias_changes[person.person_id] = aliases
            relevant = True
            events.append(
                {
                    "type": "person",
                    "id": person.person_id,
                    "change": "created",
                    "active": person.active,
                    "aliases": sorted(aliases),
                }
            )
            continue
        if before["name"] != person.name or before["active"] != person.active:
            people_rows.append(
                {"person_id": person.person_id, "name": person.name, "active": person.active}
            )
            if before["active"] != person.active:
                relevant = True
                events.append(
                    {
                        "type": "person",
                        "id": person.person_id,
                        "change": "activated" if person.active else "deactivated",
                    }
                )
            else:
                events.append({"type": "person", "id": person.person_id, "change": "renamed"})
        if before["aliases"] != aliases:
            alias_changes[person.person_id] = aliases
            relevant = True
            events.append(
                {
                    "type": "person",
                    "id": person.person_id,
                    "change": "aliases",
                    "added": sorted(aliases - before["aliases"]),
                    "removed": sorted(before["aliases"] - aliases),
                }
            )

    group_changes: dict[tuple[str, str], set[str]] = {}
    if source_groups:
        before_groups = repo.existing_groups(conn, {(g.source, g.group_id) for g in source_groups})
        for group in source_groups:
            key = (group.source, group.group_id)
            members = set(group.members)
            if before_groups.get(key) != members:
                group_changes[key] = members
                relevant = True
                old = before_groups.get(key, set())
                events.append(
                    {
                        "type": "group",
                        "id": f"{group.source}:group:{group.group_id}",
                        "change": "members",
                        "added": sorted(members - old),
                        "removed": sorted(old - members),
                    }
                )

    client_rows: list[dict[str, Any]] = []
    reparented: list[str] = []
    for client in ordered_clients:
        before = known_clients.get(client.client_id)
        row = {
            "client_id": client.client_id,
            "name": client.name,
            "name_norm": normalize_name(client.name),
            "parent_id": client.parent_id,
        }
        if before is None:
            client_rows.append(row)
            events.append(
                {
                    "type": "client",
                    "id": client.client_id,
                    "change": "created",
                    "parent_id": client.parent_id,
                }
            )
            continue
        if before["name"] != client.name or before["parent_id"] != client.parent_id:
            client_rows.append(row)
            if before["parent_id"] != client.parent_id:
                relevant = True
                reparented.append(client.client_id)
                events.append(
                    {
                        "type": "client",
                        "id": client.client_id,
                        "change": "parent",
                        "from": before["parent_id"],
                        "to": client.parent_id,
                    }
                )
            else:
                events.append({"type": "client", "id": client.client_id, "change": "renamed"})

    known_matters = repo.existing_matters(conn, [m.matter_id for m in matters])
    matter_rows: list[dict[str, Any]] = []
    party_changes: dict[str, list[dict[str, Any]]] = {}
    team_changes: dict[str, set[str]] = {}
    for matter in matters:
        before = known_matters.get(matter.matter_id)
        parties = [
            {"name": p.name, "name_norm": normalize_name(p.name), "role": p.role}
            for p in matter.parties
        ]
        team = set(matter.team)
        row = {
            "matter_id": matter.matter_id,
            "client_id": matter.client_id,
            "title": matter.title,
            "status": matter.status,
        }
        if before is None:
            matter_rows.append(row)
            party_changes[matter.matter_id] = parties
            team_changes[matter.matter_id] = team
            relevant = True
            affected_matters.add(matter.matter_id)
            events.append(
                {
                    "type": "matter",
                    "id": matter.matter_id,
                    "change": "created",
                    "client_id": matter.client_id,
                    "team": sorted(team),
                }
            )
            continue
        if (before["client_id"], before["title"], before["status"]) != (
            matter.client_id,
            matter.title,
            matter.status,
        ):
            matter_rows.append(row)
            if before["client_id"] != matter.client_id:
                relevant = True
                affected_matters.add(matter.matter_id)
                events.append(
                    {
                        "type": "matter",
                        "id": matter.matter_id,
                        "change": "moved",
                        "from": before["client_id"],
                        "to": matter.client_id,
                    }
                )
            else:
                events.append({"type": "matter", "id": matter.matter_id, "change": "details"})
        if before["parties"] != [(p["name"], p["role"]) for p in parties]:
            party_changes[matter.matter_id] = parties
            events.append({"type": "matter", "id": matter.matter_id, "change": "parties"})
        if before["team"] != team:
            team_changes[matter.matter_id] = team
            relevant = True
            events.append(
                {
                    "type": "matter",
                    "id": matter.matter_id,
                    "change": "team",
                    "added": sorted(team - before["team"]),
                    "removed": sorted(before["team"] - team),
                }
            )

    # --- write -------------------------------------------------------------------------------
    repo.upsert_people(conn, people_rows)
    repo.replace_aliases(conn, alias_changes)
    repo.upsert_groups(conn, group_changes)
    repo.upsert_clients(conn, client_rows)
    repo.upsert_matters(conn, matter_rows)
    repo.replace_parties(conn, party_changes)
    repo.replace_team(conn, team_changes)

    counts = {
        "people": len(people_rows)
        + len(set(alias_changes) - {r["person_id"] for r in people_rows}),
        "groups": len(group_changes),
        "clients": len(client_rows),
        "matters": len(
            {r["matter_id"] for r in matter_rows} | set(party_changes) | set(team_changes)
        ),
    }
    if not events:
        return MatrixResult(policy.current_version(conn), False, counts)

    version = policy.bump(conn) if relevant else policy.current_version(conn)
    if reparented:
        affected_matters.update(groups.matters_under_clients(conn, reparented))
    if relevant and affected_matters:
        groups.recompute(conn, affected_matters, version)
    object_type, object_id = _subject(action, events)
    policy.record_change(
        conn,
        actor=actor,
        action=action,
        object_type=object_type,
        object_id=object_id,
        details={"access_relevant": relevant, "counts": counts, "changes": events},
        version=version,
    )
    return MatrixResult(version, True, counts)


def _subject(action: str, events: list[dict[str, Any]]) -> tuple[str, str]:
    ids = {(e["type"], e["id"]) for e in events}
    if len(ids) == 1:
        return next(iter(ids))
    return ("matrix", action)
