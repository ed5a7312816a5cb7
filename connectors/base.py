"""What every source yields, and the one `Source` protocol the run loop drives.

A source turns a system (an export folder, iManage, NetDocuments, the Rechtspraak open data)
into `SourceDocument`s. Every source is driven through `Source` by the one run loop
(`connectors.sync`): a full load, changes since a `Checkpoint`, a point check of one document,
permissions (group memberships; document ACLs travel with the documents), and failures as
values (`DocumentFailure`), never as exceptions that stop a run. `Capabilities` says which of
these a source really offers; `BaseSource` answers "not supported" for the rest. The registry
(`connectors.registry`) builds every source by name.

The HTTP connectors (iManage, NetDocuments) implement the smaller crawl protocols below
(`ResumableCrawl`, `PointCheck`, ...); `connectors.crawl.ConnectorSource` presents them as a
`Source`. The ingest pipeline consumes the documents; it never talks to a source itself.

Metadata is tri-state everywhere: a field is absent (None), present but empty ("" or only
whitespace), or present with a value. The pipeline quarantines a document whose client or
matter is absent, empty or unknown (a stored one pushed again so too), and reports which.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

DefaultAccess = Literal["public", "view", "private", "none"]


@dataclass(frozen=True)
class SourceAcl:
    """Normalised source permissions of one document.

    Principals are ``<source>:user:<id>`` / ``<source>:group:<id>`` strings, which the
    pipeline stores in `app.types.principal_key` form (NFC, lower case).
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
    # principals; None: the members could not be read (the group is forgotten until they
    # can: a deny naming it then admits nobody, a grant through it nobody)
    members: frozenset[str] | None


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


# --- the crawl protocols of the HTTP connectors (iManage, NetDocuments) ------------------------
# They let the run loop resume a crash mid-crawl and tell a vanished document from a failed one.

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
    details: Mapping[str, Any] | None = None  # for the report, e.g. {"line": 3} of a sidecar
    # The matter ("" for none) and client the listing gave a document whose permissions or
    # content could not be read. When the index holds it under another matter or client, or
    # none, it moved, perhaps behind a wall: the sync takes it out of the index until it can
    # be read (fail closed). None: the listing was not read for them.
    listed_matter: str | None = None
    listed_client: str | None = None
    # The access rules read before the failure (or "unresolvable" when not even they could be
    # read): a deny must not wait for the content, so the index takes them when they only
    # narrow the stored ones, and hides the document otherwise
    acl: SourceAcl | None = None
    # A listing that could not be completed (it stalled, or its ids do not reconcile with
    # the server's total): a failed crawl (invariant 9), unlike a bad row or document.
    listing: bool = False

    @property
    def gone(self) -> bool:
        return self.status in (404, 410)

    @property
    def revoked(self) -> bool:
        return self.status in (401, 403)


CrawlItem = SourceDocument | DocumentFailure | str


@dataclass(frozen=True)
class Placed:
    """Where a listed document is filed and what its rules are now, read without its content
    (a security pass): a change of these alone need not touch its modification date."""

    external_id: str
    version: str | None
    client_id: str | None
    matter_id: str | None
    acl: SourceAcl | None
    # as the source gave them (`SourceDocument.client_raw`): a quarantined document is
    # read again when they change (its profile was mended)
    client_raw: str | None = None
    matter_raw: str | None = None
    # The modification stamp listed (`SourceDocument.modified_at`: iManage edit_date,
    # NetDocuments Modified), and metadata the stored document must still carry (iManage:
    # edit_profile_date, which a profile edit moves): a full crawl leaves a held document
    # unread only when both are as stored (None: unknown, it is read)
    modified_at: datetime | None = None
    stamps: tuple[tuple[str, str], ...] = ()


# The index's answer to a page of a security pass: the ids it holds under another version,
# place or rules (the pass reads those documents in full; the rest stay as they are).
StaleCheck = Callable[[list[Placed]], set[str]]

# The index's answer to a page of a full crawl's listing in one library or cabinet (the
# documents it holds, placed without content): the ids to read in full. The rest it holds
# as listed, or it applied their rules that only narrow the stored ones (`connectors.full_read`).
HeldCheck = Callable[[str, list[Placed]], set[str]]


@runtime_checkable
class SecurityPass(Protocol):
    """List every document's place and rules in scope without downloading them, so that a
    delta sees what its change listing cannot: rules changed, a document moved, deleted or
    gone out of scope without a new modification date (invariant 9)."""

    source: str

    def security_pass(self, stale: StaleCheck) -> Iterator[CrawlItem] | None:
        """The stale documents read in full, and failures (a listing that cannot be
        completed is one with ``listing=True``). None: this tenant cannot list rules in
        bulk (the source says why in its warnings)."""
        ...


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


# --- the one Source protocol -----------------------------------------------------------------


@dataclass(frozen=True)
class Checkpoint:
    """A position in a source's listing: everything yielded before it is covered, so the run
    loop persists it only after those documents are ingested, and hands it back to resume a
    full load or to list the changes since. ``token`` is the source's own serialisation (the
    HTTP connectors: a `CrawlCursor`); the loop stores it without reading it."""

    token: str


SourceItem = SourceDocument | DocumentFailure | Checkpoint


@dataclass(frozen=True)
class Capabilities:
    """What a source really offers; the run loop asks nothing else of it.

    ``changes``: `Source.changes` lists what changed since a checkpoint (else every run is a
    full load). ``resumable``: a full load resumes from its last checkpoint after a crash.
    ``point_check``: `Source.check` asks about one document. ``listing``: `Source.list_ids`
    lists every id in scope (deletion scans). ``permissions``: `Source.groups` lists group
    memberships. ``sweep``: a complete full load lists the whole scope, so a known document it
    did not list may be deleted (after a point check where there is one); a source that loads
    whatever it is given (an export folder, a folder of case law) never sweeps.
    ``containers``: documents live in libraries or cabinets, reported per container.
    """

    changes: bool = False
    resumable: bool = False
    point_check: bool = False
    listing: bool = False
    permissions: bool = False
    sweep: bool = False
    containers: bool = False

    @property
    def keeps_state(self) -> bool:
        """Whether runs need the persisted sync state (checkpoints, seen ids, held sweeps)."""
        return self.changes or self.resumable or self.sweep


class SourceUnsupportedError(NotImplementedError):
    """A `Source` method that its `Capabilities` do not offer."""


class SourceUnavailableError(Exception):
    """The source cannot be read at all (e.g. its folder is gone): the run ends as failed,
    with a report."""


class SourcePathError(FileNotFoundError):
    """A folder that a path-configured source cannot run on at all (an export folder without
    its metadata sidecar, a Rechtspraak folder without records). Said when the run is asked
    for (422 with ``code``, CLI exit 2); a queued run that meets it fails at once, since
    another attempt fails the same way."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class IngestRunLike(Protocol):
    @property
    def run_id(self) -> object: ...


class OutcomeLike(Protocol):
    @property
    def status(self) -> str:
        """added | updated | unchanged | quarantined | error (a source may add its own)"""
        ...


RunT = TypeVar("RunT", bound=IngestRunLike)


class Pipeline(Protocol[RunT]):
    """What the run loop calls on ``app.ingest.pipeline.IngestPipeline``: exactly these."""

    def start_run(self, connector: str, params: dict[str, Any], started_by: str) -> RunT: ...

    def ingest(self, run: RunT, doc: SourceDocument) -> OutcomeLike:
        """Never raises for bad input: quarantines or records the error itself."""
        ...

    def delete(self, run: RunT, source: str, external_id: str, reason: str) -> bool: ...

    def record_error(self, run: RunT, source: str, external_id: str | None, reason: str,
                     details: dict[str, Any] | None = None) -> None: ...

    def progress(self, run: RunT, **fields: Any) -> None: ...

    def finish_run(self, run: RunT, status: str | None = None,
                   error: str | None = None) -> dict[str, Any]:
        """Closes the run and returns its delta report."""
        ...

    def known_external_ids(self, source: str) -> set[str]: ...

    def known_versions(self, source: str, *, textless: bool = False) -> dict[str, str | None]:
        """external id -> the version the index holds, for every document of ``source``;
        with ``textless``, also the version of each not held whose content had no text."""
        ...

    def forget_textless(self, source: str, listed: set[str], owns: Callable[[str], bool]) -> int:
        """After a complete listing: forgets the documents without text that it no longer
        names (of those ``owns`` says the listing covered); how many."""
        ...

    def sync_groups(
        self, run: RunT, groups: list[SourceGroup], actor: str, *, source: str
    ) -> None: ...

    def hide(self, run: RunT, source: str, external_id: str, reason: str) -> bool: ...

    def apply_acl(self, run: RunT, source: str, external_id: str, acl: SourceAcl) -> None: ...

    def stale_placements(self, source: str, placed: list[Placed]) -> set[str]:
        """The ids of ``placed`` that the index holds under another version, client, matter
        or rules (quarantined ones: another version or raw client/matter)."""
        ...

    def narrow_rules(self, run: RunT, source: str, placed: list[Placed]) -> set[str]:
        """The ids of ``placed`` whose rules were applied without content: held active at
        the same version and place, the listed rules only narrowing the stored ones."""
        ...

    def held_as_listed(self, run: RunT, source: str, placed: list[Placed]) -> dict[str, str]:
        """Of a full crawl's listing, the ids it need not read, each "unchanged" (held at
        the listed version, stamp, place and rules), "narrowed" (the same but rules that
        only narrow the stored ones, applied now as `narrow_rules` applies them) or
        "textless" (not held: its content at the listed version and stamps had no text)."""
        ...


class Source(Protocol):
    """One source behind the one run loop (`connectors.sync.run_source`).

    ``name`` is the source stored with the documents (``documents.source``); ``kind`` the
    registry name recorded with the run (``ingest_runs.connector``); ``scope`` which part of
    the source this instance covers (sync state and locks are per (name, scope)). Methods that
    `capabilities` does not offer raise `SourceUnsupportedError`.
    """

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def scope(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def run_params(self) -> dict[str, Any]:
        """What the run records about this source (a path, a scope)."""
        ...

    def full(self, resume: Checkpoint | None) -> Iterator[SourceItem]:
        """Every document in scope; ``resume`` continues an unfinished full load."""
        ...

    def changes(self, since: Checkpoint | None) -> Iterator[SourceItem]:
        """What changed since ``since`` (the last checkpoint of a delta or a full load)."""
        ...

    def check(self, external_id: str) -> Presence:
        """Ask the source about one document (deletion suspects, sweep candidates)."""
        ...

    def list_ids(self) -> Iterator[str]:
        """Every id in scope, completely (raises rather than list part of it)."""
        ...

    def groups(self) -> Iterator[SourceGroup]:
        """Group memberships, for the permissions that document ACLs name by group."""
        ...

    def security_pass(self, stale: StaleCheck) -> Iterator[SourceItem] | None:
        """Every document's place and rules in scope, without content (`SecurityPass`); the
        ones ``stale`` names read in full. None: not offered (a full load is the only way)."""
        ...

    def skip_held(self, check: HeldCheck | None) -> bool:
        """Before a full load: let ``check`` name, page by page, which listed documents the
        index holds to read in full (the rest are not downloaded); None: read every one.
        False: this source reads every document in any case."""
        ...

    def owns(self, external_id: str) -> bool:
        """Whether an id belongs to this scope, so a sweep never touches another's."""
        ...

    def container_of(self, external_id: str) -> str | None: ...

    def hint_versions(self, versions: Mapping[str, str | None]) -> None:
        """The versions the index holds, for sources that address documents by version."""
        ...

    def total(self) -> int | None:
        """The number of items a full load yields, when the source knows (a progress bar)."""
        ...

    def listings(self) -> Mapping[str, Mapping[str, Any]]:
        """Per container: how its last listing ended (server_total, listed, complete, reason)."""
        ...

    def warnings(self) -> list[str]:
        """Optional features that were off, and similar notes for the run report."""
        ...

    def ingest(self, pipeline: Pipeline[Any], run: Any, doc: SourceDocument) -> OutcomeLike:
        """Hand one document to the pipeline (a source may add its own bookkeeping)."""
        ...

    def report(self, pipeline: Pipeline[Any], run: Any) -> dict[str, Any]:
        """Sections the source adds to the run's report (e.g. ``caselaw``)."""
        ...

    def close(self) -> None: ...


class BaseSource:
    """Defaults for a `Source`: nothing optional is offered. Subclasses set ``name``,
    ``kind``, ``scope`` and ``capabilities`` and override what they offer."""

    name: str
    kind: str
    scope: str = "default"
    capabilities: Capabilities = Capabilities()

    def _unsupported(self, what: str) -> SourceUnsupportedError:
        return SourceUnsupportedError(f"{self.name}: the source offers no {what}")

    def run_params(self) -> dict[str, Any]:
        return {}

    def full(self, resume: Checkpoint | None) -> Iterator[SourceItem]:
        raise self._unsupported("full load")

    def changes(self, since: Checkpoint | None) -> Iterator[SourceItem]:
        raise self._unsupported("change listing")

    def check(self, external_id: str) -> Presence:
        raise self._unsupported("point check")

    def list_ids(self) -> Iterator[str]:
        raise self._unsupported("id listing")

    def groups(self) -> Iterator[SourceGroup]:
        raise self._unsupported("group listing")

    def security_pass(self, stale: StaleCheck) -> Iterator[SourceItem] | None:
        return None

    def skip_held(self, check: HeldCheck | None) -> bool:
        return False

    def owns(self, external_id: str) -> bool:
        return True

    def container_of(self, external_id: str) -> str | None:
        return None

    def hint_versions(self, versions: Mapping[str, str | None]) -> None:
        return None

    def total(self) -> int | None:
        return None

    def listings(self) -> Mapping[str, Mapping[str, Any]]:
        return {}

    def warnings(self) -> list[str]:
        return []

    def ingest(self, pipeline: Pipeline[Any], run: Any, doc: SourceDocument) -> OutcomeLike:
        return pipeline.ingest(run, doc)

    def report(self, pipeline: Pipeline[Any], run: Any) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        return None

    def __enter__(self) -> BaseSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def normalize_code(raw: object) -> str | None:
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
    child of client, docs/dms-apis.md §3) the template qualifies it, e.g. "{client}-{matter}".
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
