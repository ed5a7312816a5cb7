"""The one place that turns a person into SQL predicates.

`resolve_access` gives the allowed wall groups (from the matrix snapshot, at this instant),
the person's source principals and the source ACL ids those principals may read. `apply`
puts both sets into transaction-local settings that the chunks RLS policy reads, so even a
query that forgot the predicate sees nothing else. Nothing else queries chunks for a user.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection

from app.db.engine import Database
from app.walls import repository
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
    """Access as of the policy this transaction sees (never a stale cached snapshot), at
    ``at`` or else at the database's clock, read with that policy version (app/db/clock.py)."""
    version, now = repository.policy_version_at(conn)
    resolution = resolver.resolve(database, person_id, at or now, at_least=version)
    return access_for(conn, resolution)


def allowed_source_acls(conn: Connection, resolution: Resolution) -> tuple[str, ...]:
    if resolution.known and not resolution.active:
        return ()
    return repository.allowed_source_acls(
        conn, resolution.principals, resolution.incomplete_groups
    )


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
    repository.set_allowed_sets(conn, access.wall_groups, access.source_acl_ids)


def visible_chunks(
    conn: Connection, access: Access, chunk_ids: list[str]
) -> list[dict[str, object]]:
    """The chunks among ``chunk_ids`` this person may read now (RLS applied too)."""
    if not chunk_ids or access.sees_nothing:
        return []
    apply(conn, access)
    return repository.visible_chunks(conn, chunk_ids, access.wall_groups, access.source_acl_ids)


def mark_writer(conn: Connection) -> None:
    """Writer mode: the rest of this transaction runs as the role ewall_writer, whose own
    chunks RLS policy lets it pass (it sees every chunk, suppressed ones included). The
    service role holds the writer role without inheriting it, so no setting a session can
    change opens the reading policy; entering the role is the one way past it.

    The rule: mark a transaction a writer only when it WRITES chunks (ingestion, re-tagging,
    the demo loader), or when it COUNTS chunks whatever the reader's own access, for a report
    that must cover every chunk (what a wall would move, in the conflicts partner's wall
    preview and console issue page; an administrator's document or case-law view; the
    loader's summary). Such a count includes documents private to others in the source
    system, so the reader's RLS sets would give a wrong number; it returns numbers only,
    never a chunk's id, text or metadata, and runs in a transaction that returns nothing
    else from chunks. A search, the grounding gate, an audit read, or any read that returns
    chunks never uses it: those set the person's allowed sets with ``apply``.

    Only the modules listed in tests/walls/test_writer_mode_allowlist.py may import or call
    it; the test reads the source tree and fails on any other.
    """
    repository.set_writer_mode(conn)
