"""A small synchronous HTTP layer that every source connector goes through.

Why one layer: the rules that keep a crawler safe against a firm's document system are the
same for every source and are easy to forget in one call site.

* An allow-list of (method, path pattern) per connector, checked before anything is sent. The
  crawler is read-only: no write endpoint and no "get or create" endpoint (NetDocuments N14)
  can be reached even by a bug, because the request never leaves the process.
* Retries for 429 (server-provided waits first), 502/503/504 and transport errors, bounded by
  ``connector_max_attempts``; waits go through an injectable ``sleep`` so tests run fast.
* A concurrency cap and a token-bucket rate limit shared by every client of one tenant.
* Secrets never reach a log line or an exception text: tokens and passwords are registered
  with a redactor, and auth headers are never formatted at all.
* One refresh of the credentials on 401, then the 401 stands.
"""

from __future__ import annotations

import email.utils
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import parse_qsl, quote, urlsplit

import httpx
from pydantic import SecretStr

from app.settings import Settings

log = logging.getLogger("ewall.connectors.http")

Sleep = Callable[[float], None]
Clock = Callable[[], float]
Params = Mapping[str, str | int | float | bool | None]

RETRY_STATUSES = frozenset({429, 502, 503, 504})
SENSITIVE_HEADERS = frozenset(
    {"authorization", "x-auth-token", "proxy-authorization", "cookie", "set-cookie"}
)


# --- errors ------------------------------------------------------------------------------------


class ConnectorError(Exception):
    """Anything a connector raises on purpose; the sync reports it instead of crashing."""


class RequestNotAllowedError(ConnectorError):
    """A request outside the connector's allow-list. Raised before anything is sent."""


class SourceHTTPError(ConnectorError):
    """A request that failed for good. ``status`` is None for transport failures."""

    def __init__(self, source: str, method: str, path: str, status: int | None, detail: str):
        self.source = source
        self.method = method
        self.path = path
        self.status = status
        self.detail = detail
        shown = "transport error" if status is None else f"HTTP {status}"
        super().__init__(f"{source}: {method} {path} failed: {shown}: {detail}".rstrip(": "))


class SourceAuthError(SourceHTTPError):
    """Credentials rejected (token grant refused, or 401 after one refresh)."""


class CredentialsError(SourceAuthError):
    """The token endpoint refused our credentials. Unlike a 401 on one document this says
    nothing about any document, so it must never be read as "access revoked"."""


# --- path helpers ------------------------------------------------------------------------------


def segment(value: object) -> str:
    """One URL path segment from an id that came from the source.

    Ids are data, not paths: a hostile or broken id such as ``../../x`` must not walk the
    request onto another endpoint (which the allow-list would then have to catch).
    """
    text = str(value)
    if text in ("", ".", ".."):
        raise ConnectorError(f"invalid id for a URL path segment: {text!r}")
    # '!' stays readable because iManage ids are LIB!num.ver; everything else unusual is encoded.
    return quote(text, safe="!~-._")


_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


@dataclass(frozen=True)
class Route:
    method: str
    pattern: str
    regex: re.Pattern[str]


def _compile(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    last = 0
    for match in _PLACEHOLDER.finditer(pattern):
        out.append(re.escape(pattern[last : match.start()]))
        out.append(r"[^/]+")
        last = match.end()
    out.append(re.escape(pattern[last:]))
    return re.compile("^" + "".join(out) + "$")


class AllowList:
    """The only requests a connector may send: exact methods, paths with ``{id}`` holes."""

    def __init__(self, source: str, routes: Iterable[tuple[str, str]]) -> None:
        self.source = source
        self.routes = tuple(Route(m.upper(), p, _compile(p)) for m, p in routes)

    def allows(self, method: str, path: str) -> bool:
        method = method.upper()
        return any(r.method == method and r.regex.match(path) for r in self.routes)

    def check(self, method: str, path: str) -> None:
        if not self.allows(method, path):
            raise RequestNotAllowedError(
                f"{self.source}: {method.upper()} {path} is not on the connector's allow-list"
            )


# --- rate limiting -----------------------------------------------------------------------------


class TokenBucket:
    """Requests per second with a small burst.

    ``reserve`` takes a token now and says how long to wait for it; the balance may go
    negative, which queues callers fairly without a polling loop and keeps the arithmetic
    right when the sleep is a no-op in tests.
    """

    def __init__(
        self, rate_per_s: float, burst: float | None = None, clock: Clock = time.monotonic
    ) -> None:
        if rate_per_s <= 0:
            raise ValueError("rate_per_s must be positive")
        self.rate = rate_per_s
        self.capacity = burst if burst is not None else max(1.0, rate_per_s)
        self._clock = clock
        self._tokens = self.capacity
        self._stamp = clock()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        with self._lock:
            now = self._clock()
            self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.rate


class TenantLimiter:
    def __init__(self, concurrency: int, rate_per_s: float) -> None:
        self.semaphore = threading.BoundedSemaphore(concurrency)
        self.bucket = TokenBucket(rate_per_s)
        self.concurrency = concurrency
        self.rate_per_s = rate_per_s


_LIMITERS: dict[tuple[str, int, float], TenantLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def limiter_for(tenant: str, concurrency: int, rate_per_s: float) -> TenantLimiter:
    """One limiter per tenant in this process, so two syncs against the same tenant (a full
    crawl and a delta, say) share the budget instead of doubling it."""
    key = (tenant, concurrency, rate_per_s)
    with _LIMITERS_LOCK:
        limiter = _LIMITERS.get(key)
        if limiter is None:
            limiter = _LIMITERS[key] = TenantLimiter(concurrency, rate_per_s)
        return limiter


# --- secrets -----------------------------------------------------------------------------------

_HEADER_LINE = re.compile(
    r"(?i)\b(authorization|x-auth-token|proxy-authorization|cookie)(\s*[:=]\s*)"
    r"(?:(?:bearer|basic)\s+)?[^\s,;'\"}]+"
)
_SCHEME_TOKEN = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")


class Redactor:
    """Scrubs registered secrets and auth headers out of any text meant for logs or errors."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._lock = threading.Lock()

    def add(self, secret: str | SecretStr | None) -> None:
        value = secret.get_secret_value() if isinstance(secret, SecretStr) else secret
        # Very short values would blank out ordinary words; they are not worth redacting.
        if value and len(value) >= 4:
            with self._lock:
                self._secrets.add(value)

    def __call__(self, text: str) -> str:
        with self._lock:
            secrets = sorted(self._secrets, key=len, reverse=True)
        for secret in secrets:
            text = text.replace(secret, "***")
        text = _HEADER_LINE.sub(r"\1\2***", text)
        return _SCHEME_TOKEN.sub(r"\1 ***", text)


def safe_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers fit for a log line."""
    return {k: ("***" if k.lower() in SENSITIVE_HEADERS else v) for k, v in headers.items()}


# --- auth --------------------------------------------------------------------------------------


class Authenticator(Protocol):
    def headers(self) -> dict[str, str]:
        """Auth headers for the next request, refreshing the token first when it is due."""
        ...

    def refresh(self, rejected: Mapping[str, str]) -> None:
        """Called once after a 401; ``rejected`` are the headers that were refused, so that
        when several threads hit the same 401 only the first one fetches a new token."""
        ...


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


class TokenAuth:
    """Caches a bearer-style token and renews it before it expires.

    Subclasses say how to fetch a token (``_grant``) and how to send it (``_header``).
    Renewal happens ``early_s`` before expiry (120 s per the iManage guidance); for tokens
    shorter than twice that, at half their lifetime, so a short-lived token is not refreshed
    on every single request.
    """

    def __init__(self, http: SourceHttp, *, clock: Clock = time.monotonic, early_s: float = 120.0):
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

    def token_request(self, path: str, form: dict[str, str], headers: dict[str, str] | None = None
                      ) -> TokenGrant:
        """POST a token form; any refusal becomes a SourceAuthError naming only the OAuth
        error code (e.g. ``invalid_grant``), never the credentials."""
        try:
            response = self.http.request("POST", path, data=form, headers=headers, auth=None)
        except SourceHTTPError as exc:
            if exc.status is not None and 400 <= exc.status < 500:
                raise CredentialsError(
                    exc.source, exc.method, exc.path, exc.status,
                    f"token request refused: {exc.detail}",
                ) from None
            raise
        body = _json_object(response)
        token = body.get("access_token")
        if not isinstance(token, str) or not token:
            raise CredentialsError(self.http.source, "POST", path, response.status_code,
                                   "token response without access_token")
        refresh = body.get("refresh_token")
        return TokenGrant(
            access_token=token,
            expires_in=parse_expires_in(body.get("expires_in")),
            refresh_token=refresh if isinstance(refresh, str) and refresh else None,
        )


def _json_object(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


# --- retries -----------------------------------------------------------------------------------


def _seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def retry_after_seconds(headers: httpx.Headers, now: datetime | None = None) -> float | None:
    """The wait a throttling response asks for, in the order iManage's own client prefers
    (S4): ``x-ratelimit-retryafter``, ``x-ratelimit-reset``, then the standard
    ``Retry-After`` (delta seconds or an HTTP date)."""
    now = now or datetime.now(UTC)
    seconds = _seconds(headers.get("x-ratelimit-retryafter"))
    if seconds is not None:
        return seconds
    reset = _seconds(headers.get("x-ratelimit-reset"))
    if reset is not None:
        # Either seconds until the reset or an epoch timestamp; no sane wait is 30+ years.
        return max(0.0, reset - now.timestamp()) if reset > 1e9 else reset
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _seconds(raw)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 60.0
    # A server asking for a longer pause than this is not throttling a crawler, it is down;
    # giving up is better than holding a sync for an hour.
    max_wait_s: float = 300.0
    # x-ratelimit-remaining at or below this: pause one backoff step before the next call.
    low_remaining: int = 10

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Exponential with "equal jitter": half fixed, half random, so retries of many
        workers spread out but never collapse to zero."""
        step = min(self.backoff_cap_s, self.backoff_base_s * 2 ** max(0, attempt - 1))
        return float(step / 2 + rng.uniform(0, step / 2))


# --- the client --------------------------------------------------------------------------------


class SourceHttp:
    """``httpx.Client`` with the allow-list, retries, limits and redaction above.

    One instance per tenant and connector; thread-safe (connectors fetch a page's documents
    in parallel, bounded by the tenant's semaphore).
    """

    def __init__(
        self,
        *,
        source: str,
        base_url: str,
        allow: AllowList,
        tenant: str | None = None,
        concurrency: int = 4,
        rate_per_s: float = 5.0,
        max_attempts: int = 5,
        timeout_s: float = 30.0,
        sleep: Sleep = time.sleep,
        rng: random.Random | None = None,
        transport: httpx.BaseTransport | None = None,
        policy: RetryPolicy | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConnectorError(f"{source}: base URL must be http(s)://host, got {base_url!r}")
        self.source = source
        self.base_url = base_url.rstrip("/")
        self._origin = (parts.scheme, parts.netloc.lower())
        self._prefix = parts.path.rstrip("/")
        self.allow = allow
        self.policy = policy or RetryPolicy(max_attempts=max_attempts)
        self.limiter = limiter_for(tenant or self.base_url, concurrency, rate_per_s)
        self.redactor = redactor or Redactor()
        self._sleep = sleep
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not cryptography
        self._client = httpx.Client(
            base_url=self.base_url, timeout=timeout_s, transport=transport,
            follow_redirects=False,  # a redirect could leave the allow-listed host
        )
        self.requests_sent = 0


    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        source: str,
        base_url: str,
        allow: AllowList,
        tenant: str,
        sleep: Sleep = time.sleep,
        rng: random.Random | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> SourceHttp:
        """The shared throttling and retry limits come from the connector settings."""
        return cls(
            source=source,
            base_url=base_url,
            allow=allow,
            tenant=tenant,
            concurrency=settings.connector_concurrency,
            rate_per_s=settings.connector_rate_per_s,
            max_attempts=settings.connector_max_attempts,
            timeout_s=settings.connector_timeout_s,
            sleep=sleep,
            rng=rng,
            transport=transport,
        )
    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:  # never shows headers or tokens
        return f"SourceHttp(source={self.source!r}, base_url={self.base_url!r})"

    def _relative(self, path_or_url: str) -> tuple[str, dict[str, str]]:
        """A path under our base, plus any query it carried (a server-given next link).
        Absolute URLs are accepted only for the configured origin."""
        parts = urlsplit(path_or_url)
        if (parts.scheme or parts.netloc) and (
            (parts.scheme, parts.netloc.lower()) != self._origin
        ):
            raise RequestNotAllowedError(
                    f"{self.source}: refusing to follow a link to another host ({parts.netloc})"
                )
        path = parts.path
        if self._prefix and path.startswith(self._prefix + "/"):
            path = path[len(self._prefix) :]
        if not path.startswith("/"):
            raise RequestNotAllowedError(f"{self.source}: relative path {path!r}")
        return path, dict(parse_qsl(parts.query, keep_blank_values=True))

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        data: Mapping[str, str] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        auth: Authenticator | None = None,
    ) -> httpx.Response:
        """Send one logical request; return the 2xx response or raise SourceHTTPError."""
        method = method.upper()
        path, link_query = self._relative(path)
        self.allow.check(method, path)
        query: dict[str, str] = dict(link_query)
        for key, value in (params or {}).items():
            if value is not None:
                query[key] = str(value).lower() if isinstance(value, bool) else str(value)
        attempt = 0
        refreshed = False
        while True:
            attempt += 1
            sent_headers = {"Accept": "application/json", **(headers or {})}
            if auth is not None:
                sent_headers.update(auth.headers())
            wait = self.limiter.bucket.reserve()
            if wait > 0:
                self._sleep(wait)
            response: httpx.Response | None = None
            failure: httpx.TransportError | None = None
            with self.limiter.semaphore:
                self.requests_sent += 1
                try:
                    response = self._client.request(
                        method, path, params=query or None, data=data, json=json,
                        headers=sent_headers,
                    )
                except httpx.TransportError as exc:
                    failure = exc
            if failure is not None:
                if attempt >= self.policy.max_attempts:
                    raise SourceHTTPError(
                        self.source, method, path, None,
                        self.redactor(f"{type(failure).__name__}: {failure}"),
                    ) from None
                delay = self.policy.backoff(attempt, self._rng)
                log.warning("connector request transport error, retrying",
                            extra={"source": self.source, "method": method, "path": path,
                                   "attempt": attempt, "error": type(failure).__name__,
                                   "wait_s": round(delay, 2)})
                self._sleep(delay)
                continue
            if response is None:  # unreachable: no failure means a response
                raise ConnectorError(f"{self.source}: no response")
            status = response.status_code
            if status == 401 and auth is not None and not refreshed:
                # One refresh per logical request; a second 401 means the account itself is
                # refused, and retrying would only lock it out.
                refreshed = True
                attempt -= 1
                auth.refresh(sent_headers)
                continue
            if status in RETRY_STATUSES:
                asked = retry_after_seconds(response.headers)
                delay = asked if asked is not None else self.policy.backoff(attempt, self._rng)
                if attempt >= self.policy.max_attempts or delay > self.policy.max_wait_s:
                    raise SourceHTTPError(self.source, method, path, status,
                                          self._detail(response))
                log.warning("connector request throttled or unavailable, retrying",
                            extra={"source": self.source, "method": method, "path": path,
                                   "status": status, "attempt": attempt,
                                   "wait_s": round(delay, 2)})
                self._sleep(delay)
                continue
            if response.is_success:
                self._pace(response)
                return response
            error = SourceAuthError if status == 401 else SourceHTTPError
            raise error(self.source, method, path, status, self._detail(response))

    def _pace(self, response: httpx.Response) -> None:
        remaining = _seconds(response.headers.get("x-ratelimit-remaining"))
        if remaining is not None and remaining <= self.policy.low_remaining:
            self._sleep(self.policy.backoff_base_s)

    def _detail(self, response: httpx.Response) -> str:
        """A short, redacted excerpt of an error body: enough for ``invalid_grant``."""
        try:
            text = response.text
        except (UnicodeDecodeError, httpx.ResponseNotRead):
            return ""
        return self.redactor(" ".join(text.split())[:200])

    def get_json(self, path: str, *, params: Params | None = None,
                 auth: Authenticator | None = None) -> Any:
        response = self.request("GET", path, params=params, auth=auth)
        try:
            return response.json()
        except ValueError:
            raise SourceHTTPError(self.source, "GET", path, response.status_code,
                                  "response is not JSON") from None

    def post_json(self, path: str, body: Any, *, auth: Authenticator | None = None) -> Any:
        response = self.request("POST", path, json=body, auth=auth)
        try:
            return response.json()
        except ValueError:
            raise SourceHTTPError(self.source, "POST", path, response.status_code,
                                  "response is not JSON") from None


# --- tolerant response parsing -------------------------------------------------------------------
# Shapes marked [O]/[U] in docs/connectors.md differ in casing and key names between endpoints
# and versions; these helpers accept the aliases so one parser serves every variant.


def pick(obj: object, *names: str) -> Any:
    """The first present key among ``names``: exact spelling first, then any casing."""
    if not isinstance(obj, Mapping):
        return None
    for name in names:
        if name in obj:
            return obj[name]
    lowered = {str(k).lower(): v for k, v in obj.items()}
    for name in names:
        if name.lower() in lowered:
            return lowered[name.lower()]
    return None


def has_key(obj: object, *names: str) -> bool:
    if not isinstance(obj, Mapping):
        return False
    keys = {str(k).lower() for k in obj}
    return any(n.lower() in keys for n in names)


def as_list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def as_text(value: object) -> str | None:
    """A display string; numbers are fine, containers are not."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    if isinstance(value, str):
        return value
    return None


_MS_DATE = re.compile(r"^/Date\((-?\d+)([+-]\d{4})?\)/$")


def parse_datetime(value: object) -> datetime | None:
    """ISO 8601 (``Z`` or an offset; naive values are taken as UTC), epoch seconds or ms,
    or the .NET ``/Date(ms)/`` form. Anything else is None, not a guess."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    match = _MS_DATE.match(text)
    if match:
        return datetime.fromtimestamp(int(match.group(1)) / 1000, UTC)
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_DISPOSITION_STAR = re.compile(r"filename\*\s*=\s*([^']*)'[^']*'([^;]+)", re.IGNORECASE)
_DISPOSITION = re.compile(r'filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))', re.IGNORECASE)


def disposition_filename(header: str | None) -> str | None:
    """The filename of a Content-Disposition header (RFC 6266, incl. ``filename*``)."""
    if not header:
        return None
    from urllib.parse import unquote

    star = _DISPOSITION_STAR.search(header)
    if star:
        return unquote(star.group(2).strip(), encoding=star.group(1) or "utf-8", errors="replace")
    plain = _DISPOSITION.search(header)
    if plain:
        name = plain.group(1) if plain.group(1) is not None else plain.group(2)
        return name.replace('\\"', '"').strip() or None
    return None


_EXTRA_TYPES = {
    ".msg": "application/vnd.ms-outlook",
    ".eml": "message/rfc822",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".doc": "application/msword",
    ".pdf": "application/pdf",
    ".txt": "text/plain",
    ".htm": "text/html",
    ".html": "text/html",
    ".xml": "application/xml",
    ".rtf": "application/rtf",
}


def guess_mime(filename: str | None, extension: str | None = None,
               content_type: str | None = None) -> str:
    """Mime type from the download's filename, else the profile's extension, else the
    response's Content-Type; ``application/octet-stream`` when nothing says more."""
    import mimetypes

    for name in (filename, f"x.{extension.lstrip('.')}" if extension else None):
        if not name:
            continue
        suffix = ("." + name.rsplit(".", 1)[-1].lower()) if "." in name else ""
        if suffix in _EXTRA_TYPES:
            return _EXTRA_TYPES[suffix]
        guessed, _ = mimetypes.guess_type(name, strict=False)
        if guessed:
            return guessed
    if content_type:
        base = content_type.split(";", 1)[0].strip().lower()
        if base and base not in ("application/octet-stream", "binary/octet-stream"):
            return base
    return "application/octet-stream"
