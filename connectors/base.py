"""What every connector yields, and the small interfaces per capability.

A connector turns a source system into `SourceDocument`s. Capabilities are separate
protocols (full load, poll since a cursor, list ids for deletion sweeps, permission sync) so a
connector implements only what its source supports. The ingest pipeline consumes the
documents; it never talks to a source itself.

Metadata is tri-state everywhere: a field is absent (None), present but empty ("" or only
whitespace), or present with a value. The pipeline treats the three differently (a present
but empty client never overwrites a known one; an unknown one quarantines a new document).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

DefaultAccess = Literal["public", "view", "private", "none"]


@dataclass(frozen=True)
class SourceAcl:
    """Normalised source permissions of one document.

    Principals are lower-case ``<source>:user:<id>`` / ``<source>:group:<id>`` strings.
    ``default``: "public"/"view" admit every internal person, "private" only ``allow``;
    ``deny`` always wins. ``resolvable=False`` (e.g. an iManage group with restricted
    members we cannot expand) makes the document visible to nobody: fail closed.
    """

    default: DefaultAccess = "private"
    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    resolvable: bool = True
    note: str | None = None


@dataclass
class SourceDocument:
    source: str  # "imanage", "netdocuments", "folder", "api", "rechtspraak"
    external_id: str
    title: str | None = None
    doc_type: str | None = None
    client_id: str | None = None  # normalised; None = absent, "" = present but empty
    matter_id: str | None = None
    client_raw: str | None = None  # as the source gave it, for the report
    matter_raw: str | None = None
    author: str | None = None
    created_at: datetime | None = None
    modified_at: datetime | None = None
    version: str | None = None
    checksum: str | None = None
    source_url: str | None = None
    acl: SourceAcl | None = None  # None = no source rules: public within the firm
    # content: either text, or bytes with a mime type (extracted by the pipeline)
    text: str | None = None
    content: bytes | None = None
    mime_type: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceGroup:
    source: str
    group_id: str
    members: frozenset[str]  # principals


@dataclass(frozen=True)
class DeletionCandidate:
    external_id: str
    reason: str


@runtime_checkable
class FullLoad(Protocol):
    source: str

    def load_all(self) -> Iterator[SourceDocument]: ...


@runtime_checkable
class PollSince(Protocol):
    source: str

    def poll(self, cursor: str | None) -> Iterator[SourceDocument | str]:
        """Yield changed documents; a yielded ``str`` is a new cursor to persist (after
        the documents before it are safely ingested)."""
        ...


@runtime_checkable
class ListIds(Protocol):
    source: str

    def list_ids(self) -> Iterator[str]: ...


@runtime_checkable
class PermissionSync(Protocol):
    source: str

    def groups(self) -> Iterator[SourceGroup]: ...
