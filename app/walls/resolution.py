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

from sqlalchemy import Connection, Engine

from app.db.engine import Database, begin_snapshot
from app.walls import repository
from app.walls.graph import Client, MatrixSnapshot, Matter, Party, Person, Wall
from app.walls.names import normalize_name


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
    # groups whose members include, at any depth, a group ewall holds no members for (the
    # snapshot's set, shared): a deny of one admits nobody
    incomplete_groups: frozenset[str] = frozenset()


def _walls(conn: Connection, snap: MatrixSnapshot, *, with_protects: bool) -> None:
    prot_m: dict[str, set[str]] = defaultdict(set)
    prot_c: dict[str, set[str]] = defaultdict(set)
    if with_protects:
        for wall_id, matter_id in repository.snapshot_rows(conn, "protected_matters"):
            prot_m[wall_id].add(matter_id)
        for wall_id, client_id in repository.snapshot_rows(conn, "protected_clients"):
            prot_c[wall_id].add(client_id)
    screened: dict[str, set[str]] = defaultdict(set)
    allowed: dict[str, set[str]] = defaultdict(set)
    for wall_id, person_id, role in repository.snapshot_rows(conn, "wall_people"):
        (screened if role == "screened" else allowed)[wall_id].add(person_id)
    for wall_id, kind, title, include_team, start, until, lifted_at in repository.snapshot_rows(
        conn, "walls"
    ):
        snap.walls[wall_id] = Wall(
            wall_id=wall_id,
            kind=kind,
            title=title,
            include_team=include_team,
            effective_from=start,
            effective_until=until,
            lifted=lifted_at is not None,
            protected_matters=frozenset(prot_m.get(wall_id, ())),
            protected_clients=frozenset(prot_c.get(wall_id, ())),
            screened=frozenset(screened.get(wall_id, ())),
            allowed=frozenset(allowed.get(wall_id, ())),
        )


def load_snapshot(conn: Connection, *, full: bool = True) -> MatrixSnapshot:
    """Read the matrix; the caller provides a repeatable-read transaction.

    ``full=False`` reads only what per-query resolution needs (people, principals, walls,
    wall groups and the insiders of inclusionary walls, expanded in SQL). It is what every
    search after a policy change waits for, so it skips the matters, parties and teams that
    only explanations and conflict checks use.
    """
    version = repository.policy_version(conn)
    snap = MatrixSnapshot(version=version, partial=not full)
    for person_id, name, active in repository.snapshot_rows(conn, "people"):
        snap.people[person_id] = Person(person_id, name, active)
    aliases: dict[str, set[str]] = defaultdict(set)
    for person_id, alias in repository.snapshot_rows(conn, "aliases"):
        aliases[person_id].add(alias)
    snap.aliases = {k: frozenset(v) for k, v in aliases.items()}
    members: dict[str, set[str]] = defaultdict(set)
    for source, group_id, member in repository.snapshot_rows(conn, "group_members"):
        held = members[f"{source}:group:{group_id}"]  # an empty group is known too
        if member is not None:
            held.add(member)
    snap.group_members = {k: frozenset(v) for k, v in members.items()}
    _walls(conn, snap, with_protects=full)
    for group_id, wall_ids in repository.snapshot_rows(conn, "wall_groups"):
        snap.groups[group_id] = frozenset(wall_ids)
    if not full:
        insiders: dict[str, set[str]] = defaultdict(set)
        for wall in snap.walls.values():
            if wall.kind == "inclusionary":
                insiders[wall.wall_id] |= wall.allowed
        for wall_id, person_id in repository.snapshot_rows(conn, "team_insiders"):
            insiders[wall_id].add(person_id)
        snap.preset_insiders({k: frozenset(v) for k, v in insiders.items()})
        return snap

    for client_id, name, parent_id in repository.snapshot_rows(conn, "clients"):
        snap.clients[client_id] = Client(client_id, name, parent_id)
    for matter_id, client_id, title, status in repository.snapshot_rows(conn, "matters"):
        snap.matters[matter_id] = Matter(matter_id, client_id, title, status)
    parties: dict[str, list[Party]] = defaultdict(list)
    for matter_id, name, _stored_norm, role in repository.snapshot_rows(conn, "parties"):
        # normalised by today's rule (as clients are), not the one it was written with
        parties[matter_id].append(Party(name, normalize_name(name), role))
    snap.parties = {k: tuple(v) for k, v in parties.items()}
    team: dict[str, set[str]] = defaultdict(set)
    for matter_id, person_id in repository.snapshot_rows(conn, "team"):
        team[matter_id].add(person_id)
    snap.team = {k: frozenset(v) for k, v in team.items()}
    snap.matter_groups = dict(repository.snapshot_rows(conn, "matter_groups"))
    return snap


def read_snapshot(database: Database, *, full: bool = True) -> MatrixSnapshot:
    """The matrix, for a caller that holds no connection of ``database``'s pool."""
    return _read_stamped(database.engine, full=full)[1]


def _read_stamped(engine: Engine, *, full: bool) -> tuple[tuple[int, int], MatrixSnapshot]:
    """The snapshot with its matrix stamp, both read in the same database snapshot."""
    with engine.connect() as conn:
        begin_snapshot(conn)
        stamp = repository.matrix_stamp(conn)
        return stamp, load_snapshot(conn, full=full)


class AccessResolver:
    """Thread-safe cache of the latest snapshot and of per-person resolutions.

    Its callers are requests that already hold a connection of the pool, so a reload reads
    on ``Database.side_engine`` (never a second connection of the pool they hold), one
    reload at a time per kind: callers that find the cache stale wait for that one reload
    and share it."""

    def __init__(self, *, cache: bool = True) -> None:
        self.use_cache = cache  # off only where a benchmark measures the uncached path
        self._lock = threading.Lock()
        self._snapshot: MatrixSnapshot | None = None
        self._cache: dict[str, Resolution] = {}
        self._matrix: tuple[tuple[int, int], MatrixSnapshot] | None = None
        self._matrix_load = threading.Lock()
        self._snapshot_load = threading.Lock()

    def invalidate(self) -> None:
        with self._lock:
            self._snapshot = None
            self._cache.clear()
            self._matrix = None

    def matrix(self, conn: Connection, database: Database) -> MatrixSnapshot:
        """The whole matrix (matters, parties, teams: what the session gate and the reads of
        one's own sessions judge with), cached under its stamp.

        ``conn`` reads the stamp (one indexed row each of two tables); the snapshot is
        reloaded only when the stamp moved, so every access or matrix change committed
        before this call is in the answer, and an unchanged matrix is read once however
        many calls ask. One reload at a time: callers that find it stale wait for it and
        share it, rather than each reading the whole matrix."""
        return self.matrix_now(conn, database)[0]

    def matrix_now(self, conn: Connection, database: Database) -> tuple[MatrixSnapshot, datetime]:
        """``matrix`` and the instant to judge it at: the database's clock, read with the
        stamp (app/db/clock.py), never this host's."""
        stamp, at = repository.matrix_stamp_at(conn)
        return self._matrix_at(stamp, database), at

    def latest_matrix(self, database: Database) -> MatrixSnapshot:
        """``matrix`` for a caller that holds no connection: the stamp is read on a short
        connection of the pool, given back before any reload. Reading the whole matrix per
        call on the pool let one officer's access checks hold every pooled connection."""
        return self.latest_matrix_now(database)[0]

    def latest_matrix_now(self, database: Database) -> tuple[MatrixSnapshot, datetime]:
        """``latest_matrix`` and the database's clock, read with the stamp."""
        with database.engine.connect() as conn:
            stamp, at = repository.matrix_stamp_at(conn)
        return self._matrix_at(stamp, database), at

    def _matrix_at(self, stamp: tuple[int, int], database: Database) -> MatrixSnapshot:
        """The whole matrix at ``stamp`` or later: the cached one, or read afresh (no cache:
        every time)."""
        if not self.use_cache:
            return _read_stamped(database.side_engine, full=True)[1]
        with self._lock:
            cached = self._matrix
        if cached is not None and cached[0] == stamp:
            return cached[1]
        with self._matrix_load:
            with self._lock:
                cached = self._matrix
            if cached is not None and cached[0] >= stamp:
                return cached[1]  # loaded meanwhile, at this stamp or later
            fresh = _read_stamped(database.side_engine, full=True)
            with self._lock:
                if self._matrix is None or fresh[0] >= self._matrix[0]:
                    self._matrix = fresh
        return fresh[1]

    def snapshot(self, database: Database, at_least: int | None = None) -> MatrixSnapshot:
        """The cached snapshot, reloaded when a newer policy_version is known to exist."""
        if not self.use_cache:
            return _read_stamped(database.side_engine, full=False)[1]
        with self._lock:
            snap = self._snapshot
        if snap is not None and (at_least is None or snap.version >= at_least):
            return snap
        with self._snapshot_load:
            with self._lock:
                snap = self._snapshot
            if snap is not None and (at_least is None or snap.version >= at_least):
                return snap  # loaded meanwhile, recent enough
            fresh = _read_stamped(database.side_engine, full=False)[1]
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
            incomplete_groups=snap.incomplete_groups,
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
