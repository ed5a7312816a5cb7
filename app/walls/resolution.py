"""Per-query resolution: a person -> allowed wall groups and source principals, now.

The matrix snapshot is read in ONE repeatable-read transaction together with its
policy_version. Resolutions are cached only under (policy_version, person) and only until
the next effective_from / effective_until boundary of any wall, so a wall that starts or
ends needs no write. The search statement re-checks policy_version in its own snapshot and
the caller retries on a mismatch: resolution and query always describe the same state.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, text

from app.db.engine import Database
from app.settings import Settings
from app.walls.graph import Client, MatrixSnapshot, Matter, Party, Person, Wall


@dataclass(frozen=True)
class Resolution:
    person_id: str
    policy_version: int
    at: datetime
    wall_groups: tuple[str, ...]
    principals: tuple[str, ...]
    valid_until: datetime | None
    known: bool
    active: bool


def load_snapshot(conn: Connection) -> MatrixSnapshot:
    """Read the whole matrix; the caller provides a repeatable-read transaction."""
    version = int(conn.execute(text("SELECT version FROM policy_state WHERE id = 1")).scalar_one())
    snap = MatrixSnapshot(version=version)
    for r in conn.execute(text("SELECT person_id, name, active FROM people")):
        snap.people[r.person_id] = Person(r.person_id, r.name, r.active)
    aliases: dict[str, set[str]] = defaultdict(set)
    for r in conn.execute(text("SELECT person_id, alias FROM person_aliases")):
        aliases[r.person_id].add(r.alias)
    snap.aliases = {k: frozenset(v) for k, v in aliases.items()}
    members: dict[str, set[str]] = defaultdict(set)
    for r in conn.execute(text("SELECT source, group_id, member FROM source_group_members")):
        members[f"{r.source}:group:{r.group_id}"].add(r.member)
    snap.group_members = {k: frozenset(v) for k, v in members.items()}
    for r in conn.execute(text("SELECT client_id, name, parent_id FROM clients")):
        snap.clients[r.client_id] = Client(r.client_id, r.name, r.parent_id)
    for r in conn.execute(text("SELECT matter_id, client_id, title, status FROM matters")):
        snap.matters[r.matter_id] = Matter(r.matter_id, r.client_id, r.title, r.status)
    parties: dict[str, list[Party]] = defaultdict(list)
    for r in conn.execute(
        text(
            "SELECT matter_id, name, name_norm, role FROM matter_parties "
            "ORDER BY matter_id, position"
        )
    ):
        parties[r.matter_id].append(Party(r.name, r.name_norm, r.role))
    snap.parties = {k: tuple(v) for k, v in parties.items()}
    team: dict[str, set[str]] = defaultdict(set)
    for r in conn.execute(text("SELECT matter_id, person_id FROM matter_team")):
        team[r.matter_id].add(r.person_id)
    snap.team = {k: frozenset(v) for k, v in team.items()}

    prot_m: dict[str, set[str]] = defaultdict(set)
    for r in conn.execute(text("SELECT wall_id, matter_id FROM wall_protected_matters")):
        prot_m[r.wall_id].add(r.matter_id)
    prot_c: dict[str, set[str]] = defaultdict(set)
    for r in conn.execute(text("SELECT wall_id, client_id FROM wall_protected_clients")):
        prot_c[r.wall_id].add(r.client_id)
    screened: dict[str, set[str]] = defaultdict(set)
    allowed: dict[str, set[str]] = defaultdict(set)
    for r in conn.execute(text("SELECT wall_id, person_id, role FROM wall_people")):
        (screened if r.role == "screened" else allowed)[r.wall_id].add(r.person_id)
    for r in conn.execute(
        text(
            "SELECT wall_id, kind, title, include_team, effective_from, effective_until, "
            "lifted_at FROM walls"
        )
    ):
        snap.walls[r.wall_id] = Wall(
            wall_id=r.wall_id,
            kind=r.kind,
            title=r.title,
            include_team=r.include_team,
            effective_from=r.effective_from,
            effective_until=r.effective_until,
            lifted=r.lifted_at is not None,
            protected_matters=frozenset(prot_m.get(r.wall_id, ())),
            protected_clients=frozenset(prot_c.get(r.wall_id, ())),
            screened=frozenset(screened.get(r.wall_id, ())),
            allowed=frozenset(allowed.get(r.wall_id, ())),
        )
    for r in conn.execute(text("SELECT wall_group_id, wall_ids FROM wall_groups")):
        snap.groups[r.wall_group_id] = frozenset(r.wall_ids)
    for r in conn.execute(text("SELECT matter_id, wall_group_id FROM matter_wall_groups")):
        snap.matter_groups[r.matter_id] = r.wall_group_id
    return snap


def read_snapshot(database: Database) -> MatrixSnapshot:
    with (
        database.engine.connect().execution_options(isolation_level="REPEATABLE READ") as conn,
        conn.begin(),
    ):
        conn.execute(text("SET TRANSACTION READ ONLY"))
        return load_snapshot(conn)


class AccessResolver:
    """Thread-safe cache of the latest snapshot and of per-person resolutions."""

    def __init__(self, settings: Settings) -> None:
        self.use_cache = settings.resolution_cache
        self._lock = threading.Lock()
        self._snapshot: MatrixSnapshot | None = None
        self._cache: dict[str, Resolution] = {}

    def invalidate(self) -> None:
        with self._lock:
            self._snapshot = None
            self._cache.clear()

    def snapshot(self, database: Database, at_least: int | None = None) -> MatrixSnapshot:
        """The cached snapshot, reloaded when a newer policy_version is known to exist."""
        with self._lock:
            snap = self._snapshot
        if snap is not None and self.use_cache and (at_least is None or snap.version >= at_least):
            return snap
        fresh = read_snapshot(database)
        with self._lock:
            if self._snapshot is None or fresh.version >= self._snapshot.version:
                if self._snapshot is None or fresh.version != self._snapshot.version:
                    self._cache.clear()
                self._snapshot = fresh
        return fresh

    def resolve_with(self, snap: MatrixSnapshot, person_id: str, at: datetime) -> Resolution:
        if self.use_cache:
            with self._lock:
                hit = self._cache.get(person_id)
            if (
                hit is not None
                and hit.policy_version == snap.version
                and hit.at <= at
                and (hit.valid_until is None or at < hit.valid_until)
            ):
                return hit
        person = snap.people.get(person_id)
        # the interval [start, next boundary) in which this answer holds
        res = Resolution(
            person_id=person_id,
            policy_version=snap.version,
            at=at,
            wall_groups=tuple(sorted(snap.allowed_groups(person_id, at))),
            principals=tuple(sorted(snap.principals(person_id))),
            valid_until=snap.next_boundary(at),
            known=person is not None,
            active=person is not None and person.active,
        )
        if self.use_cache:
            with self._lock:
                if len(self._cache) > 50_000:
                    self._cache.clear()
                self._cache[person_id] = res
        return res

    def resolve(
        self, database: Database, person_id: str, at: datetime, at_least: int | None = None
    ) -> Resolution:
        return self.resolve_with(self.snapshot(database, at_least), person_id, at)
