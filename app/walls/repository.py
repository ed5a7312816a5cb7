"""The walls domain's SQL (sql/walls.sql, the exposure blocks of sql/sessions.sql): the only
module of app/walls that runs statements.

``set_writer_mode`` is called by ``app.walls.access.mark_writer`` only; its rule of use is
written there (tests/walls/test_writer_mode_allowlist.py enforces both)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.db import sqlfiles
from app.db.locks import LockNamespace
from app.db.sqlfiles import text_array


@dataclass(frozen=True)
class PendingRetag:
    matter_id: str
    target_wall_group_id: str
    policy_version: int


@dataclass(frozen=True)
class NewWall:
    wall_id: str
    kind: str
    title: str
    reason: str
    include_team: bool
    effective_from: datetime | None
    effective_until: datetime | None
    created_by: str


@dataclass(frozen=True)
class WallRow(NewWall):
    created_at: datetime
    lifted_at: datetime | None
    lifted_by: str | None
    lift_reason: str | None
    active: bool  # in force by the database's clock when read (sql/walls.sql)


# --- policy version and the RLS settings ---------------------------------------------------


def policy_version(conn: Connection) -> int:
    """The policy version this transaction sees."""
    return int(conn.execute(sqlfiles.query("walls.policy_version")).scalar_one())


def policy_version_at(conn: Connection) -> tuple[int, datetime]:
    """The policy version this transaction sees, and the database's clock (app/db/clock.py)."""
    row = conn.execute(sqlfiles.query("walls.policy_version_at")).one()
    return int(row.version), row.at


def matrix_stamp_at(conn: Connection) -> tuple[tuple[int, int], datetime]:
    """``matrix_stamp`` and the database's clock, in one statement."""
    row = conn.execute(sqlfiles.query("walls.matrix_stamp_at")).one()
    return (int(row.policy_version), int(row.policy_seq)), row.at


def matrix_stamp(conn: Connection) -> tuple[int, int]:
    """(policy_version, the policy chain's head seq): changes with any matrix change."""
    row = conn.execute(sqlfiles.query("walls.matrix_stamp")).one()
    return int(row.policy_version), int(row.policy_seq)


def policy_version_for_share(conn: Connection) -> int:
    """The policy version, share-locked until commit (no policy change commits first)."""
    return int(conn.execute(sqlfiles.query("walls.policy_version_for_share")).scalar_one())


def no_window_edge_since(conn: Connection, at: datetime) -> bool:
    """Whether no wall's window opened or closed after ``at``, by the database's clock now."""
    return bool(conn.execute(sqlfiles.query("walls.no_window_edge_since"), {"at": at}).scalar_one())


def policy_version_for_update_at(conn: Connection) -> tuple[int, datetime]:
    """The policy version, locked until commit (other policy changes wait for this one),
    and the database's clock when the statement began."""
    row = conn.execute(sqlfiles.query("walls.policy_version_for_update")).one()
    return int(row.version), row.at


def bump_policy_version(conn: Connection) -> tuple[int, datetime]:
    """The new version, and the database's clock once the bump took the row."""
    row = conn.execute(sqlfiles.query("walls.bump_policy_version")).one()
    return int(row.version), row.at


def allowed_source_acls(
    conn: Connection, principals: Sequence[str], incomplete_groups: Iterable[str] = ()
) -> tuple[str, ...]:
    ids = conn.execute(
        sqlfiles.prepared("walls.allowed_source_acls"),
        {"principals": list(principals), "incomplete_groups": sorted(incomplete_groups)},
    ).scalar_one()
    return tuple(ids)


def set_allowed_sets(
    conn: Connection, wall_groups: Sequence[str], source_acl_ids: Sequence[str]
) -> None:
    """Transaction-local RLS settings (SET LOCAL semantics, safe under poolers)."""
    conn.execute(
        sqlfiles.prepared("walls.set_allowed_sets"),
        {"groups": text_array(tuple(wall_groups)), "acls": list(source_acl_ids)},
    )


def set_writer_mode(conn: Connection) -> None:
    """Only for app.walls.access.mark_writer (see its rule)."""
    conn.execute(sqlfiles.query("walls.writer_mode"))


def visible_chunks(
    conn: Connection,
    chunk_ids: Sequence[str],
    wall_groups: Sequence[str],
    source_acl_ids: Sequence[str],
) -> list[dict[str, object]]:
    rows = conn.execute(
        sqlfiles.query("walls.visible_chunks"),
        {
            "chunk_ids": list(chunk_ids),
            "wall_groups": list(wall_groups),
            "source_acl_ids": list(source_acl_ids),
        },
    ).mappings()
    return [dict(r) for r in rows]


# --- the matrix snapshot ---------------------------------------------------------------------

SNAPSHOT_BLOCKS = (
    "people",
    "aliases",
    "group_members",
    "protected_matters",
    "protected_clients",
    "wall_people",
    "walls",
    "wall_groups",
    "clients",
    "matters",
    "parties",
    "team",
    "matter_groups",
)


def snapshot_rows(conn: Connection, part: str) -> list[tuple[Any, ...]]:
    """Plain tuples of one snapshot part (``walls.snapshot_<part>``, or ``team_insiders``)
    straight from the driver: a big firm has hundreds of thousands of rows here, and
    per-row result objects would dominate the load time."""
    if part != "team_insiders" and part not in SNAPSHOT_BLOCKS:
        raise KeyError(f"unknown snapshot part {part!r}")
    name = "walls.team_insiders" if part == "team_insiders" else f"walls.snapshot_{part}"
    driver = conn.connection.driver_connection
    if driver is None:  # pragma: no cover - SQLAlchemy always has one here
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(sqlfiles.raw(name))
        rows: list[tuple[Any, ...]] = cur.fetchall()
    return rows


# --- wall groups and re-tagging -------------------------------------------------------------


def matters_under_clients(conn: Connection, client_ids: Sequence[str]) -> list[str]:
    rows = conn.execute(
        sqlfiles.query("walls.matters_under_clients"), {"client_ids": list(client_ids)}
    )
    return [str(r[0]) for r in rows]


def matter_wall_sets(conn: Connection, matter_ids: Sequence[str]) -> dict[str, list[str]]:
    rows = conn.execute(sqlfiles.query("walls.matter_wall_sets"), {"matter_ids": list(matter_ids)})
    return {str(r.matter_id): list(r.wall_ids) for r in rows}


def current_groups(conn: Connection, matter_ids: Sequence[str]) -> dict[str, str]:
    rows = conn.execute(sqlfiles.query("walls.current_groups"), {"matter_ids": list(matter_ids)})
    return {str(r.matter_id): str(r.wall_group_id) for r in rows}


def ensure_groups(conn: Connection, groups: Iterable[tuple[str, list[str]]]) -> None:
    """Create the wall groups (id, wall ids) that do not exist yet."""
    conn.execute(
        sqlfiles.query("walls.ensure_group"),
        [{"wall_group_id": g, "wall_ids": w} for g, w in groups],
    )


def set_matter_groups(conn: Connection, matter_ids: list[str], group_ids: list[str]) -> None:
    conn.execute(
        sqlfiles.query("walls.set_matter_groups"),
        {"matter_ids": matter_ids, "group_ids": group_ids},
    )


def queue_retag(
    conn: Connection, matter_ids: list[str], group_ids: list[str], policy_version: int
) -> None:
    conn.execute(
        sqlfiles.query("walls.queue_retag"),
        {"matter_ids": matter_ids, "group_ids": group_ids, "policy_version": policy_version},
    )


def claim_retag(conn: Connection, matter_id: str, target: str) -> bool:
    """Take the matter's re-tag lock until the transaction ends; whether the matter still
    waits to be moved to ``target`` (False: a stale queue row, nothing to move)."""
    conn.execute(
        sqlfiles.query("walls.lock_matter_retag"),
        {"namespace": int(LockNamespace.RETAG), "matter_id": matter_id},
    )
    row = conn.execute(
        sqlfiles.query("walls.retag_target_pending"), {"matter_id": matter_id, "target": target}
    ).first()
    return bool(row is not None and row[0])


def retag_batch(conn: Connection, matter_id: str, target: str, batch_size: int) -> int:
    """Move up to ``batch_size`` chunks of the matter to ``target``; returns how many."""
    return int(
        conn.execute(
            sqlfiles.query("walls.retag_batch"),
            {"matter_id": matter_id, "target": target, "batch_size": batch_size},
        ).rowcount
    )


def add_retagged_chunks(conn: Connection, matter_id: str, target: str, n: int) -> None:
    conn.execute(
        sqlfiles.query("walls.add_retagged_chunks"),
        {"n": n, "matter_id": matter_id, "target": target},
    )


def clear_retag_if_done(conn: Connection, matter_id: str, target: str, policy_version: int) -> bool:
    """Clear the pending mark when nothing is left to move; whether it was cleared."""
    done = conn.execute(
        sqlfiles.query("walls.retag_done"),
        {"matter_id": matter_id, "target": target, "policy_version": policy_version},
    ).first()
    return done is not None


def clear_idle_retags(conn: Connection, rows: Sequence[PendingRetag]) -> set[str]:
    """Clear, in one statement, the marks of the matters among ``rows`` that have nothing
    to move (as ``clear_retag_if_done`` would one by one, under the same per-matter locks);
    the matters cleared. A wall over a client queues each of its matters, most of them
    without a chunk: one transaction apiece kept a matter queued behind them hidden."""
    if not rows:
        return set()
    conn.execute(
        sqlfiles.query("walls.lock_matters_retag"),
        {
            "namespace": int(LockNamespace.RETAG),
            "matter_ids": sorted({r.matter_id for r in rows}),
        },
    )
    cleared = conn.execute(
        sqlfiles.query("walls.clear_idle_retags"),
        {
            "matter_ids": [r.matter_id for r in rows],
            "targets": [r.target_wall_group_id for r in rows],
            "versions": [r.policy_version for r in rows],
        },
    )
    return {str(r[0]) for r in cleared}


def next_retags(conn: Connection) -> list[PendingRetag]:
    rows = conn.execute(sqlfiles.query("walls.next_retags"))
    return [
        PendingRetag(str(r.matter_id), str(r.target_wall_group_id), int(r.policy_version))
        for r in rows
    ]


def matter_retag_pending(conn: Connection, matter_id: str) -> bool:
    found = conn.execute(sqlfiles.query("walls.matter_retag_pending"), {"matter_id": matter_id})
    return bool(found.scalar_one())


def retag_queue(conn: Connection) -> list[dict[str, Any]]:
    """The whole re-tag queue, oldest first (the admin status route)."""
    return [dict(r) for r in conn.execute(sqlfiles.query("walls.retag_queue")).mappings()]


# --- walls ----------------------------------------------------------------------------------

_KNOWN = {"matter": "walls.known_matters", "client": "walls.known_clients"}


def known_ids(conn: Connection, what: str, ids: Sequence[str]) -> set[str]:
    """Which of ``ids`` exist as ``what`` ("matter", "client" or "person")."""
    block = _KNOWN.get(what, "walls.known_people" if what == "person" else "")
    if not block:
        raise KeyError(what)
    return {str(r[0]) for r in conn.execute(sqlfiles.query(block), {"ids": list(ids)})}


def insert_wall(conn: Connection, wall: NewWall) -> datetime:
    """Insert the wall; returns its created_at (the database's clock)."""
    created: datetime = conn.execute(
        sqlfiles.query("walls.insert_wall"), dict(wall.__dict__)
    ).scalar_one()
    return created


def insert_protected(
    conn: Connection, wall_id: str, matter_ids: list[str], client_ids: list[str]
) -> None:
    if matter_ids:
        conn.execute(
            sqlfiles.query("walls.insert_protected_matters"),
            {"wall_id": wall_id, "matter_ids": matter_ids},
        )
    if client_ids:
        conn.execute(
            sqlfiles.query("walls.insert_protected_clients"),
            {"wall_id": wall_id, "client_ids": client_ids},
        )


def insert_wall_people(conn: Connection, wall_id: str, members: list[tuple[str, str]]) -> None:
    """(person_id, role) pairs, role "screened" or "allowed"."""
    if members:
        conn.execute(
            sqlfiles.query("walls.insert_wall_people"),
            {
                "wall_id": wall_id,
                "person_ids": [p for p, _ in members],
                "roles": [r for _, r in members],
            },
        )


def protected_matters(conn: Connection, wall_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(wall_id, matter_id) pairs of these walls."""
    rows = conn.execute(sqlfiles.query("walls.protected_matters_of"), {"wall_ids": list(wall_ids)})
    return [(str(r.wall_id), str(r.matter_id)) for r in rows]


def protected_clients(conn: Connection, wall_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(wall_id, client_id) pairs of these walls."""
    rows = conn.execute(sqlfiles.query("walls.protected_clients_of"), {"wall_ids": list(wall_ids)})
    return [(str(r.wall_id), str(r.client_id)) for r in rows]


def wall_people(conn: Connection, wall_ids: Sequence[str]) -> list[tuple[str, str, str]]:
    """(wall_id, person_id, role) of these walls."""
    rows = conn.execute(sqlfiles.query("walls.wall_people_of"), {"wall_ids": list(wall_ids)})
    return [(str(r.wall_id), str(r.person_id), str(r.role)) for r in rows]


@dataclass(frozen=True)
class LockedWall:
    lifted_at: datetime | None


def lock_wall(conn: Connection, wall_id: str) -> LockedWall | None:
    """The wall's lift state, its row locked until commit; None when there is no such wall."""
    row = conn.execute(sqlfiles.query("walls.lock_wall"), {"wall_id": wall_id}).first()
    return None if row is None else LockedWall(row.lifted_at)


def lift_wall(conn: Connection, wall_id: str, *, lifted_by: str, reason: str) -> datetime:
    """Lift the wall; returns its lifted_at (the database's clock)."""
    lifted: datetime = conn.execute(
        sqlfiles.query("walls.lift_wall"),
        {"wall_id": wall_id, "lifted_by": lifted_by, "lift_reason": reason},
    ).scalar_one()
    return lifted


def wall(conn: Connection, wall_id: str) -> WallRow | None:
    row = conn.execute(sqlfiles.query("walls.wall"), {"wall_id": wall_id}).mappings().first()
    return None if row is None else WallRow(**row)


def all_walls(conn: Connection) -> list[WallRow]:
    return [WallRow(**r) for r in conn.execute(sqlfiles.query("walls.all_walls")).mappings()]


# --- exposure (reads of the retrieval audit, sql/sessions.sql) ----------------------------


def anyone_retrieved(conn: Connection, matter_ids: Sequence[str], since: datetime) -> bool:
    return bool(
        conn.execute(
            sqlfiles.query("sessions.exposure_any"),
            {"matter_ids": list(matter_ids), "since": since},
        ).scalar()
    )


def readers(conn: Connection) -> list[str]:
    """Everyone who ever made a retrieval."""
    return list(conn.execute(sqlfiles.query("sessions.readers")).scalars())


def exposure_rows(
    conn: Connection,
    matter_ids: Sequence[str],
    since: datetime,
    *,
    denied: list[str] | None,
    admitted: list[str] | None,
) -> list[dict[str, Any]]:
    """Who retrieved chunks of these matters since ``since``, per person, session and matter;
    only the rows of ``denied`` people, or of everyone but ``admitted``."""
    rows = conn.execute(
        sqlfiles.query("sessions.exposure"),
        {"matter_ids": list(matter_ids), "since": since, "denied": denied, "admitted": admitted},
    ).mappings()
    return [dict(r) for r in rows]


def count_chunks_in_matters(conn: Connection, matter_ids: Sequence[str]) -> int:
    """All chunks of these matters; the caller is in writer mode (a count, never rows)."""
    return int(
        conn.execute(
            sqlfiles.query("sessions.chunks_in_matters"), {"matter_ids": list(matter_ids)}
        ).scalar_one()
    )
