"""``SourceHttp``: the one synchronous HTTP client every source connector goes through.

Why one client: the rules that keep a crawler safe against a firm's document system are the
same for every source and are easy to forget in one call site. It applies the allow-list
(``allowlist``), retries (``retry``), the tenant's limits (``ratelimit``), redaction
(``redaction``) and one refresh of the credentials on 401, after which the 401 stands.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

from app.ingest.extract.mime import MAX_CONTENT_BYTES
from app.settings import Settings
from connectors.http.allowlist import AllowList
from connectors.http.auth import Authenticator
from connectors.http.errors import (
    ConnectorError,
    RequestNotAllowedError,
    SourceAuthError,
    SourceHTTPError,
)
from connectors.http.ratelimit import limiter_for
from connectors.http.redaction import Redactor
from connectors.http.retry import (
    RETRY_STATUSES,
    RetryPolicy,
    Sleep,
    header_seconds,
    retry_after_seconds,
)

log = logging.getLogger("ewall.connectors.http")

Params = Mapping[str, str | int | float | bool | None]

# After the first timeout_s, an answer must keep arriving at this average rate at least: a
# server that drips a byte every few seconds never trips httpx's timeout (it applies to each
# read), and would hold the run and its source's sync lock for ever.
MIN_RATE_BYTES_PER_S = 32 * 1024
# At most this much of an answer is kept: a download past the extraction limit is refused
# there (a report entry), and a multi-GB file never sits in memory whole.
MAX_BODY_BYTES = MAX_CONTENT_BYTES + 1
# Headers that describe the body as it came over the wire, not as it is kept (decoded).
_WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class SourceHttp:
    """``httpx.Client`` with the allow-list, retries, limits and redaction.

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
        self.timeout_s = timeout_s
        self._client = httpx.Client(
            base_url=self.base_url,
            timeout=timeout_s,
            transport=transport,
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
                    response = self._receive(
                        method,
                        path,
                        params=query or None,
                        data=data,
                        json=json,
                        headers=sent_headers,
                    )
                except httpx.TransportError as exc:
                    failure = exc
            if failure is not None:
                if attempt >= self.policy.max_attempts:
                    raise SourceHTTPError(
                        self.source,
                        method,
                        path,
                        None,
                        self.redactor(f"{type(failure).__name__}: {failure}"),
                    ) from None
                delay = self.policy.backoff(attempt, self._rng)
                log.warning(
                    "connector request transport error, retrying",
                    extra={
                        "source": self.source,
                        "method": method,
                        "path": path,
                        "attempt": attempt,
                        "error": type(failure).__name__,
                        "wait_s": round(delay, 2),
                    },
                )
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
                    raise SourceHTTPError(self.source, method, path, status, self._detail(response))
                log.warning(
                    "connector request throttled or unavailable, retrying",
                    extra={
                        "source": self.source,
                        "method": method,
                        "path": path,
                        "status": status,
                        "attempt": attempt,
                        "wait_s": round(delay, 2),
                    },
                )
                self._sleep(delay)
                continue
            if response.is_success:
                self._pace(response)
                return response
            error = SourceAuthError if status == 401 else SourceHTTPError
            raise error(self.source, method, path, status, self._detail(response))

    def _receive(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """One attempt, its answer read whole under a deadline that grows with what arrives
        (``MIN_RATE_BYTES_PER_S``) and cut at ``MAX_BODY_BYTES``; a slow drip raises
        ReadTimeout, which is retried like any timeout."""
        started = time.monotonic()
        with self._client.stream(method, path, **kw) as streamed:
            parts: list[bytes] = []
            size = 0
            for part in streamed.iter_bytes():
                parts.append(part[: MAX_BODY_BYTES - size])
                size += len(part)
                if size >= MAX_BODY_BYTES:
                    break  # the rest is not read: the caller refuses an answer this large
                allowed = self.timeout_s + size / MIN_RATE_BYTES_PER_S
                if time.monotonic() - started > allowed:
                    raise httpx.ReadTimeout(
                        f"the answer came slower than {MIN_RATE_BYTES_PER_S // 1024} KB/s "
                        f"({size} bytes in {time.monotonic() - started:.0f} s)",
                        request=streamed.request,
                    )
            headers = [
                (k, v) for k, v in streamed.headers.multi_items() if k.lower() not in _WIRE_HEADERS
            ]
            return httpx.Response(
                streamed.status_code,
                headers=headers,
                content=b"".join(parts),
                request=streamed.request,
            )

    def _pace(self, response: httpx.Response) -> None:
        remaining = header_seconds(response.headers.get("x-ratelimit-remaining"))
        if remaining is not None and remaining <= self.policy.low_remaining:
            self._sleep(self.policy.backoff_base_s)

    def _detail(self, response: httpx.Response) -> str:
        """A short, redacted excerpt of an error body: enough for ``invalid_grant``."""
        try:
            text = response.text
        except (UnicodeDecodeError, httpx.ResponseNotRead):
            return ""
        return self.redactor(" ".join(text.split())[:200])

    def get_json(
        self, path: str, *, params: Params | None = None, auth: Authenticator | None = None
    ) -> Any:
        return self._json("GET", path, self.request("GET", path, params=params, auth=auth))

    def post_json(self, path: str, body: Any, *, auth: Authenticator | None = None) -> Any:
        return self._json("POST", path, self.request("POST", path, json=body, auth=auth))

    def _json(self, method: str, path: str, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            raise SourceHTTPError(
                self.source, method, path, response.status_code, "response is not JSON"
            ) from None
