"""Bearer-style tokens: fetched, cached, renewed before they expire, refreshed once on 401."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from connectors.http.errors import ConnectorError, CredentialsError, SourceHTTPError
from connectors.http.ratelimit import Clock
from connectors.http.redaction import Redactor


class Authenticator(Protocol):
    def headers(self) -> dict[str, str]:
        """Auth headers for the next request, refreshing the token first when it is due."""
        ...

    def refresh(self, rejected: Mapping[str, str]) -> None:
        """Called once after a 401; ``rejected`` are the headers that were refused, so that
        when several threads hit the same 401 only the first one fetches a new token."""
        ...


class TokenEndpoint(Protocol):
    """What a token grant needs from the HTTP client (``SourceHttp`` is one)."""

    source: str
    redactor: Redactor

    def request(
        self,
        method: str,
        path: str,
        *,
        data: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        auth: Authenticator | None = None,
    ) -> httpx.Response: ...


@dataclass(frozen=True)
class TokenGrant:
    access_token: str
    expires_in: float
    refresh_token: str | None = None


def parse_expires_in(value: object, default: float = 1800.0) -> float:
    """``expires_in`` arrives as a number or as a string (NetDocuments, S5)."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int | float):
        return float(value) if value > 0 else default
    if isinstance(value, str):
        try:
            parsed = float(value.strip())
        except ValueError:
            return default
        return parsed if parsed > 0 else default
    return default


def _json_object(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


class TokenAuth:
    """Caches a bearer-style token and renews it before it expires.

    Subclasses say how to fetch a token (``_grant``) and how to send it (``_header``).
    Renewal happens ``early_s`` before expiry (120 s per the iManage guidance); for tokens
    shorter than twice that, at half their lifetime, so a short-lived token is not refreshed
    on every single request.
    """

    def __init__(
        self, http: TokenEndpoint, *, clock: Clock = time.monotonic, early_s: float = 120.0
    ):
        self.http = http
        self._clock = clock
        self._early_s = early_s
        self._lock = threading.Lock()
        self._grant_value: TokenGrant | None = None
        self._renew_at = 0.0
        self.grants = 0  # how many tokens were fetched, for the report and tests

    def _grant(self, refresh_token: str | None) -> TokenGrant:
        raise NotImplementedError

    def _header(self, token: str) -> dict[str, str]:
        raise NotImplementedError

    def _renew(self) -> None:
        previous = self._grant_value
        grant = self._grant(previous.refresh_token if previous else None)
        self.http.redactor.add(grant.access_token)
        self.http.redactor.add(grant.refresh_token)
        lifetime = grant.expires_in
        margin = self._early_s if lifetime > 2 * self._early_s else lifetime / 2
        self._grant_value = grant
        self._renew_at = self._clock() + lifetime - margin
        self.grants += 1

    def headers(self) -> dict[str, str]:
        with self._lock:
            if self._grant_value is None or self._clock() >= self._renew_at:
                self._renew()
            grant = self._grant_value
            if grant is None:  # _renew either sets it or raises
                raise ConnectorError(f"{self.http.source}: no token")
            return self._header(grant.access_token)

    def refresh(self, rejected: Mapping[str, str]) -> None:
        with self._lock:
            current = self._header(self._grant_value.access_token) if self._grant_value else {}
            if current and any(rejected.get(k) != v for k, v in current.items()):
                return  # another thread already replaced the refused token
            self._renew()

    def token_request(
        self, path: str, form: dict[str, str], headers: dict[str, str] | None = None
    ) -> TokenGrant:
        """POST a token form; any refusal becomes a SourceAuthError naming only the OAuth
        error code (e.g. ``invalid_grant``), never the credentials."""
        try:
            response = self.http.request("POST", path, data=form, headers=headers, auth=None)
        except SourceHTTPError as exc:
            if exc.status is not None and 400 <= exc.status < 500:
                raise CredentialsError(
                    exc.source,
                    exc.method,
                    exc.path,
                    exc.status,
                    f"token request refused: {exc.detail}",
                ) from None
            raise
        body = _json_object(response)
        token = body.get("access_token")
        if not isinstance(token, str) or not token:
            raise CredentialsError(
                self.http.source,
                "POST",
                path,
                response.status_code,
                "token response without access_token",
            )
        refresh = body.get("refresh_token")
        return TokenGrant(
            access_token=token,
            expires_in=parse_expires_in(body.get("expires_in")),
            refresh_token=refresh if isinstance(refresh, str) and refresh else None,
        )
