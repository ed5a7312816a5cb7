"""Tolerant reading of JSON answers.

Shapes marked [O]/[U] in docs/dms-apis.md differ in casing and key names between endpoints
and versions; these helpers accept the aliases so one parser serves every variant, and turn
anything they cannot read into None rather than a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any


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


def shape(body: object) -> str:
    """What an answer looks like, without its content (reports and logs hold no document
    data): its type, or an object's first keys."""
    if isinstance(body, Mapping):
        return "object with " + (", ".join(sorted(str(k) for k in body)[:8]) or "no keys")
    return type(body).__name__


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


def as_int(value: object) -> int | None:
    """An integer, or a string of digits (with an optional minus); anything else is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def is_true(value: object) -> bool:
    """True for JSON ``true`` and for the string ``"true"`` in any casing."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


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
