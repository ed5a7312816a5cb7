"""Queries of the conflict-matrix tables (SQLAlchemy Core)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, delete, select
from sqlalchemy.dialects.postgresql import insert

from app.db.schema import (
    clients,
    matter_parties,
    matter_team,
    matters,
    people,
    person_aliases,
    source_group_members,
    source_groups,
)


def existing_people(conn: Connection, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    ids = list(set(ids))
    if not ids:
        return {}
    out = {
        r.person_id: {"name": r.name, "active": r.active, "aliases": set()}
        for r in conn.execute(select(people).where(people.c.person_id.in_(ids)))
    }
    for r in conn.execute(select(person_aliases).where(person_aliases.c.person_id.in_(ids))):
        out[r.person_id]["aliases"].add(r.alias)
    return out


def alias_owners(conn: Connection, aliases: Iterable[str]) -> dict[str, str]:
    aliases = list(set(aliases))
    if not aliases:
        return {}
    rows = conn.execute(select(person_aliases).where(person_aliases.c.alias.in_(aliases)))
    return {r.alias: r.person_id for r in rows}


def existing_clients(conn: Connection, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    ids = list(set(ids))
    if not ids:
        return {}
    rows = conn.execute(select(clients).where(clients.c.client_id.in_(ids)))
    return {r.client_id: {"name": r.name, "parent_id": r.parent_id} for r in rows}


def client_parents(conn: Connection) -> dict[str, str | None]:
    return {
        r.client_id: r.parent_id
        for r in conn.execute(select(clients.c.client_id, clients.c.parent_id))
    }


def existing_matters(conn: Connection, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    ids = list(set(ids))
    if not ids:
        return {}
    out: dict[str, dict[str, Any]] = {
        r.matter_id: {
            "client_id": r.client_id,
            "title": r.title,
            "status": r.status,
            "parties": [],
            "team": set(),
        }
        for r in conn.execute(select(matters).where(matters.c.matter_id.in_(ids)))
    }
    for r in conn.execute(
        select(matter_parties)
        .where(matter_parties.c.matter_id.in_(ids))
        .order_by(matter_parties.c.matter_id, matter_parties.c.position)
    ):
        out[r.matter_id]["parties"].append((r.name, r.role))
    for r in conn.execute(select(matter_team).where(matter_team.c.matter_id.in_(ids))):
        out[r.matter_id]["team"].add(r.person_id)
    return out


def existing_groups(
    conn: Connection, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], set[str]]:
    keys = list(set(keys))
    if not keys:
        return {}
    sources = sorted({s for s, _ in keys})
    out: dict[tuple[str, str], set[str]] = {}
    wanted = set(keys)
    for r in conn.execute(select(source_groups).where(source_groups.c.source.in_(sources))):
        if (r.source, r.group_id) in wanted:
            out[(r.source, r.group_id)] = set()
    members: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in conn.execute(
        select(source_group_members).where(source_group_members.c.source.in_(sources))
    ):
        if (r.source, r.group_id) in out:
            members[(r.source, r.group_id)].add(r.member)
    for key in out:
        out[key] = members.get(key, set())
    return out


def upsert_people(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    if not rows:
        return
    stmt = insert(people).values([{k: r[k] for k in ("person_id", "name", "active")} for r in rows])
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=[people.c.person_id],
            set_={
                "name": stmt.excluded.name,
                "active": stmt.excluded.active,
                "updated_at": stmt.excluded.updated_at,
            },
        )
    )


def replace_aliases(conn: Connection, person_aliases_map: dict[str, set[str]]) -> None:
    if not person_aliases_map:
        return
    conn.execute(
        delete(person_aliases).where(person_aliases.c.person_id.in_(list(person_aliases_map)))
    )
    values = [
        {"alias": a, "person_id": p}
        for p, aliases in sorted(person_aliases_map.items())
        for a in sorted(aliases)
    ]
    if values:
        conn.execute(insert(person_aliases), values)


def upsert_groups(conn: Connection, groups: dict[tuple[str, str], set[str]]) -> None:
    if not groups:
        return
    for (source, group_id), members in sorted(groups.items()):
        conn.execute(
            insert(source_groups).values(source=source, group_id=group_id).on_conflict_do_nothing()
        )
        conn.execute(
            delete(source_group_members).where(
                (source_group_members.c.source == source)
                & (source_group_members.c.group_id == group_id)
            )
        )
        if members:
            conn.execute(
                insert(source_group_members),
                [{"source": source, "group_id": group_id, "member": m} for m in sorted(members)],
            )


def upsert_clients(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    for row in rows:  # parents first: the caller orders them
        stmt = insert(clients).values(**row)
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=[clients.c.client_id],
                set_={
                    "name": stmt.excluded.name,
                    "name_norm": stmt.excluded.name_norm,
                    "parent_id": stmt.excluded.parent_id,
                    "updated_at": stmt.excluded.updated_at,
                },
            )
        )


def upsert_matters(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    if not rows:
        return
    for start in range(0, len(rows), 5000):
        part = rows[start : start + 5000]
        stmt = insert(matters).values(
            [{k: r[k] for k in ("matter_id", "client_id", "title", "status")} for r in part]
        )
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=[matters.c.matter_id],
                set_={
                    "client_id": stmt.excluded.client_id,
                    "title": stmt.excluded.title,
                    "status": stmt.excluded.status,
                    "updated_at": stmt.excluded.updated_at,
                },
            )
        )


def replace_parties(conn: Connection, parties: dict[str, list[dict[str, Any]]]) -> None:
    if not parties:
        return
    conn.execute(delete(matter_parties).where(matter_parties.c.matter_id.in_(list(parties))))
    values = [
        {"matter_id": m, "position": i, **p}
        for m, plist in sorted(parties.items())
        for i, p in enumerate(plist)
    ]
    if values:
        conn.execute(insert(matter_parties), values)


def replace_team(conn: Connection, teams: dict[str, set[str]]) -> None:
    if not teams:
        return
    conn.execute(delete(matter_team).where(matter_team.c.matter_id.in_(list(teams))))
    values = [
        {"matter_id": m, "person_id": p} for m, ps in sorted(teams.items()) for p in sorted(ps)
    ]
    if values:
        conn.execute(insert(matter_team), values)


def get_person(conn: Connection, person_id: str) -> dict[str, Any] | None:
    found = existing_people(conn, [person_id])
    return found.get(person_id)


def get_matter(conn: Connection, matter_id: str) -> dict[str, Any] | None:
    return existing_matters(conn, [matter_id]).get(matter_id)


def matter_group(conn: Connection, matter_id: str) -> str | None:
    from app.db.schema import matter_wall_groups

    row = conn.execute(
        select(matter_wall_groups.c.wall_group_id).where(
            matter_wall_groups.c.matter_id == matter_id
        )
    ).first()
    return row[0] if row is not None else None
