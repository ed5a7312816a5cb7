"""Console sign-in against the OIDC issuer: authorization code flow with PKCE (RFC 7636).

`begin` makes a random state, nonce and code verifier, keeps them in PostgreSQL
(``console_oidc_pending``, for ten minutes, taken once, keyed by the state's SHA-256) so that
the issuer's redirect may reach any API process, and returns the issuer's authorization URL
with the S256 challenge.
`finish` takes the state and code the issuer sent back, redeems the code with the verifier
at the token endpoint, checks the ID token (signature via the issuer's keys, issuer,
audience = the console's client id, and the nonce) and returns the access token, which the
caller verifies exactly as the API verifies a bearer token: the roles come from there.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
import jwt

from app.auth.service import SigningKeys
from app.console import session_repository as repo
from app.console.sessions import digest
from app.db.engine import Database
from app.errors import AppError
from app.settings import Settings

PENDING_TTL_S = 600
SWEEP_BATCH = 100  # lapsed sign-ins deleted per new one
HTTP_TIMEOUT_S = 10.0


class SignInFailed(AppError):
    def __init__(self, message: str) -> None:
        super().__init__("sign_in_failed", message, 401)


@dataclass(frozen=True)
class PendingLogin:
    state: str
    nonce: str
    verifier: str
    redirect_uri: str
    next_url: str


def code_challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


class OidcClient:
    def __init__(self, settings: Settings, database: Database) -> None:
        if not (settings.oidc_issuer and settings.console_oidc_client_id):
            raise SignInFailed(
                "The console's OIDC sign-in needs EWALL_OIDC_ISSUER and "
                "EWALL_CONSOLE_OIDC_CLIENT_ID."
            )
        self.settings = settings
        self.issuer = settings.oidc_issuer.rstrip("/")
        self.client_id = settings.console_oidc_client_id
        self.database = database
        self._metadata: dict[str, Any] | None = None
        self._keys: jwt.PyJWKClient | None = None

    # --- issuer metadata ------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        if self._metadata is None:
            url = f"{self.issuer}/.well-known/openid-configuration"
            try:
                response = httpx.get(url, timeout=HTTP_TIMEOUT_S)
                response.raise_for_status()
                meta = response.json()
            except (httpx.HTTPError, ValueError) as exc:
                raise SignInFailed(
                    "The identity provider's configuration could not be read."
                ) from exc
            needed = ("authorization_endpoint", "token_endpoint")
            if not isinstance(meta, dict) or any(not meta.get(k) for k in needed):
                raise SignInFailed("The identity provider's configuration is incomplete.")
            if meta.get("issuer", self.settings.oidc_issuer) != self.settings.oidc_issuer:
                raise SignInFailed("The identity provider names another issuer.")
            self._metadata = meta
        return self._metadata

    def _signing_keys(self) -> jwt.PyJWKClient:
        if self._keys is None:
            url = self.settings.oidc_jwks_url or self.metadata().get("jwks_uri")
            if not url:
                raise SignInFailed("The identity provider publishes no signing keys.")
            self._keys = SigningKeys(str(url))
        return self._keys

    # --- the flow -------------------------------------------------------------------------

    def begin(self, redirect_uri: str, next_url: str) -> tuple[str, str]:
        """(authorization URL, state)."""
        meta = self.metadata()
        login = PendingLogin(
            state=secrets.token_urlsafe(32),
            nonce=secrets.token_urlsafe(32),
            verifier=secrets.token_urlsafe(64),  # 86 characters of the allowed alphabet
            redirect_uri=redirect_uri,
            next_url=next_url,
        )
        with self.database.transaction() as conn:
            repo.sweep_pending_sign_ins(conn, SWEEP_BATCH)
            repo.add_pending_sign_in(
                conn,
                state_sha256=digest(login.state),
                nonce=login.nonce,
                verifier=login.verifier,
                redirect_uri=login.redirect_uri,
                next_url=login.next_url,
                ttl_s=PENDING_TTL_S,
            )
        query = urlencode(
            {
                "response_type": "code",
                "client_id": self.client_id,
                "redirect_uri": redirect_uri,
                "scope": self.settings.console_oidc_scopes,
                "state": login.state,
                "nonce": login.nonce,
                "code_challenge": code_challenge(login.verifier),
                "code_challenge_method": "S256",
            }
        )
        endpoint = str(meta["authorization_endpoint"])
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}", login.state

    def take(self, state: str) -> PendingLogin:
        """The pending login of ``state``, once; refused when unknown or too old."""
        with self.database.transaction() as conn:
            row = repo.take_pending_sign_in(conn, digest(state))
        if row is None or not row.live:
            raise SignInFailed("This sign-in is unknown or has expired; start again.")
        return PendingLogin(state, row.nonce, row.verifier, row.redirect_uri, row.next_url)

    def finish(self, login: PendingLogin, code: str) -> str:
        """Redeem the code; check the ID token; return the access token."""
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": login.redirect_uri,
            "client_id": self.client_id,
            "code_verifier": login.verifier,
        }
        if self.settings.console_oidc_client_secret is not None:
            form["client_secret"] = self.settings.console_oidc_client_secret.get_secret_value()
        try:
            response = httpx.post(
                str(self.metadata()["token_endpoint"]), data=form, timeout=HTTP_TIMEOUT_S
            )
            tokens = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise SignInFailed("The identity provider did not answer the code exchange.") from exc
        if response.status_code != 200 or not isinstance(tokens, dict):
            raise SignInFailed("The identity provider refused the code exchange.")
        id_token, access_token = tokens.get("id_token"), tokens.get("access_token")
        if not isinstance(id_token, str) or not isinstance(access_token, str):
            raise SignInFailed("The identity provider sent no ID token or access token.")
        self._check_id_token(id_token, login.nonce)
        return access_token

    def _check_id_token(self, id_token: str, nonce: str) -> None:
        try:
            key = self._signing_keys().get_signing_key_from_jwt(id_token)
            claims = jwt.decode(
                id_token,
                key.key,
                algorithms=["RS256", "ES256"],
                audience=self.client_id,
                issuer=self.settings.oidc_issuer,
                leeway=self.settings.token_leeway_s,
                options={"require": ["exp", "iat", "sub"]},
            )
        except jwt.PyJWTError as exc:
            raise SignInFailed("The ID token is not valid.") from exc
        if not secrets.compare_digest(str(claims.get("nonce", "")), nonce):
            raise SignInFailed("The ID token belongs to another sign-in (nonce mismatch).")
