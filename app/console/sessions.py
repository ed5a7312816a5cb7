"""Console sessions: server-side, in this process, keyed by a random id in a cookie.

The cookie carries nothing but the id (HttpOnly, SameSite=Strict, Secure over HTTPS, path
/console), so signing out or an idle timeout ends the session for good: there is nothing a
copied cookie could still prove. The person and roles come from the token verified at
sign-in and never change during the session; the session ends at the token's expiry at the
latest. Each session has its own CSRF token, checked on every POST. A restart signs
everyone out (sessions are not shared between processes: run one console process, or put a
sticky load balancer in front).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from app.auth.service import Principal

COOKIE = "ewall_console"
SIGNIN_COOKIE = "ewall_console_signin"  # double-submit CSRF token of the sign-in form
OIDC_COOKIE = "ewall_console_oidc"  # the state of an OIDC sign-in in progress
COOKIE_PATH = "/console"
MAX_SESSIONS = 10_000


@dataclass
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


class SessionStore:
    def __init__(self, idle_s: int, max_s: int, clock: Callable[[], float] = time.time) -> None:
        self.idle_s = idle_s
        self.max_s = max_s
        self.clock = clock
        self._lock = threading.Lock()
        self._sessions: dict[str, ConsoleSession] = {}

    def create(self, principal: Principal) -> ConsoleSession:
        now = self.clock()
        expires = now + self.max_s
        exp = principal.claims.get("exp")
        if isinstance(exp, int | float):
            expires = min(expires, float(exp))
        session = ConsoleSession(
            sid=secrets.token_urlsafe(32),
            person_id=principal.person_id,
            roles=principal.roles,
            csrf=secrets.token_urlsafe(32),
            created=now,
            last_seen=now,
            expires=expires,
        )
        with self._lock:
            if len(self._sessions) >= MAX_SESSIONS:
                self._prune(now)
            self._sessions[session.sid] = session
        return session

    def get(self, sid: str | None) -> ConsoleSession | None:
        """The live session for ``sid``, touched; None when unknown, idle too long or
        expired (and then forgotten)."""
        if not sid:
            return None
        now = self.clock()
        with self._lock:
            session = self._sessions.get(sid)
            if session is None:
                return None
            if now - session.last_seen > self.idle_s or now >= session.expires:
                del self._sessions[sid]
                return None
            session.last_seen = now
            return session

    def drop(self, sid: str | None) -> None:
        if sid:
            with self._lock:
                self._sessions.pop(sid, None)

    def _prune(self, now: float) -> None:
        dead = [
            sid
            for sid, s in self._sessions.items()
            if now - s.last_seen > self.idle_s or now >= s.expires
        ]
        for sid in dead:
            del self._sessions[sid]
        if len(self._sessions) >= MAX_SESSIONS:  # still full: the least recently used go
            for sid, _ in sorted(self._sessions.items(), key=lambda kv: kv[1].last_seen)[
                : len(self._sessions) // 10 or 1
            ]:
                del self._sessions[sid]
