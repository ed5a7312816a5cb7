"""Console sessions and pending OIDC sign-ins (sql/console_sessions.sql). Callers pass the
SHA-256 of the cookie or state, never the value itself."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from app.db import sqlfiles


@dataclass(frozen=True)
class SessionRow:
    person_id: str
    roles: frozenset[str]
    csrf: str
    created: float
    last_seen: float
    expires: float


@dataclass(frozen=True)
class PendingRow:
    nonce: str
    verifier: str
    redirect_uri: str
    next_url: str
    live: bool


def create_session(
    conn: Connection,
    *,
    sid_sha256: str,
    person_id: str,
    roles: frozenset[str],
    csrf: str,
    max_s: int,
    token_exp: float | None,
) -> SessionRow:
    row = conn.execute(
        sqlfiles.query("console_sessions.create_session"),
        {
            "sid_sha256": sid_sha256,
            "person_id": person_id,
            "roles": sorted(roles),
            "csrf": csrf,
            "max_s": max_s,
            "token_exp": token_exp,
        },
    ).one()
    return SessionRow(person_id, roles, csrf, row.created, row.last_seen, row.expires)


def touch_session(conn: Connection, sid_sha256: str, idle_s: int) -> SessionRow | None:
    row = conn.execute(
        sqlfiles.query("console_sessions.touch_session"),
        {"sid_sha256": sid_sha256, "idle_s": idle_s},
    ).first()
    if row is None:
        return None
    return SessionRow(
        str(row.person_id),
        frozenset(row.roles),
        str(row.csrf),
        float(row.created),
        float(row.last_seen),
        float(row.expires),
    )


def drop_session(conn: Connection, sid_sha256: str) -> None:
    conn.execute(sqlfiles.query("console_sessions.drop_session"), {"sid_sha256": sid_sha256})


def sweep_sessions(conn: Connection, idle_s: int, batch: int) -> int:
    result = conn.execute(
        sqlfiles.query("console_sessions.sweep_sessions"), {"idle_s": idle_s, "batch": batch}
    )
    return int(result.rowcount)


def add_pending_sign_in(
    conn: Connection,
    *,
    state_sha256: str,
    nonce: str,
    verifier: str,
    redirect_uri: str,
    next_url: str,
    ttl_s: int,
) -> None:
    conn.execute(
        sqlfiles.query("console_sessions.add_pending_sign_in"),
        {
            "state_sha256": state_sha256,
            "nonce": nonce,
            "verifier": verifier,
            "redirect_uri": redirect_uri,
            "next_url": next_url,
            "ttl_s": ttl_s,
        },
    )


def take_pending_sign_in(conn: Connection, state_sha256: str) -> PendingRow | None:
    row = conn.execute(
        sqlfiles.query("console_sessions.take_pending_sign_in"), {"state_sha256": state_sha256}
    ).first()
    if row is None:
        return None
    return PendingRow(
        str(row.nonce), str(row.verifier), str(row.redirect_uri), str(row.next_url), bool(row.live)
    )


def sweep_pending_sign_ins(conn: Connection, batch: int) -> int:
    result = conn.execute(
        sqlfiles.query("console_sessions.sweep_pending_sign_ins"), {"batch": batch}
    )
    return int(result.rowcount)
