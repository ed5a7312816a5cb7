"""Shared request field types: trimmed, bounded, printable strings."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, StringConstraints

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_IDENT = re.compile(r"^[^\s/\\?#%]+(?: [^\s/\\?#%]+)*$")
_PRINCIPAL = re.compile(r"^[a-z0-9][a-z0-9_.-]*:(user|group):\S.*$")


def _no_control(value: str) -> str:
    if _CONTROL.search(value):
        raise ValueError("must not contain control characters")
    return value


def _identifier(value: str) -> str:
    if not _IDENT.match(value):
        raise ValueError("must not contain whitespace runs, '/', '\\', '?', '#' or '%'")
    return value


def _principal(value: str) -> str:
    value = value.strip().lower()
    if not _PRINCIPAL.match(value):
        raise ValueError("must look like '<source>:user:<id>' or '<source>:group:<id>'")
    return value


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("must carry a time zone (RFC 3339)")
    return value.astimezone(UTC)


Text = Annotated[str, StringConstraints(max_length=100_000), AfterValidator(_no_control)]
ShortText = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=1000), AfterValidator(_no_control)
]
Identifier = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    AfterValidator(_no_control),
    AfterValidator(_identifier),
]
Principal = Annotated[str, StringConstraints(max_length=400), AfterValidator(_principal)]
AwareDatetime = Annotated[datetime, AfterValidator(_aware)]
# A caller-chosen session id (a chat thread, an agent run): opaque, printable, bounded.
SessionId = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    AfterValidator(_no_control),
]
