"""The exceptions every connector raises on purpose; the sync reports them instead of
crashing."""

from __future__ import annotations


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
