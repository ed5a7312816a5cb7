"""Ids of the matrix stored decomposed before they were read in NFC, found and re-keyed.

Since 2026-12-07 the ids of people, clients and matters are read in NFC (app/types.py): a
person, client or matter stored before that as "jose" + U+0301 can no longer be named, a
wall naming it is refused as unknown and a PUT makes an NFC twin whose walls do not cover
the documents filed under the old id. ``find`` reports every such id and where it is
stored; ``normalize`` moves each to its NFC form in every table that keeps it (sql/ids.sql),
in one transaction with one policy version bump and one policy event, so no search sees a
half-moved matrix.

Two stored ids that are one in NFC (a twin made after the upgrade, or two spellings made
before) are a collision: which of them is the person or matter, and whether the two are to
be merged, is for the firm to say, never a guess. They are reported (ids, tables, rows) and
left exactly as stored; every other id is re-keyed. Audit rows are never rewritten
(hash-chained): the policy event names each old id with its new one.

Not a migration: ``ewall serve`` migrates at start, and a collision would stop the service
until someone resolved it by hand. The service warns at start and /readyz names the check
instead (app/main.py).
"""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

from app.db.engine import Database, error_kind
from app.matrix import rekey_repository as repo
from app.walls import groups, policy
from app.walls.access import mark_writer

KINDS = ("person", "client", "matter")
# the table that holds each kind as its key: two spellings there are two rows of the matrix
_PRIMARY = {"person": ("people", "person_id"), "client": ("clients", "client_id"),
            "matter": ("matters", "matter_id")}
# in order: a copy of each row under its NFC id, every reference moved, the old row deleted
_MOVES = {
    "person": ("ids.copy_people", "ids.move_matter_team_people", "ids.move_wall_people",
               "ids.move_person_aliases", "ids.move_console_sessions", "ids.move_jobs",
               "ids.move_eval_runs", "ids.move_relevance_queries", "ids.delete_people"),
    "client": ("ids.copy_clients", "ids.move_client_parents", "ids.move_matter_clients",
               "ids.move_wall_protected_clients", "ids.move_document_clients",
               "ids.delete_clients"),
    "matter": ("ids.copy_matters", "ids.move_matter_parties", "ids.move_matter_team_matters",
               "ids.move_matter_wall_groups", "ids.move_wall_protected_matters",
               "ids.move_retag_pending", "ids.move_document_matters", "ids.delete_matters"),
}
# last (the chunks' trigger rebuilds their documents' postings under the new ids)
_CHUNK_MOVES = {"client": "ids.move_chunk_clients", "matter": "ids.move_chunk_matters"}
COMMAND = "ewall ids check"
WARNING = (
    "ids of people, clients or matters are stored in another form than NFC (decomposed, "
    "from before ids were read in NFC): the API cannot name them, and a wall or a PUT "
    "naming them misses them; run `ewall ids check`, then `ewall ids normalize`"
)
log = logging.getLogger("ewall.ids")


@dataclass
class StoredId:
    """One spelling of an id as stored, and in how many rows of which tables."""

    kind: str
    stored: str
    nfc: str
    places: dict[str, int] = field(default_factory=dict)  # "table.column" -> rows

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "stored": self.stored,
            "stored_escaped": self.stored.encode("ascii", "backslashreplace").decode(),
            "nfc": self.nfc,
            "places": dict(sorted(self.places.items())),
        }


@dataclass
class Collision:
    """Spellings of one NFC id that the matrix holds as two (or more) rows."""

    kind: str
    nfc: str
    spellings: list[StoredId]

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "nfc": self.nfc,
            "spellings": [s.as_dict() for s in self.spellings],
        }


@dataclass
class Report:
    """What is stored in another form than NFC; after ``normalize``, also what moved."""

    found: list[StoredId]
    collisions: list[Collision]
    rekeyed: list[StoredId] = field(default_factory=list)
    policy_version: int | None = None

    @property
    def remaining(self) -> list[StoredId]:
        moved = {(s.kind, s.stored) for s in self.rekeyed}
        return [s for s in self.found if (s.kind, s.stored) not in moved]

    def as_dict(self) -> dict[str, Any]:
        return {
            "found": len(self.found),
            "rekeyed": [s.as_dict() for s in self.rekeyed],
            "remaining": [s.as_dict() for s in self.remaining],
            "collisions": [c.as_dict() for c in self.collisions],
            "policy_version": self.policy_version,
        }


def any_stored(conn: Connection) -> bool:
    """Whether a person, client or matter is stored in another form than NFC (cheap: the
    matrix's own tables; every other place refers to them)."""
    return repo.any_matrix_id_not_nfc(conn)


class IdsLook:
    """Whether ids are stored in another form than NFC (``any_stored``, None when it could
    not be read), for the warning at start and for /readyz: read again only when the policy
    version moved (``normalize`` bumps it) or ``MAX_AGE_S`` passed since (a write that bumps
    nothing), so the first probe after start reads the start's look. The look scans every
    person, client and matter (about 0.2 s of the database at 200,000 matters), /readyz
    answers anyone, and while one check runs a second probe answers 503 at once
    (app/readiness.py): probes in a loop kept a load balancer's own probe from reading the
    service ready."""

    MAX_AGE_S = 300.0

    def __init__(self, database: Database) -> None:
        self._database = database
        self._lock = threading.Lock()
        self._version: int | None = None
        self._read_at = 0.0
        self._stored: bool | None = None
        self._failure: str | None = None  # the last look's error, while looks fail

    def __call__(self) -> bool | None:
        try:
            with self._database.transaction() as conn:
                version = policy.current_version(conn)
                with self._lock:
                    fresh = time.monotonic() - self._read_at < self.MAX_AGE_S
                    if version == self._version and fresh:
                        return self._stored
                stored = any_stored(conn)
        except Exception as exc:  # a warning only: a start-up or a probe must not fail on it
            # one line naming the error's type and SQLSTATE, no traceback, and once while
            # the same error recurs: /readyz looks again on every probe
            failure = error_kind(exc)
            with self._lock:
                repeated, self._failure = failure == self._failure, failure
            if not repeated:
                log.warning("could not look for ids stored in another form than NFC: %s",
                            failure)
            return None
        with self._lock:
            self._version, self._read_at, self._stored = version, time.monotonic(), stored
            self._failure = None
        return stored


def warn_at_start(look: IdsLook) -> bool:
    """Log the warning once at start when such ids are stored (the service runs on: the
    firm decides when to re-key); whether it was logged."""
    if look():
        log.warning(WARNING)
        return True
    return False


def _places(conn: Connection) -> list[StoredId]:
    found: dict[tuple[str, str], StoredId] = {}
    for row in repo.not_nfc(conn):
        stored = str(row["id"])
        nfc = unicodedata.normalize("NFC", stored)
        if nfc == stored:  # PostgreSQL's Unicode tables and Python's disagree: not ours
            continue
        key = (str(row["kind"]), stored)
        entry = found.setdefault(key, StoredId(key[0], stored, nfc))
        entry.places[f"{row['tbl']}.{row['col']}"] = int(row["n"])
    return sorted(found.values(), key=lambda s: (KINDS.index(s.kind), s.nfc, s.stored))


def find(conn: Connection) -> Report:
    """Every stored id that is not NFC, and the collisions among them."""
    found = _places(conn)
    collisions: list[Collision] = []
    for kind in KINDS:
        table, column = _PRIMARY[kind]
        key_place = f"{table}.{column}"
        of_kind = [s for s in found if s.kind == kind]
        targets = sorted({s.nfc for s in of_kind})
        if not targets:
            continue
        stored_nfc = repo.stored(conn, kind, targets)
        rows: dict[str, list[StoredId]] = defaultdict(list)
        for s in of_kind:
            if key_place in s.places:
                rows[s.nfc].append(s)
        for nfc in targets:
            spellings = list(rows.get(nfc, []))
            if nfc in stored_nfc:
                spellings.append(StoredId(kind, nfc, nfc, {key_place: 1}))
            if len(spellings) > 1:
                collisions.append(Collision(kind, nfc, spellings))
    return Report(found=found, collisions=collisions)


def check(conn: Connection) -> Report:
    """``find`` for `ewall ids check`, in the caller's (read-only) transaction: in writer
    mode, because the chunks' client and matter ids are counted whatever a reader's access
    (row-level security would hide every chunk from a transaction with no person's sets).
    It returns ids of the matrix and numbers of rows, never a chunk."""
    mark_writer(conn)
    return find(conn)


def normalize(conn: Connection, *, actor: str) -> Report:
    """Re-key every id stored in another form than NFC, except the collisions, in the
    caller's transaction: one policy version bump, the wall groups of the matters concerned
    recomputed (re-tags queued as a wall change queues them), one policy event."""
    policy.lock_for_change_at(conn)  # every other matrix or wall change waits for this one
    # writer mode for the whole transaction: the chunks' ids are found (past row-level
    # security, which hides every chunk from a transaction with no person's sets) and moved
    mark_writer(conn)
    report = find(conn)
    collided = {(c.kind, c.nfc) for c in report.collisions}
    moving = [s for s in report.found if (s.kind, s.nfc) not in collided]
    if not moving:
        return report
    version, at = policy.bump_at(conn)
    mappings: dict[str, tuple[list[str], list[str]]] = {}
    for kind in KINDS:
        of_kind = [s for s in moving if s.kind == kind]
        if of_kind:
            mappings[kind] = ([s.stored for s in of_kind], [s.nfc for s in of_kind])
    for kind, (old_ids, new_ids) in mappings.items():
        repo.lock(conn, kind, old_ids)
        for statement in _MOVES[kind]:
            repo.move(conn, statement, old_ids, new_ids)
    matters = {s.nfc for s in moving if s.kind == "matter"}
    clients = sorted({s.nfc for s in moving if s.kind == "client"})
    matters.update(groups.matters_under_clients(conn, clients))
    regrouped = groups.recompute(conn, matters, version)
    policy.record_change(
        conn,
        actor=actor,
        action="ids.normalized",
        object_type="matrix",
        object_id="ids.normalized",
        reason="ids stored before they were read in NFC, moved to their NFC form",
        details={
            "access_relevant": True,
            "changes": [
                {"type": s.kind, "id": s.nfc, "change": "rekeyed", "from": s.stored}
                for s in moving
            ],
            "collisions": [c.as_dict() for c in report.collisions],
            "regrouped_matters": len(regrouped),
        },
        version=version,
        at=at,
    )
    for kind, statement in _CHUNK_MOVES.items():
        if kind in mappings:
            repo.move(conn, statement, *mappings[kind])
    report.rekeyed = moving
    report.policy_version = version
    return report
