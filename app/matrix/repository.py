"""Reads and writes of the conflict-matrix tables (sql/matrix.sql).

The service decides what changed; these functions only read the current state and write the
rows they are given, in the caller's transaction.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from sqlalchemy import Connection

from app.db import sqlfiles


@dataclass
class KnownPerson:
    name: str
    active: bool
    aliases: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class KnownClient:
    name: str
    parent_id: str | None


@dataclass
class KnownMatter:
    client_id: str
    title: str
    status: str
    parties: list[tuple[str, str]] = field(default_factory=list)  # (name, role) in order
    team: set[str] = field(default_factory=set)


class PersonRow(NamedTuple):
    person_id: str
    name: str
    active: bool


class ClientRow(NamedTuple):
    client_id: str
    name: str
    name_norm: str
    parent_id: str | None


class MatterRow(NamedTuple):
    matter_id: str
    client_id: str
    title: str
    status: str


class PartyRow(NamedTuple):
    name: str
    name_norm: str
    role: str


def existing_people(conn: Connection, ids: Iterable[str]) -> dict[str, KnownPerson]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    params = {"ids": wanted}
    out = {
        r.person_id: KnownPerson(r.name, r.active)
        for r in conn.execute(sqlfiles.query("matrix.people_by_id"), params)
    }
    for r in conn.execute(sqlfiles.query("matrix.aliases_of_people"), params):
        out[r.person_id].aliases.add(r.alias)
    return out


def person_inactive(conn: Connection, person_id: str) -> bool:
    """Whether the matrix marks ``person_id`` inactive (someone it does not know is not)."""
    params = {"person_id": person_id}
    return bool(conn.execute(sqlfiles.query("matrix.person_inactive"), params).scalar())


def alias_owners(conn: Connection, aliases: Iterable[str]) -> dict[str, str]:
    wanted = sorted(set(aliases))
    if not wanted:
        return {}
    rows = conn.execute(sqlfiles.query("matrix.alias_owners"), {"aliases": wanted})
    return {r.alias: r.person_id for r in rows}


def existing_clients(conn: Connection, ids: Iterable[str]) -> dict[str, KnownClient]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = conn.execute(sqlfiles.query("matrix.clients_by_id"), {"ids": wanted})
    return {r.client_id: KnownClient(r.name, r.parent_id) for r in rows}


def client_parents(conn: Connection) -> dict[str, str | None]:
    return {r.client_id: r.parent_id for r in conn.execute(sqlfiles.query("matrix.client_parents"))}


def existing_matters(conn: Connection, ids: Iterable[str]) -> dict[str, KnownMatter]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    params = {"ids": wanted}
    out = {
        r.matter_id: KnownMatter(r.client_id, r.title, r.status)
        for r in conn.execute(sqlfiles.query("matrix.matters_by_id"), params)
    }
    for r in conn.execute(sqlfiles.query("matrix.parties_of_matters"), params):
        out[r.matter_id].parties.append((r.name, r.role))
    for r in conn.execute(sqlfiles.query("matrix.team_of_matters"), params):
        out[r.matter_id].team.add(r.person_id)
    return out


def mark_groups_synced(conn: Connection, source: str, group_ids: Sequence[str]) -> None:
    if group_ids:
        conn.execute(
            sqlfiles.query("matrix.mark_groups_synced"),
            {"source": source, "group_ids": list(group_ids)},
        )


def groups_of_source(conn: Connection, source: str) -> list[str]:
    rows = conn.execute(sqlfiles.query("matrix.groups_of_source"), {"source": source})
    return sorted(str(r.group_id) for r in rows)


def existing_groups(
    conn: Connection, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], set[str]]:
    """Members of those (source, group_id) groups that exist; absent groups are left out."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    rows = conn.execute(
        sqlfiles.query("matrix.groups_with_members"),
        {"sources": [s for s, _ in wanted], "group_ids": [g for _, g in wanted]},
    )
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in rows:
        members = out[(r.source, r.group_id)]
        if r.member is not None:
            members.add(r.member)
    return dict(out)


def upsert_people(conn: Connection, rows: Sequence[PersonRow]) -> None:
    if not rows:
        return
    conn.execute(
        sqlfiles.query("matrix.upsert_people"),
        {
            "ids": [r.person_id for r in rows],
            "names": [r.name for r in rows],
            "active": [r.active for r in rows],
        },
    )


def replace_aliases(conn: Connection, aliases_of: Mapping[str, set[str]]) -> None:
    """Each listed person ends with exactly the given aliases."""
    if not aliases_of:
        return
    conn.execute(sqlfiles.query("matrix.delete_aliases_of_people"), {"ids": sorted(aliases_of)})
    pairs = [(a, p) for p, aliases in sorted(aliases_of.items()) for a in sorted(aliases)]
    if pairs:
        conn.execute(
            sqlfiles.query("matrix.insert_aliases"),
            {"aliases": [a for a, _ in pairs], "person_ids": [p for _, p in pairs]},
        )


def upsert_groups(conn: Connection, groups: Mapping[tuple[str, str], set[str] | None]) -> None:
    """Each listed group exists and has exactly the given members, written by hand until a
    sync marks it (mark_groups_synced); a group listed with None is removed (its membership
    is unknown: see apply_matrix)."""
    for (source, group_id), members in sorted(groups.items()):
        key = {"source": source, "group_id": group_id}
        if members is None:
            conn.execute(sqlfiles.query("matrix.delete_source_group"), key)
            continue
        conn.execute(sqlfiles.query("matrix.ensure_source_group"), key)
        conn.execute(sqlfiles.query("matrix.delete_source_group_members"), key)
        if members:
            conn.execute(
                sqlfiles.query("matrix.insert_source_group_members"),
                {**key, "members": sorted(members)},
            )


def upsert_clients(conn: Connection, rows: Sequence[ClientRow]) -> None:
    """One statement per client, in the given order: the caller puts parents first."""
    for row in rows:
        conn.execute(sqlfiles.query("matrix.upsert_client"), row._asdict())


def upsert_matters(conn: Connection, rows: Sequence[MatterRow]) -> None:
    if not rows:
        return
    conn.execute(
        sqlfiles.query("matrix.upsert_matters"),
        {
            "ids": [r.matter_id for r in rows],
            "client_ids": [r.client_id for r in rows],
            "titles": [r.title for r in rows],
            "statuses": [r.status for r in rows],
        },
    )


def replace_parties(conn: Connection, parties: Mapping[str, Sequence[PartyRow]]) -> None:
    """Each listed matter ends with exactly the given parties, in the given order."""
    if not parties:
        return
    conn.execute(sqlfiles.query("matrix.delete_parties_of_matters"), {"ids": sorted(parties)})
    rows = [(m, i, p) for m, plist in sorted(parties.items()) for i, p in enumerate(plist)]
    if rows:
        conn.execute(
            sqlfiles.query("matrix.insert_parties"),
            {
                "matter_ids": [m for m, _, _ in rows],
                "positions": [i for _, i, _ in rows],
                "names": [p.name for _, _, p in rows],
                "names_norm": [p.name_norm for _, _, p in rows],
                "roles": [p.role for _, _, p in rows],
            },
        )


def replace_team(conn: Connection, teams: Mapping[str, set[str]]) -> None:
    """Each listed matter ends with exactly the given team."""
    if not teams:
        return
    conn.execute(sqlfiles.query("matrix.delete_team_of_matters"), {"ids": sorted(teams)})
    pairs = [(m, p) for m, people in sorted(teams.items()) for p in sorted(people)]
    if pairs:
        conn.execute(
            sqlfiles.query("matrix.insert_team"),
            {"matter_ids": [m for m, _ in pairs], "person_ids": [p for _, p in pairs]},
        )


def get_person(conn: Connection, person_id: str) -> KnownPerson | None:
    return existing_people(conn, [person_id]).get(person_id)


def get_matter(conn: Connection, matter_id: str) -> KnownMatter | None:
    return existing_matters(conn, [matter_id]).get(matter_id)


def matter_group(conn: Connection, matter_id: str) -> str | None:
    row = conn.execute(
        sqlfiles.query("matrix.wall_group_of_matter"), {"matter_id": matter_id}
    ).first()
    return str(row.wall_group_id) if row is not None else None


def matters_granting_principals(
    conn: Connection, matter_ids: Iterable[str], principals: Iterable[str]
) -> list[str]:
    matters, names = sorted(set(matter_ids)), sorted(set(principals))
    if not matters or not names:
        return []
    rows = conn.execute(
        sqlfiles.query("matrix.matters_granting_principals"),
        {"matter_ids": matters, "principals": names},
    )
    return [str(r.matter_id) for r in rows]
