"""Console sessions: rows in PostgreSQL (``console_sessions``), keyed by a random id in a
cookie, so that every API process knows every session (invariant 13).

The cookie carries nothing but the id (HttpOnly, SameSite=Strict, Secure over HTTPS, path
/console), so signing out or an idle timeout ends the session for good, in every process:
there is nothing a copied cookie could still prove. The table holds only the id's SHA-256,
so a reader of the table or of a backup cannot sign in with it. The person and roles come
from the token verified at sign-in and never change during the session; the session ends at
the token's expiry at the latest. Each session has its own CSRF token, checked on every
POST. Sessions survive a restart. Idle and maximum ages are measured on the database's
clock, the one clock all processes share.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, replace

from app.auth.service import STAFF_ROLES, Principal
from app.console import session_repository as repo
from app.db.engine import Database
from app.matrix.repository import person_inactive

COOKIE = "ewall_console"
SIGNIN_COOKIE = "ewall_console_signin"  # double-submit CSRF token of the sign-in form
OIDC_COOKIE = "ewall_console_oidc"  # the state of an OIDC sign-in in progress
COOKIE_PATH = "/console"
SWEEP_BATCH = 100  # ended sessions deleted per sign-in: bounded work, and sign-ins outpace it


@dataclass(frozen=True)
class ConsoleSession:
    sid: str
    person_id: str
    roles: frozenset[str]
    csrf: str
    created: float
    last_seen: float
    expires: float

    def has_any(self, *roles: str) -> bool:
        return bool(self.roles.intersection(roles))


def same_token(given: str | None, expected: str) -> bool:
    return bool(given) and secrets.compare_digest(str(given).encode(), expected.encode())


def digest(value: str) -> str:
    """What the tables keep of a cookie or an OIDC state."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


class SessionStore:
    def __init__(self, database: Database, idle_s: int, max_s: int) -> None:
        self.database = database
        self.idle_s = idle_s
        self.max_s = max_s

    def create(self, principal: Principal) -> ConsoleSession:
        sid = secrets.token_urlsafe(32)
        exp = principal.claims.get("exp")
        with self.database.transaction() as conn:
            if person_inactive(conn, principal.person_id):  # as the API's roles (app/deps.py)
                principal = principal.without(STAFF_ROLES)
            repo.sweep_sessions(conn, self.idle_s, SWEEP_BATCH)
            row = repo.create_session(
                conn,
                sid_sha256=digest(sid),
                person_id=principal.person_id,
                roles=principal.roles,
                csrf=secrets.token_urlsafe(32),
                max_s=self.max_s,
                token_exp=float(exp) if isinstance(exp, int | float) else None,
            )
        return _session(sid, row)

    def get(self, sid: str | None) -> ConsoleSession | None:
        """The live session for ``sid``, touched; None when unknown, idle too long or
        expired (and then forgotten)."""
        if not sid:
            return None
        key = digest(sid)
        with self.database.transaction() as conn:
            row = repo.touch_session(conn, key, self.idle_s)
            if row is None:
                repo.drop_session(conn, key)
                return None
            # deactivated since the sign-in: the session's roles no longer apply
            inactive = person_inactive(conn, row.person_id)
        session = _session(sid, row)
        if inactive:
            return replace(session, roles=session.roles - STAFF_ROLES)
        return session

    def drop(self, sid: str | None) -> None:
        if sid:
            with self.database.transaction() as conn:
                repo.drop_session(conn, digest(sid))


def _session(sid: str, row: repo.SessionRow) -> ConsoleSession:
    return ConsoleSession(
        sid=sid,
        person_id=row.person_id,
        roles=row.roles,
        csrf=row.csrf,
        created=row.created,
        last_seen=row.last_seen,
        expires=row.expires,
    )
