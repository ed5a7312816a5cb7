"""The HTTP layer every source connector goes through, one module per concern.

* ``errors``: what a connector raises on purpose.
* ``allowlist``: the (method, path) pairs a connector may send; ``segment`` for ids in paths;
  ``same_server`` for the clients that follow redirects.
* ``ratelimit``: per-tenant concurrency cap and token bucket.
* ``redaction``: secrets out of log lines and error texts.
* ``auth``: cached, renewed tokens; one refresh on 401.
* ``retry``: which answers are retried and how long to wait.
* ``client``: ``SourceHttp``, which applies all of the above to every request.
* ``lenient``: tolerant reading of JSON answers whose shapes vary.
* ``mime``: download filenames and MIME types.

The names below are the package's public surface, importable as ``connectors.http.X``.
"""

from connectors.http.allowlist import AllowList, Route, segment
from connectors.http.auth import Authenticator, TokenAuth, TokenGrant, parse_expires_in
from connectors.http.client import Params, SourceHttp
from connectors.http.errors import (
    ConnectorError,
    CredentialsError,
    RequestNotAllowedError,
    SourceAuthError,
    SourceHTTPError,
)
from connectors.http.lenient import (
    as_int,
    as_list,
    as_text,
    has_key,
    is_true,
    iso_utc,
    parse_datetime,
    pick,
)
from connectors.http.mime import disposition_filename, guess_mime
from connectors.http.ratelimit import Clock, TenantLimiter, TokenBucket, limiter_for
from connectors.http.redaction import Redactor
from connectors.http.retry import RETRY_STATUSES, RetryPolicy, Sleep, retry_after_seconds

__all__ = [
    "RETRY_STATUSES",
    "AllowList",
    "Authenticator",
    "Clock",
    "ConnectorError",
    "CredentialsError",
    "Params",
    "Redactor",
    "RequestNotAllowedError",
    "RetryPolicy",
    "Route",
    "Sleep",
    "SourceAuthError",
    "SourceHTTPError",
    "SourceHttp",
    "TenantLimiter",
    "TokenAuth",
    "TokenBucket",
    "TokenGrant",
    "as_int",
    "as_list",
    "as_text",
    "disposition_filename",
    "guess_mime",
    "has_key",
    "is_true",
    "iso_utc",
    "limiter_for",
    "parse_datetime",
    "parse_expires_in",
    "pick",
    "retry_after_seconds",
    "segment",
]
