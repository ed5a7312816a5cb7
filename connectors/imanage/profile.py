"""Reading an iManage document profile row: its key, version and people, and the
configured client/matter fields (``EWALL_IMANAGE_FIELD_MAP``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from connectors.http.errors import ConnectorError
from connectors.http.lenient import as_text, pick

_FIELD = re.compile(r"^[a-z][a-z0-9_]*$")
DOC_ID = re.compile(r"^(?P<lib>[^!]+)!(?P<num>\d+)(?:\.(?P<ver>\d+))?$")


def parse_field_map(text: str) -> dict[str, tuple[str, str]]:
    """``"ACTIVE=custom1:custom2;ARCH=custom29:custom30"`` -> {library: (client, matter)}.

    A malformed map is a configuration error, raised at start: silently falling back to the
    defaults would file a whole library's documents under the wrong client.
    """
    out: dict[str, tuple[str, str]] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        lib, sep, fields = part.partition("=")
        client_field, sep2, matter_field = fields.partition(":")
        client_field, matter_field = client_field.strip().lower(), matter_field.strip().lower()
        if (
            not sep
            or not sep2
            or not lib.strip()
            or not _FIELD.match(client_field)
            or not _FIELD.match(matter_field)
        ):
            raise ConnectorError(
                f"imanage: EWALL_IMANAGE_FIELD_MAP entry {part!r} is not LIB=field:field"
            )
        out[lib.strip().upper()] = (client_field, matter_field)
    return out


def doc_key(value: object, library: str | None = None) -> tuple[str, int] | None:
    """(LIBRARY, number) from ``LIB!num[.ver]``, or from a bare number plus its library."""
    text = as_text(value)
    if text is None:
        return None
    match = DOC_ID.match(text.strip())
    if match:
        return match.group("lib").upper(), int(match.group("num"))
    if library and text.strip().isdigit():
        return library.upper(), int(text.strip())
    return None


def row_key(row: Mapping[str, Any], library: str) -> tuple[str, int] | None:
    """(LIBRARY, number) of a profile row: from its id, else its document number."""
    return doc_key(pick(row, "id", "document_id"), library) or doc_key(
        pick(row, "document_number"), library
    )


def row_version(row: Mapping[str, Any]) -> int:
    raw = pick(row, "version")
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().isdigit():
        return int(raw.strip())
    match = DOC_ID.match(as_text(pick(row, "id")) or "")
    return int(match.group("ver")) if match and match.group("ver") else 0


def person(value: object) -> tuple[str | None, str | None]:
    """(id, display name): ``author`` is a string in search rows, an object in crawl rows."""
    if isinstance(value, Mapping):
        ident = as_text(pick(value, "id", "user_id"))
        name = as_text(pick(value, "full_name", "name", "display_name"))
        return (ident.strip() or None) if ident else None, name
    text = as_text(value)
    return ((text.strip() or None) if text else None), None


def of_version(
    rows: list[dict[str, Any]], version: int, grants: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """The rows of one version of a document: a grant (an access level in ``grants``) in a
    row that names another version in its ``document_id`` (``LIB!number.version``) is that
    version's, and must not widen this one's; rows that name none are the document's. Every
    other row stands, whatever version it names: a deny, or a level we do not know (a
    review found another version's no_access in the allowed list dropped)."""
    kept = []
    for row in rows:
        match = DOC_ID.match(as_text(pick(row, "document_id", "documentId", "doc_id")) or "")
        level = as_text(pick(row, "access_level", "access", "role", "rights"))
        if (
            match is None
            or not match.group("ver")
            or int(match.group("ver")) == version
            or (level or "").strip().lower() not in grants
        ):
            kept.append(row)
    return kept
