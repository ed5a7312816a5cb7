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

import json
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


# --- additions for the HTTP connectors (iManage, NetDocuments) -------------------------------
# Added, not changed: everything above keeps its meaning. The richer protocols below let the
# sync orchestration resume a crash mid-crawl and tell a vanished document from a failed one.

# "out_of_scope": the document exists but no longer in the configured scope (e.g. moved to a
# NetDocuments cabinet that is not crawled): to the index that is the same as a deletion.
# "unplaced": it exists, but the source cannot say where; only a caller that has just listed
# the whole scope completely (a sweep) may read that as "left the scope".
Presence = Literal["present", "deleted", "forbidden", "out_of_scope", "unplaced"]


@dataclass(frozen=True)
class DocumentFailure:
    """A document the source listed but the connector could not turn into a SourceDocument.

    ``status`` is the HTTP status when there was one. 404/410 mean the document is gone at the
    source; 401/403 mean our service account lost access (both remove it from the index:
    fail closed). Anything else is an error that makes the crawl incomplete. ``external_id``
    is None when the failure is not about one document (e.g. a paging stall).
    """

    source: str
    external_id: str | None
    reason: str
    status: int | None = None
    container: str | None = None  # the library or cabinet, for the per-container report

    @property
    def gone(self) -> bool:
        return self.status in (404, 410)

    @property
    def revoked(self) -> bool:
        return self.status in (401, 403)


CrawlItem = SourceDocument | DocumentFailure | str


@runtime_checkable
class ResumableCrawl(Protocol):
    """Crawls whose position survives a crash.

    A yielded ``str`` is an opaque checkpoint: everything yielded before it is covered, so the
    caller persists it only after those documents are ingested. ``crawl_full(resume)`` starts
    over on None; the last checkpoint of a completed full crawl is also a valid ``cursor`` for
    ``crawl_delta`` (it carries the watermark the next delta starts from).
    """

    source: str
    scope: str

    def crawl_full(self, resume: str | None) -> Iterator[CrawlItem]: ...

    def crawl_delta(self, cursor: str | None) -> Iterator[CrawlItem]: ...


@runtime_checkable
class PointCheck(Protocol):
    """Ask the source about one document, for deletion suspects."""

    source: str

    def check(self, external_id: str) -> Presence: ...


@runtime_checkable
class OwnsIds(Protocol):
    """Whether an external id belongs to this connector's crawl scope (e.g. its libraries),
    so a sweep never touches documents another configuration crawls."""

    source: str

    def owns(self, external_id: str) -> bool: ...


def normalise_code(raw: object) -> str | None:
    """Client/matter normalisation, tri-state: None when absent, "" when present but empty.

    Trim, collapse inner whitespace, upper-case. Nothing is guessed: a value that is not a
    plain string or number is treated as absent rather than stringified into a fake code.
    """
    if raw is None:
        return None
    if isinstance(raw, bool):  # bool is an int; a True client code is not a code
        return None
    if isinstance(raw, int | float):
        raw = str(int(raw)) if isinstance(raw, float) and raw.is_integer() else str(raw)
    if not isinstance(raw, str):
        return None
    return " ".join(raw.split()).upper()


def check_matter_format(template: str, setting: str) -> str:
    """A matter-id template may use ``{matter}`` (required) and ``{client}``, nothing else."""
    import string

    try:
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError:
        names = {"?"}
    if "matter" not in names or names - {"matter", "client"}:
        raise ValueError(f"{setting} must contain {{matter}} and may contain {{client}}, "
                         f"not {template!r}")
    return template


def qualify_matter(template: str, client: str | None, matter: str | None) -> str | None:
    """The matter id for the conflict matrix, from the source's (normalised) values.

    Where matter numbers repeat per client (both iManage and NetDocuments model matter as a
    child of client, connectors.md §3.3) the template qualifies it, e.g. "{client}-{matter}".
    Tri-state is kept: absent stays None, empty stays "". A qualified matter without a client
    is "" (present but unresolvable: the pipeline quarantines it), never a bare number that
    could name another client's matter.
    """
    if not matter:
        return matter
    if "{client}" in template and not client:
        return ""
    return template.format(client=client or "", matter=matter)


class CursorError(ValueError):
    """A stored cursor this connector cannot read; the remedy is a full crawl."""


@dataclass
class CrawlCursor:
    """The checkpoint format the HTTP connectors share (opaque to everyone else).

    ``since``: per container (library, cabinet) the modification watermark the next delta
    starts from. ``full``: the position of an unfinished full crawl, None when there is none.
    """

    since: dict[str, str] = field(default_factory=dict)
    full: dict[str, Any] | None = None

    def dump(self) -> str:
        return json.dumps({"v": 1, "since": self.since, "full": self.full}, sort_keys=True)

    @classmethod
    def load(cls, text: str | None) -> CrawlCursor:
        if not text:
            return cls()
        try:
            data = json.loads(text)
        except ValueError:
            raise CursorError("unreadable cursor; run a full crawl") from None
        if not isinstance(data, dict) or data.get("v") != 1:
            raise CursorError("cursor of an unknown format; run a full crawl")
        since = data.get("since") or {}
        full = data.get("full")
        return cls(
            since={str(k): str(v) for k, v in since.items()} if isinstance(since, dict) else {},
            full=full if isinstance(full, dict) else None,
        )
