"""Bearer tokens: HS256 development tokens, RS256/ES256 OIDC tokens via JWKS.

Claims used: ``sub`` (person id) and ``roles`` (list; the claim name is a setting).
Development tokens are signed with the key of ``app.auth.keys`` and live at most
``DEV_TOKEN_MAX_TTL_S``: a longer one is refused at verification, whoever signed it.
"""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import jwt

from app.auth.keys import DEV_TOKEN_MAX_TTL_S, InsecureConfiguration, dev_signing_key
from app.errors import AppError, Unauthenticated
from app.settings import Settings
from app.types import storable

log = logging.getLogger("ewall.auth")

ROLES = ("lawyer", "conflicts", "compliance", "admin")
# The roles that act on the matrix, the audit log and the documents of the whole firm. A
# person the matrix marks inactive (left, suspended) keeps none of them, whatever a token the
# identity provider issued before still says (app/deps.py, app/console/sessions.py).
STAFF_ROLES = frozenset({"conflicts", "compliance", "admin"})
# characters: an OIDC subject is at most 255 ASCII characters (OpenID Connect Core 1.0,
# section 2); a person id of the matrix at most 200
MAX_SUBJECT = 400
DEV_AUDIENCE = "ewall"


@dataclass(frozen=True)
class Principal:
    person_id: str
    roles: frozenset[str]
    claims: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def has_any(self, *roles: str) -> bool:
        return bool(self.roles.intersection(roles))

    def without(self, roles: frozenset[str]) -> Principal:
        return Principal(self.person_id, self.roles - roles, self.claims)


def subject_problem(sub: str) -> str | None:
    """Why ``sub`` cannot name a person, or None. It is written to the audit log and the
    budget tables as the person id: " alice" or "alice<zero-width space>" would be another
    person who prints like alice, and a line break splits a line of a report."""
    if not sub.strip():
        return "it is empty"
    if sub != sub.strip():
        return "it begins or ends with white space"
    if len(sub) > MAX_SUBJECT:
        return f"it is longer than {MAX_SUBJECT} characters"
    if not storable(sub) or any(_invisible(c) for c in sub):
        return "it holds control or invisible characters"
    return None


_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
# default-ignorable characters of other categories: a combining grapheme joiner, variation
# selectors, the Hangul fillers and the blank Braille pattern (a review of 2026-12-06)
_BLANKS = frozenset("\u034f\u115f\u1160\u2800\u3164\uffa0")


def _invisible(char: str) -> bool:
    code = ord(char)
    return (
        unicodedata.category(char) in _HIDDEN_CATEGORIES
        or char in _BLANKS
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
    )


def issue_dev_token(settings: Settings, sub: str, roles: list[str], ttl_s: int = 8 * 3600) -> str:
    unknown = [r for r in roles if r not in ROLES]
    if unknown:
        raise ValueError(f"unknown role(s) {unknown}; choose from {', '.join(ROLES)}")
    problem = subject_problem(sub)
    if problem:
        raise ValueError(f"sub cannot name a person: {problem}")
    if not 0 < ttl_s <= DEV_TOKEN_MAX_TTL_S:
        raise ValueError(
            f"ttl must be between 1 and {DEV_TOKEN_MAX_TTL_S} seconds "
            f"({DEV_TOKEN_MAX_TTL_S // 3600} h)"
        )
    now = int(time.time())
    claims = {
        "sub": sub,
        "roles": roles,
        "iss": settings.dev_issuer,
        "aud": DEV_AUDIENCE,
        "iat": now,
        "nbf": now,
        "exp": now + ttl_s,
    }
    return jwt.encode(claims, dev_signing_key(settings), algorithm="HS256")


# How long a fetched key set is trusted: a key the issuer withdraws (rotation, or a leak)
# is refused at most this long after. A key id not in the cached set refetches it at once.
JWKS_CACHE_S = 300.0
JWKS_TIMEOUT_S = 5.0  # a fetch of the key set, on the thread of the request that needs it
# A key id the cached set lacks refetches the set at most this often (PyJWT's cooldown,
# 2.14 on): random key ids in forged tokens cannot hammer the issuer.
JWKS_REFETCH_COOLDOWN_S = 30.0
# While the issuer cannot be reached, the last key set fetched stands in for this long after
# it was fetched; then tokens are refused (503) until the issuer answers again.
JWKS_STALE_MAX_S = 3600.0


class SigningKeys(jwt.PyJWKClient):
    """The issuer's key set, cached whole for ``JWKS_CACHE_S``. Not per key as well (PyJWT's
    ``cache_keys``): that cache never expires, so a withdrawn key that had signed a token
    once stayed trusted until the process restarted. One fetch at a time, and it holds up
    only the requests that need it: a token whose key the set holds verifies at once, also
    while another request refetches the set (for a key id the set lacks, or at its expiry;
    then the set it replaces serves until JWKS_TIMEOUT_S past its expiry). Before, every
    check waited behind PyJWT's client lock for the fetch, up to JWKS_TIMEOUT_S each. An
    issuer that cannot be reached does not sign every lawyer out: the last set fetched
    serves for up to ``JWKS_STALE_MAX_S``."""

    def __init__(self, url: str) -> None:
        super().__init__(
            url,
            cache_keys=False,
            cache_jwk_set=True,
            lifespan=JWKS_CACHE_S,
            timeout=JWKS_TIMEOUT_S,
            cooldown_duration=JWKS_REFETCH_COOLDOWN_S,
        )
        self._fetching = threading.RLock()
        self._fetches = 0  # sets fetched from the issuer
        self._good: tuple[float, jwt.PyJWKSet] | None = None  # (fetched at, set)
        # (cached at, set): what the cache serves, read without a lock
        self._served: tuple[float, jwt.PyJWKSet] | None = None

    def get_signing_key(self, kid: str) -> jwt.PyJWK:
        key = self._cached_key(kid, JWKS_CACHE_S)
        if key is not None:
            return key
        if not self._fetching.acquire(blocking=False):
            # another request is fetching the set: a key of the set it replaces serves
            key = self._cached_key(kid, JWKS_CACHE_S + JWKS_TIMEOUT_S)
            if key is not None:
                return key
            self._fetching.acquire()  # a key id the set lacks waits for the new one
        try:
            return super().get_signing_key(kid)
        finally:
            self._fetching.release()

    def _cached_key(self, kid: str, within_s: float) -> jwt.PyJWK | None:
        """The signing key ``kid`` of the cached set, if that was cached ``within_s`` ago; as
        PyJWT picks them: a key whose use is signing or unsaid, named by a key id."""
        served = self._served
        if not kid or served is None or time.monotonic() - served[0] > within_s:
            return None
        return next(
            (k for k in served[1].keys if k.key_id == kid and k.public_key_use in ("sig", None)),
            None,
        )

    def fetch_data(self) -> Any:
        data = super().fetch_data()
        self._fetches += 1  # under self._fetching (get_jwk_set)
        return data

    def get_jwk_set(self, refresh: bool = False) -> jwt.PyJWKSet:
        with self._fetching:
            fetches = self._fetches
            try:
                found = super().get_jwk_set(refresh)
            except jwt.PyJWKClientConnectionError:
                good = self._good
                if good is None or time.monotonic() - good[0] > JWKS_STALE_MAX_S:
                    raise
                log.warning("the identity provider's key set is unreachable; using the last")
                if self.jwk_set_cache is not None:  # no refetch on every request meanwhile
                    self.jwk_set_cache.put(good[1])
                    self._served = (time.monotonic(), good[1])
                return good[1]
            if self._fetches != fetches:  # not a cache hit: the issuer's set as of now
                self._good = self._served = (time.monotonic(), found)
            return found


class TokenVerifier:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._jwks: SigningKeys | None = None
        # resolved at the first development token, so processes that never verify one (the
        # job worker, the evaluation CLI) need no key
        self._dev_key: str | None = None
        if settings.auth_mode == "oidc":
            if not (settings.oidc_jwks_url and settings.oidc_issuer and settings.oidc_audience):
                raise RuntimeError(
                    "EWALL_AUTH_MODE=oidc needs EWALL_OIDC_JWKS_URL, EWALL_OIDC_ISSUER and "
                    "EWALL_OIDC_AUDIENCE"
                )
            self._jwks = SigningKeys(settings.oidc_jwks_url)

    def verify(self, token: str) -> Principal:
        try:
            claims = self._decode(token)
        except jwt.PyJWKClientConnectionError as exc:
            raise AppError(
                "identity_provider_unavailable",
                "The identity provider's signing keys cannot be fetched; try again shortly.",
                status=503,
            ) from exc
        except jwt.PyJWKClientError as exc:
            raise Unauthenticated("The token's signing key could not be resolved.") from exc
        except jwt.ExpiredSignatureError as exc:
            raise Unauthenticated("The token has expired.") from exc
        except (jwt.PyJWTError, TypeError, ValueError) as exc:
            # PyJWTError: InvalidTokenError and the rest; TypeError and ValueError: claims or
            # keys of a shape the library did not expect. Never a 500 for an unsigned token.
            raise Unauthenticated("The token is not valid.") from exc
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub.strip():
            raise Unauthenticated("The token has no subject.")
        # the subject is written to the audit log and the budget tables as the person id;
        # " alice" would be another person than "alice"
        if subject_problem(sub):
            raise Unauthenticated("The token's subject cannot name a person.")
        raw_roles = claims.get(self.settings.oidc_roles_claim, [])
        if isinstance(raw_roles, str):
            raw_roles = raw_roles.split()
        if not isinstance(raw_roles, list):
            raw_roles = []
        roles = frozenset(str(r).lower() for r in raw_roles if str(r).lower() in ROLES)
        # in NFC, as the matrix reads its ids (app/types.py): "josé" decomposed is josé
        person_id = unicodedata.normalize("NFC", sub)
        return Principal(person_id=person_id, roles=roles, claims=claims)

    def _decode(self, token: str) -> dict[str, Any]:
        s = self.settings
        options: Any = {"require": ["exp", "sub"]}
        if s.auth_mode == "dev":
            claims: dict[str, Any] = jwt.decode(
                token,
                self._development_key(),
                algorithms=["HS256"],
                audience=DEV_AUDIENCE,
                issuer=s.dev_issuer,
                leeway=s.token_leeway_s,
                options={"require": ["exp", "sub", "iat"]},
            )
            self._check_lifetime(claims)
            return claims
        if self._jwks is None:  # constructor guarantees it in oidc mode
            raise Unauthenticated("No key set is configured.")
        key = self._jwks.get_signing_key_from_jwt(token)
        # the PyJWK itself, not its raw key: the signature is checked with the key's own
        # algorithm, so a header naming ES256 for an RSA key is refused, not tried
        return jwt.decode(
            token,
            key,
            algorithms=["RS256", "ES256"],
            audience=s.oidc_audience,
            issuer=s.oidc_issuer,
            leeway=s.token_leeway_s,
            options=options,
        )

    def _development_key(self) -> str:
        if self._dev_key is None:
            try:
                self._dev_key = dev_signing_key(self.settings)
            except InsecureConfiguration as exc:
                raise Unauthenticated("Development tokens are not accepted here.") from exc
        return self._dev_key

    def _check_lifetime(self, claims: dict[str, Any]) -> None:
        exp, iat = claims["exp"], claims["iat"]
        # jwt.decode accepts numeric strings ("1796..."): the subtraction below needs numbers
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (exp, iat)):
            raise Unauthenticated("The token's exp and iat must be numbers.")
        longest = DEV_TOKEN_MAX_TTL_S + self.settings.token_leeway_s
        # exp - now as well: an iat set in the future would otherwise stretch the window
        if exp - iat > DEV_TOKEN_MAX_TTL_S or exp - time.time() > longest:
            raise Unauthenticated(
                f"A development token may live {DEV_TOKEN_MAX_TTL_S // 3600} hours at most."
            )


def bearer_principal(header: str, verifier: TokenVerifier) -> Principal:
    """The principal of an ``Authorization: Bearer <token>`` header; 401 otherwise."""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated()
    return verifier.verify(token.strip())
