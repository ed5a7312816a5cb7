"""Secrets never reach a log line or an exception text: tokens and passwords are registered
with a redactor, and auth headers are never formatted at all."""

from __future__ import annotations

import re
import threading

from pydantic import SecretStr

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
