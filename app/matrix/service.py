"""Applying matrix changes: one code path for single PUTs and all-or-nothing bulk imports.

Every call validates all references first (422 naming the id), then writes only what
changed. A change that can alter access bumps policy_version once, recomputes the wall
groups of the matters it touches (queuing re-tags) and is logged as a policy event, all in
the caller's transaction. Changes that cannot alter access (a title, a party list) are
logged without a bump.

A change that widens who may see a walled matter (app/matrix/review.py) needs the conflicts
role, as issuing and lifting walls do; its review goes into the policy event either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Connection

from app.errors import AppError, Conflict, Unprocessable
from app.matrix import repository as repo
from app.matrix import review as walled
from app.matrix.schemas import ClientImport, GroupImport, MatterImport, PersonImport
from app.types import principal_key
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
    """The rows with every parent of the import before its children; a cycle is refused.
    Iterative, so a chain of any length is fine (one walk per row, each id placed once)."""
    by_id = {r.client_id: r for r in rows}
    ordered: list[ClientImport] = []
    placed: set[str] = set()
    for row in rows:
        chain: list[ClientImport] = []
        on_chain: set[str] = set()
        current: ClientImport | None = row
        while current is not None and current.client_id not in placed:
            if current.client_id in on_chain:
                raise Unprocessable(
                    "client_cycle",
                    f"Client {current.client_id!r} would be its own ancestor.",
                    field="clients.parent_id",
                    id=current.client_id,
                )
            chain.append(current)
            on_chain.add(current.client_id)
            current = by_id.get(current.parent_id) if current.parent_id else None
        for placed_row in reversed(chain):
            placed.add(placed_row.client_id)
            ordered.append(placed_row)
    return ordered


@dataclass
class _Plan:
    """What a matrix call changes: the rows to write and the events to log."""

    events: list[dict[str, Any]] = field(default_factory=list)
    relevant: bool = False  # some change can alter who may see what
    affected_matters: set[str] = field(default_factory=set)
    reparented: list[str] = field(default_factory=list)
    people_rows: list[repo.PersonRow] = field(default_factory=list)
    alias_changes: dict[str, set[str]] = field(default_factory=dict)
    activated: set[str] = field(default_factory=set)  # people switched from inactive to active
    # a group's new members; None: its membership is unknown now (forgotten)
    group_changes: dict[tuple[str, str], set[str] | None] = field(default_factory=dict)
    client_rows: list[repo.ClientRow] = field(default_factory=list)
    matter_rows: list[repo.MatterRow] = field(default_factory=list)
    party_changes: dict[str, list[repo.PartyRow]] = field(default_factory=dict)
    team_changes: dict[str, set[str]] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        written_people = {r.person_id for r in self.people_rows}
        return {
            "people": len(self.people_rows) + len(set(self.alias_changes) - written_people),
            "groups": len(self.group_changes),
            "clients": len(self.client_rows),
            "matters": len(
                {r.matter_id for r in self.matter_rows}
                | set(self.party_changes)
                | set(self.team_changes)
            ),
        }


def group_imports(
    groups: Iterable[tuple[str, str, Iterable[str] | None]],
) -> tuple[list[GroupImport], list[tuple[str, str]], list[str]]:
    """A source's groups as read (source, id, members; None: unknown) as the matrix holds
    them: the imports, the groups to forget, and the ids it cannot hold. A group the matrix
    cannot hold (an id with "/" or "%", a member with a NUL) is unknown, forgotten when its
    id can be, and never fails the others."""
    imports: list[GroupImport] = []
    forget: list[tuple[str, str]] = []
    refused: list[str] = []
    for source, group_id, members in groups:
        key = (source.lower(), principal_key(group_id))
        try:
            GroupImport(source=key[0], group_id=key[1])  # the id alone
        except ValidationError:
            refused.append(group_id[:200])  # never known: a deny of it admits nobody
            continue
        if members is None:
            forget.append(key)
            continue
        try:
            imports.append(GroupImport(source=key[0], group_id=key[1], members=sorted(members)))
        except ValidationError:
            refused.append(group_id[:200])
            forget.append(key)
    return imports, forget, refused


def apply_matrix(
    conn: Connection,
    *,
    actor: str,
    people: Sequence[PersonImport] = (),
    clients: Sequence[ClientImport] = (),
    matters: Sequence[MatterImport] = (),
    source_groups: Sequence[GroupImport] = (),
    forget_groups: Sequence[tuple[str, str]] = (),
    whole_source: str | None = None,
    action: str = "matrix.import",
    may_widen_walls: bool,
    lookback_days: int = 180,
) -> MatrixResult:
    """``may_widen_walls``: whether the actor may widen who sees a walled matter (the
    conflicts role, or the system itself: demo loads, benches, connector group syncs).
    ``forget_groups``: (source, group id) whose membership could not be read; they are
    removed with their members, so that a deny naming them admits nobody (walls.sql,
    allowed_source_acls) and a grant through them admits nobody, until the next sync.
    ``whole_source``: ``source_groups`` (and ``forget_groups``) are that source's whole
    membership as just read; its other groups are forgotten the same way."""
    people, clients, matters = list(people), list(clients), list(matters)
    _check_unique_ids(people, clients, matters, source_groups)
    # one matrix write at a time: the checks, the diff and the wall review below read the
    # matrix, and a second write deciding from the same state would write the same rows
    # (a unique violation) or be reviewed without the first's change
    # (and the instant its wall review judges at: the database's clock, not this host's)
    _, began = policy.lock_for_change_at(conn)
    # nothing is written before every reference check has passed
    known_people = _check_team_members(conn, people, matters)
    known_clients = _check_client_references(conn, clients, matters)
    _check_no_client_cycles(conn, clients, known_clients)
    _check_aliases(conn, people)

    plan = _Plan()
    _diff_people(plan, people, known_people)
    if whole_source is not None:
        listed = {(g.source, g.group_id) for g in source_groups}
        absent = {
            (whole_source, group_id)
            for group_id in repo.groups_of_source(conn, whole_source)
            if (whole_source, group_id) not in listed
        }
        forget_groups = sorted(set(forget_groups) | absent)
    _diff_groups(conn, plan, source_groups, forget_groups)
    _diff_clients(plan, _order_parents_first(clients), known_clients)
    _diff_matters(conn, plan, matters)
    # the matrix before the write, when the change could move a walled matter's access
    before = (
        walled.matrix_before(conn)
        if plan.affected_matters
        or plan.reparented
        or plan.team_changes
        or plan.alias_changes
        or plan.activated
        or plan.group_changes
        else None
    )
    _write(conn, plan)
    if whole_source is not None:  # written or listed unchanged: the sync holds them now
        repo.mark_groups_synced(conn, whole_source, [g.group_id for g in source_groups])
    review = None
    if before is not None:
        review = walled.review(
            conn,
            before,
            moved_matters=plan.affected_matters,
            reparented=plan.reparented,
            team_matters=plan.team_changes,
            alias_people=plan.alias_changes,
            activated=plan.activated,
            groups=[f"{source}:group:{group_id}" for source, group_id in plan.group_changes],
            now=began,
            lookback_days=lookback_days,
        )
        if review.gains and not may_widen_walls:
            # raised after the write: the caller's transaction rolls all of it back
            gains = review.gains
            raise AppError(
                "forbidden",
                "This change widens who may see a walled matter "
                f"({gains[0].person_id!r} would gain {gains[0].matter_id!r}); "
                "it needs the conflicts role.",
                403,
                {
                    "required_role": "conflicts",
                    "gains": [
                        {"person_id": g.person_id, "matter_id": g.matter_id, "via": g.via}
                        for g in gains[:100]
                    ],
                },
            )
    details = (
        {"walled_access": review.as_details(lookback_days, actor if review.gains else None)}
        if review is not None and review.changes
        else {}
    )
    return _record(conn, plan, actor=actor, action=action, extra=details)


def _check_unique_ids(
    people: Sequence[PersonImport],
    clients: Sequence[ClientImport],
    matters: Sequence[MatterImport],
    source_groups: Sequence[GroupImport],
) -> None:
    _duplicates([p.person_id for p in people], "Person", "people.person_id")
    _duplicates([c.client_id for c in clients], "Client", "clients.client_id")
    _duplicates([m.matter_id for m in matters], "Matter", "matters.matter_id")
    _duplicates([f"{g.source}/{g.group_id}" for g in source_groups], "Group", "groups.group_id")


def _check_team_members(
    conn: Connection, people: Sequence[PersonImport], matters: Sequence[MatterImport]
) -> dict[str, repo.KnownPerson]:
    """Every team member is in the request or already known. Returns the known people among
    the request's people and team members."""
    team_ids = {pid for m in matters for pid in m.team}
    payload_people = {p.person_id for p in people}
    known_people = repo.existing_people(conn, payload_people | team_ids)
    for matter in matters:
        for pid in matter.team:
            if pid not in payload_people and pid not in known_people:
                raise Unprocessable(
                    "unknown_person",
                    f"Team member {pid!r} of matter {matter.matter_id!r} is not a known person.",
                    field="team",
                    id=pid,
                )
    return known_people


def _check_client_references(
    conn: Connection, clients: Sequence[ClientImport], matters: Sequence[MatterImport]
) -> dict[str, repo.KnownClient]:
    """Every parent and every matter's client is in the request or already known. Returns
    the known clients among those and the request's clients."""
    client_refs = {c.parent_id for c in clients if c.parent_id} | {m.client_id for m in matters}
    payload_clients = {c.client_id for c in clients}
    known_clients = repo.existing_clients(conn, client_refs | payload_clients)
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
    return known_clients


def _check_no_client_cycles(
    conn: Connection, clients: Sequence[ClientImport], known_clients: dict[str, repo.KnownClient]
) -> None:
    """A known client that gets a new parent must not become its own ancestor through the
    hierarchy as stored plus this request. (Cycles among new clients are caught when they are
    ordered parents first.)"""
    parent_changes = [
        c
        for c in clients
        if c.client_id in known_clients and known_clients[c.client_id].parent_id != c.parent_id
    ]
    if not parent_changes:
        return
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


def _check_aliases(conn: Connection, people: Sequence[PersonImport]) -> None:
    """An alias belongs to one person: within the request, and against the stored aliases of
    people the request does not redefine."""
    payload_people = {p.person_id for p in people}
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


def _diff_people(
    plan: _Plan, people: Sequence[PersonImport], known_people: dict[str, repo.KnownPerson]
) -> None:
    for person in people:
        before = known_people.get(person.person_id)
        aliases = set(person.aliases)
        # left out: a known person keeps their name, a new one is named by their id
        name = person.name if person.name is not None else before.name if before else (
            person.person_id)
        row = repo.PersonRow(person.person_id, name, person.active)
        if before is None:
            plan.people_rows.append(row)
            plan.alias_changes[person.person_id] = aliases
            plan.relevant = True
            plan.events.append(
                {
                    "type": "person",
                    "id": person.person_id,
                    "change": "created",
                    "active": person.active,
                    "aliases": sorted(aliases),
                }
            )
            continue
        if before.name != name or before.active != person.active:
            plan.people_rows.append(row)
            if before.active != person.active:
                plan.relevant = True
                if person.active:
                    plan.activated.add(person.person_id)
                plan.events.append(
                    {
                        "type": "person",
                        "id": person.person_id,
                        "change": "activated" if person.active else "deactivated",
                    }
                )
            else:
                plan.events.append({"type": "person", "id": person.person_id, "change": "renamed"})
        if before.aliases != aliases:
            plan.alias_changes[person.person_id] = aliases
            plan.relevant = True
            plan.events.append(
                {
                    "type": "person",
                    "id": person.person_id,
                    "change": "aliases",
                    "added": sorted(aliases - before.aliases),
                    "removed": sorted(before.aliases - aliases),
                }
            )


def _diff_groups(
    conn: Connection,
    plan: _Plan,
    source_groups: Sequence[GroupImport],
    forget: Sequence[tuple[str, str]] = (),
) -> None:
    if not source_groups and not forget:
        return
    wanted = {(g.source, g.group_id) for g in source_groups} | set(forget)
    before_groups = repo.existing_groups(conn, wanted)
    for key in sorted(set(forget) & set(before_groups)):
        plan.group_changes[key] = None
        plan.relevant = True
        plan.events.append(
            {
                "type": "group",
                "id": f"{key[0]}:group:{key[1]}",
                "change": "membership_unknown",
                "removed": sorted(before_groups[key]),
            }
        )
    for group in source_groups:
        key = (group.source, group.group_id)
        members = set(group.members)
        if before_groups.get(key) == members:
            continue
        plan.group_changes[key] = members
        plan.relevant = True
        old = before_groups.get(key, set())
        plan.events.append(
            {
                "type": "group",
                "id": f"{group.source}:group:{group.group_id}",
                "change": "members",
                "added": sorted(members - old),
                "removed": sorted(old - members),
            }
        )


def _diff_clients(
    plan: _Plan,
    ordered_clients: Sequence[ClientImport],
    known_clients: dict[str, repo.KnownClient],
) -> None:
    for client in ordered_clients:
        before = known_clients.get(client.client_id)
        row = repo.ClientRow(
            client.client_id, client.name, normalize_name(client.name), client.parent_id
        )
        if before is None:
            plan.client_rows.append(row)
            plan.events.append(
                {
                    "type": "client",
                    "id": client.client_id,
                    "change": "created",
                    "parent_id": client.parent_id,
                }
            )
            continue
        if before.name == client.name and before.parent_id == client.parent_id:
            continue
        plan.client_rows.append(row)
        if before.parent_id != client.parent_id:
            plan.relevant = True
            plan.reparented.append(client.client_id)
            plan.events.append(
                {
                    "type": "client",
                    "id": client.client_id,
                    "change": "parent",
                    "from": before.parent_id,
                    "to": client.parent_id,
                }
            )
        else:
            plan.events.append({"type": "client", "id": client.client_id, "change": "renamed"})


def _diff_matters(conn: Connection, plan: _Plan, matters: Sequence[MatterImport]) -> None:
    known_matters = repo.existing_matters(conn, [m.matter_id for m in matters])
    for matter in matters:
        before = known_matters.get(matter.matter_id)
        parties = [repo.PartyRow(p.name, normalize_name(p.name), p.role) for p in matter.parties]
        team = set(matter.team)
        row = repo.MatterRow(matter.matter_id, matter.client_id, matter.title, matter.status)
        if before is None:
            plan.matter_rows.append(row)
            plan.party_changes[matter.matter_id] = parties
            plan.team_changes[matter.matter_id] = team
            plan.relevant = True
            plan.affected_matters.add(matter.matter_id)
            plan.events.append(
                {
                    "type": "matter",
                    "id": matter.matter_id,
                    "change": "created",
                    "client_id": matter.client_id,
                    "team": sorted(team),
                }
            )
            continue
        if (before.client_id, before.title, before.status) != (
            matter.client_id,
            matter.title,
            matter.status,
        ):
            plan.matter_rows.append(row)
            if before.client_id != matter.client_id:
                plan.relevant = True
                plan.affected_matters.add(matter.matter_id)
                plan.events.append(
                    {
                        "type": "matter",
                        "id": matter.matter_id,
                        "change": "moved",
                        "from": before.client_id,
                        "to": matter.client_id,
                    }
                )
            else:
                plan.events.append({"type": "matter", "id": matter.matter_id, "change": "details"})
        if before.parties != [(p.name, p.role) for p in parties]:
            plan.party_changes[matter.matter_id] = parties
            plan.events.append({"type": "matter", "id": matter.matter_id, "change": "parties"})
        if before.team != team:
            plan.team_changes[matter.matter_id] = team
            plan.relevant = True
            plan.events.append(
                {
                    "type": "matter",
                    "id": matter.matter_id,
                    "change": "team",
                    "added": sorted(team - before.team),
                    "removed": sorted(before.team - team),
                }
            )


def _write(conn: Connection, plan: _Plan) -> None:
    repo.upsert_people(conn, plan.people_rows)
    repo.replace_aliases(conn, plan.alias_changes)
    repo.upsert_groups(conn, plan.group_changes)
    repo.upsert_clients(conn, plan.client_rows)
    repo.upsert_matters(conn, plan.matter_rows)
    repo.replace_parties(conn, plan.party_changes)
    repo.replace_team(conn, plan.team_changes)


def _record(
    conn: Connection, plan: _Plan, *, actor: str, action: str, extra: dict[str, Any]
) -> MatrixResult:
    """Bump the policy version when access may change, recompute the wall groups of the
    matters concerned and log the change as one policy event."""
    counts = plan.counts()
    if not plan.events:
        return MatrixResult(policy.current_version(conn), False, counts)
    version, at = policy.bump_at(conn) if plan.relevant else policy.current_version_at(conn)
    affected = set(plan.affected_matters)
    if plan.reparented:
        affected.update(groups.matters_under_clients(conn, plan.reparented))
    if plan.relevant and affected:
        groups.recompute(conn, affected, version)
    object_type, object_id = _subject(action, plan.events)
    policy.record_change(
        conn,
        actor=actor,
        action=action,
        object_type=object_type,
        object_id=object_id,
        details={
            "access_relevant": plan.relevant,
            "counts": counts,
            "changes": plan.events,
            **extra,
        },
        version=version,
        at=at,
    )
    return MatrixResult(version, True, counts)


def _subject(action: str, events: list[dict[str, Any]]) -> tuple[str, str]:
    ids = {(e["type"], e["id"]) for e in events}
    if len(ids) == 1:
        return next(iter(ids))
    return ("matrix", action)
