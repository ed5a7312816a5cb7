"""The one place that turns a person into SQL predicates.

`resolve_access` gives the allowed wall groups (from the matrix snapshot, at this instant),
the person's source principals and the source ACL ids those principals may read. `apply`
puts both sets into transaction-local settings that the chunks RLS policy reads, so even a
query that forgot the predicate sees nothing else. Nothing else queries chunks for a user.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, text

from app.db import sqlfiles
from app.db.engine import Database
from app.walls.resolution import AccessResolver, Resolution


@dataclass(frozen=True)
class Access:
    person_id: str
    policy_version: int
    at: datetime
    wall_groups: tuple[str, ...]
    principals: tuple[str, ...]
    source_acl_ids: tuple[str, ...]
    active: bool

    @property
    def sees_nothing(self) -> bool:
        return not self.wall_groups or not self.source_acl_ids


def current_access(
    conn: Connection,
    resolver: AccessResolver,
    database: Database,
    person_id: str,
    at: datetime | None = None,
) -> Access:
    """Access as of the policy this transaction sees (never a stale cached snapshot)."""
    version = int(conn.execute(text("SELECT version FROM policy_state WHERE id = 1")).scalar_one())
    resolution = resolver.resolve(database, person_id, at or datetime.now(UTC), at_least=version)
    return access_for(conn, resolution)


def allowed_source_acls(conn: Connection, resolution: Resolution) -> tuple[str, ...]:
    if resolution.known and not resolution.active:
        return ()
    ids = conn.execute(
        sqlfiles.query("walls.allowed_source_acls"), {"principals": list(resolution.principals)}
    ).scalar_one()
    return tuple(ids)


def access_for(conn: Connection, resolution: Resolution) -> Access:
    return Access(
        person_id=resolution.person_id,
        policy_version=resolution.policy_version,
        at=resolution.at,
        wall_groups=resolution.wall_groups,
        principals=resolution.principals,
        source_acl_ids=allowed_source_acls(conn, resolution),
        active=resolution.active or not resolution.known,
    )


def apply(conn: Connection, access: Access) -> None:
    """Transaction-local RLS settings (SET LOCAL semantics, safe under poolers)."""
    conn.execute(
        text(
            "SELECT set_config('ewall.allowed_wall_groups', CAST(:groups AS text[])::text, true),"
            " set_config('ewall.allowed_source_acls', CAST(:acls AS text[])::text, true)"
        ),
        {"groups": list(access.wall_groups), "acls": list(access.source_acl_ids)},
    )


def visible_chunks(
    conn: Connection, access: Access, chunk_ids: list[str]
) -> list[dict[str, object]]:
    """The chunks among ``chunk_ids`` this person may read now (RLS applied too)."""
    if not chunk_ids or access.sees_nothing:
        return []
    apply(conn, access)
    rows = conn.execute(
        sqlfiles.query("walls.visible_chunks"),
        {
            "chunk_ids": chunk_ids,
            "wall_groups": list(access.wall_groups),
            "source_acl_ids": list(access.source_acl_ids),
        },
    ).mappings()
    return [dict(r) for r in rows]
