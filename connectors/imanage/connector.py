"""iManage Work connector: documents with client/matter, source permissions and deletions.

Identity: one index entry per document, ``external_id = "LIB!number"``. iManage gives every
version its own id (``LIB!number.version``); keeping only the latest version per document
number (docs/dms-apis.md §1.3) is simplest when the version is not part of the
identity: a new version replaces the old one in place, and a sweep never sees the superseded
version as "deleted". The versioned id is kept in ``metadata["imanage_id"]``.

Crawl: the Sync API (cursor pages, S4) when the tenant has ``data_sync_import``, else the
document search (I1) paged by offset, both through ``connectors.paging`` (a short page never
ends a listing; a full listing must reconcile with ``total_count``). Delta: I1 with
``edit_date_from`` = watermark minus ``connector_overlap_s``, then the security pass
(`connectors.security_pass`) over the Sync API's profiles and trustees. Point checks
address documents as ``LIB!number.version``. Cursors are JSON strings owned by this module.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

import httpx

from app.settings import Settings
from connectors.base import (
    CrawlCursor,
    CrawlItem,
    DocumentFailure,
    Placed,
    Presence,
    SourceAcl,
    SourceDocument,
    SourceGroup,
    StaleCheck,
    normalize_code,
    qualify_matter,
)
from connectors.dms.acl import unresolvable_acl
from connectors.dms.connector import (
    GONE_STATUSES,
    REFUSED_STATUSES,
    DeltaWatermark,
    DmsConnector,
    compact,
    configured_list,
    content_checksum,
    presence_for,
    utcnow,
)
from connectors.http.errors import ConnectorError, CredentialsError, SourceHTTPError
from connectors.http.lenient import as_text, is_true, iso_utc, parse_datetime, pick
from connectors.http.mime import guess_mime
from connectors.http.ratelimit import Clock
from connectors.http.retry import Sleep
from connectors.imanage.acl import (
    GRANTS,
    SOURCE,
    RestrictedMemberResolver,
    Trustees,
    acl_entries,
    build_acl,
)
from connectors.imanage.client import SYNC_DOCUMENTS, SYNC_GROUP_MEMBERS, IManageClient
from connectors.imanage.containers import read_trustees
from connectors.imanage.groups import LIST_MEMBER_KEYS, SYNC_MEMBER_KEYS, Memberships
from connectors.imanage.profile import (
    DOC_ID,
    doc_key,
    of_version,
    parse_field_map,
    person,
    row_key,
    row_version,
)
from connectors.paging import Position

log = logging.getLogger("ewall.connectors.imanage")

_DOCUMENT_TYPES = frozenset({"document", "email"})

@dataclass
class _Fields:
    client: str | None
    matter: str | None
    client_raw: str | None
    matter_raw: str | None
    origin: dict[str, str]


class IManageConnector(DmsConnector[dict[str, Any], IManageClient]):
    """FullLoad, PollSince, ListIds, PermissionSync, ResumableCrawl, PointCheck, OwnsIds."""

    source = SOURCE
    container_key = "lib"
    start_position: ClassVar[Mapping[str, Any]] = {"offset": 0, "sync": None}
    reset_position: ClassVar[Mapping[str, Any]] = {"offset": 0, "sync": None, "sync_offset": 0}

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
        rng: random.Random | None = None,
        now: Callable[[], datetime] = utcnow,
        page_size: int = 100,
        sync_page_size: int = 1000,
        use_sync_api: bool | None = None,
        restricted_member_resolver: RestrictedMemberResolver | None = None,
        oauth_scope: str | None = "user",
    ) -> None:
        self.client = IManageClient(
            settings, transport=transport, sleep=sleep, clock=clock, rng=rng, scope=oauth_scope
        )
        self.page_size = max(1, page_size)
        self.sync_page_size = max(1, sync_page_size)
        self.use_sync_api = use_sync_api
        self.resolver = restricted_member_resolver
        self.field_map = parse_field_map(settings.imanage_field_map)
        super().__init__(
            settings,
            now=now,
            matter_id_template=settings.imanage_matter_id_format,
            matter_id_setting="EWALL_IMANAGE_MATTER_ID_FORMAT",
        )
        self.default_fields = (
            settings.imanage_client_field.strip().lower(),
            settings.imanage_matter_field.strip().lower(),
        )
        self.configured_libraries = configured_list(settings.imanage_libraries)
        self.scope = "libraries=" + (
            ",".join(sorted(x.upper() for x in self.configured_libraries)) or "*"
        )
        self.sync_restarts: list[str] = []
        self._sync_available: bool | None = None
        self._libraries_cache: list[str] | None = None
        self._workspaces: dict[tuple[str, str], dict[str, Any] | None] = {}
        self._workspaces_lock = threading.Lock()
        self._workspace_locks: dict[tuple[str, str], threading.Lock] = {}
        self._versions: dict[tuple[str, int], int] = {}
        # Set by the sync before point checks: external id -> the version the index holds,
        # so a check can address the document as LIB!number.version (docs/dms-apis.md §1.2).
        self.version_hints: dict[str, str | None] = {}

    # --- scope --------------------------------------------------------------------------------

    def libraries(self) -> list[str]:
        if self.configured_libraries:
            return list(self.configured_libraries)
        if self._libraries_cache is None:
            ids = []
            for row in self.client.libraries():
                ident = as_text(pick(row, "id", "library_id", "database"))
                # Hidden libraries are excluded from "all"; name them explicitly to crawl them.
                if ident and ident.strip() and not is_true(pick(row, "is_hidden")):
                    ids.append(ident.strip())
            self._libraries_cache = ids
        return list(self._libraries_cache)

    def owns(self, external_id: str) -> bool:
        key = doc_key(external_id)
        if key is None:
            return False
        if not self.configured_libraries:
            return True
        return key[0] in {lib.upper() for lib in self.configured_libraries}

    def sync_api_available(self) -> bool:
        if self.use_sync_api is not None:
            return self.use_sync_api
        if self._sync_available is None:
            try:
                features = self.client.features()
            except SourceHTTPError as exc:
                if exc.status not in (400, 403, 404):
                    raise
                features = {}
            self._sync_available = is_true(pick(features, "data_sync_import"))
        return self._sync_available

    def _fields_for(self, library: str) -> tuple[str, str]:
        return self.field_map.get(library.upper(), self.default_fields)

    # --- listings -------------------------------------------------------------------------------

    def _container_ids(self) -> list[str]:
        return self.libraries()

    def _id_pages(self, container: str) -> Iterator[list[dict[str, Any]] | DocumentFailure]:
        for page in self._search_pages(container, edit_date_from=None, start=0):
            yield page if isinstance(page, DocumentFailure) else page[0]

    def _listed_id(self, container: str, row: dict[str, Any]) -> str | None:
        key = doc_key(pick(row, "id"), container) or doc_key(
            pick(row, "document_number"), container
        )
        return f"{key[0]}!{key[1]}" if key and self._is_document(row) else None

    def container_of(self, external_id: str) -> str | None:
        key = doc_key(external_id)
        return key[0] if key else None

    def _versioned_id(self, lib: str, number: int, external_id: str) -> str | None:
        """The documented document id ``LIB!number.version`` for a point check
        (docs/dms-apis.md §1.2: a bare ``LIB!number`` is a container id). The version comes
        from the id itself, from what the index holds, from this crawl, or from a
        document_number search ([O] filter)."""
        match = DOC_ID.match(external_id.strip())
        if match and match.group("ver"):
            return external_id.strip()
        hint = self.version_hints.get(external_id)
        if hint is not None and str(hint).strip().isdigit():
            return f"{lib}!{number}.{int(str(hint).strip())}"
        seen = self._versions.get((lib.upper(), number))
        if seen is not None and seen > 0:
            return f"{lib}!{number}.{seen}"
        page = self.client.search_documents(
            lib, offset=0, limit=self.page_size, document_number=number
        )
        versions = [
            row_version(r)
            for r in page.rows
            if row_key(r, lib) == (lib.upper(), number)
        ]
        versions = [v for v in versions if v > 0]
        return f"{lib}!{number}.{max(versions)}" if versions else None

    def check(self, external_id: str) -> Presence:
        key = doc_key(external_id)
        if key is None:
            raise ConnectorError(f"imanage: {external_id!r} is not LIB!number")
        lib = next((x for x in self.libraries() if x.upper() == key[0]), key[0])
        doc_id = self._versioned_id(lib, key[1], external_id)
        if doc_id is None:
            # Not a verdict: without the version the documented id cannot be formed, and a
            # guess must never delete. The sync keeps the document and reports it.
            raise ConnectorError(
                f"imanage: no version known for {external_id}; "
                "cannot point-check it as LIB!number.version"
            )
        return self._presence(lib, doc_id)

    def groups(self) -> Iterator[SourceGroup]:
        """Group members for permission sync. No groups endpoint is documented for REST v2
        (docs/dms-apis.md §1.2: the groups paths are [U], the Sync API [O]): a 404/405/501
        there turns the feature off with a warning in the run report instead of failing the
        crawl. Without synced members a group grant admits nobody (narrower, never wider)."""
        try:
            members = self._group_members()
        except SourceHTTPError as exc:
            if isinstance(exc, CredentialsError) or exc.status not in (400, 404, 405, 501):
                raise
            self.warnings.append(
                f"imanage: group membership not available on this tenant "
                f"(HTTP {exc.status} from {exc.path}); group grants admit "
                "nobody until it is"
            )
            log.warning("imanage groups endpoint unavailable", extra={"status": exc.status})
            return
        for gid, known in sorted(members.items()):
            yield SourceGroup(source=SOURCE, group_id=gid, members=known)

    def _group_members(self) -> dict[str, frozenset[str] | None]:
        """Members by group id, nested groups named as groups (`connectors.imanage.groups`);
        None for a group whose members could not be read or told apart (unknown, not empty:
        a deny naming it must not lapse, SourceGroup)."""
        found = Memberships()
        for lib in self.libraries():
            if self.sync_api_available():
                rows = self.client.sync_all(
                    lib,
                    SYNC_GROUP_MEMBERS,
                    self.sync_page_size,
                    on_restart=self.sync_restarts.append,
                )
                for row in rows:
                    key = found.group(pick(row, "group_id", "groupId"))
                    if key is not None:
                        found.add(key, row, SYNC_MEMBER_KEYS)
                continue
            for group in self.client.groups(lib):
                key = found.group(pick(group, "id", "group_id"))
                if key is None or pick(group, "enabled") is False:
                    continue  # a disabled group grants nothing: sync it empty
                group_id = (as_text(pick(group, "id", "group_id")) or "").strip()
                listed = self.read_members(
                    group_id, functools.partial(self.client.group_members, lib, group_id)
                )
                if listed is None:
                    found.unknown(key)
                    continue
                for member in listed:
                    found.add(key, member, LIST_MEMBER_KEYS)
        return found.resolve(self.warnings.append)

    # --- full crawl ------------------------------------------------------------------------------

    def _prepare_full(self) -> None:
        self._versions = {}
        self.sync_api_available()  # decided once per crawl, before the first library

    def _crawl_container(self, container: str, cursor: CrawlCursor) -> Iterator[CrawlItem]:
        if self.sync_api_available():
            yield from self._full_library_sync(container, cursor)
        else:
            yield from self._full_library_search(container, cursor)

    def _search_pages(
        self, lib: str, *, edit_date_from: str | None, start: int
    ) -> Iterator[tuple[list[dict[str, Any]], int] | DocumentFailure]:
        """I1 pages from ``start`` as (new rows, offset after the page), through the paging
        drive (`DmsConnector._walk`): a page shorter than asked does not end the walk
        (servers cap ``limit``); only an empty page does. A full listing (no
        ``edit_date_from``) must reconcile with ``total_count``."""
        listing = self.client.search_listing(
            lib, limit=self.page_size, edit_date_from=edit_date_from, start=Position(start)
        )
        for page in self._walk(lib, f"library {lib}", listing, full=edit_date_from is None):
            if isinstance(page, DocumentFailure):
                yield page
            else:
                yield page, listing.position.offset

    def _full_library_search(self, lib: str, cursor: CrawlCursor) -> Iterator[CrawlItem]:
        full = cursor.full if cursor.full is not None else {}
        for page in self._search_pages(
            lib, edit_date_from=None, start=int(full.get("offset") or 0)
        ):
            if isinstance(page, DocumentFailure):
                yield page
                return
            rows, offset = page
            yield from self._documents(lib, rows, trustees=None, full=True)
            full["offset"] = offset
            yield cursor.dump()

    def _full_library_sync(self, lib: str, cursor: CrawlCursor) -> Iterator[CrawlItem]:
        full = cursor.full if cursor.full is not None else {}
        trustees = self._read_trustees(lib)
        start = Position(int(full.get("sync_offset") or 0), full.get("sync"))
        listing = self.client.sync_listing(lib, SYNC_DOCUMENTS, self.sync_page_size, start)
        restarts = 0
        for rows in self._walk(lib, f"library {lib}", listing, full=True):
            if isinstance(rows, DocumentFailure):
                yield rows
                return
            if listing.restarts != restarts:
                # The cursor expired and the endpoint restarted from the top: documents
                # already ingested come again as "unchanged"; nothing is skipped.
                restarts = listing.restarts
                self.sync_restarts.append(SYNC_DOCUMENTS)
                log.warning(
                    "imanage sync cursor expired; restarted the library crawl",
                    extra={"library": lib},
                )
            yield from self._documents(lib, rows, trustees=trustees, full=True)
            if listing.position.token:
                full["sync"] = listing.position.token
                full["sync_offset"] = listing.position.offset
                yield cursor.dump()
        if listing.restarts != restarts:
            self.sync_restarts.append(SYNC_DOCUMENTS)

    def _read_trustees(self, lib: str) -> Trustees:
        """A library's trustee lists, its containers' denies included, for one walk of it
        (held no longer): a full crawl, a delta's change listing, a security pass. Each picks
        a document's rules by the same test (`_acl`), so a delta and its pass agree."""
        return read_trustees(self.client, lib, self.sync_page_size, self._now(),
                             self.sync_restarts.append, self.warnings)

    # --- delta -----------------------------------------------------------------------------------

    def _prepare_delta(self) -> None:
        self._versions = {}

    def _delta_container(self, container: str, mark: DeltaWatermark) -> Iterator[CrawlItem]:
        edit_from = iso_utc(mark.since - self.overlap) if mark.since else None
        trustees: Trustees | None = None  # read at the first changed page, for this library
        for page in self._search_pages(container, edit_date_from=edit_from, start=0):
            if isinstance(page, DocumentFailure):
                mark.failed = True
                yield page
                return
            rows = page[0]
            for row in rows:
                mark.see(parse_datetime(pick(row, "edit_date")))
            if trustees is None and rows and self.sync_api_available():
                trustees = self._read_trustees(container)
            yield from mark.track(self._documents(container, rows, trustees=trustees))

    # --- security pass (connectors.security_pass) -------------------------------------------------

    def security_pass(self, stale: StaleCheck) -> Iterator[CrawlItem] | None:
        """Every library's profiles and trustees (Sync API), without content; the documents
        ``stale`` names are read in full. None without the Sync API (no trustees in bulk)."""
        if not self.sync_api_available():
            self.warnings.append("imanage: no Sync API (data_sync_import): rules, moves and "
                                 "deletions that keep edit_date wait for the full crawl")
            return None
        return self._security_pass(stale)

    def _security_pass(self, stale: StaleCheck) -> Iterator[CrawlItem]:
        self._versions = {}  # every document is listed again, those of this delta too
        for lib in self._container_ids():
            yield from self._security_library(lib, stale)

    def _security_library(self, lib: str, stale: StaleCheck) -> Iterator[CrawlItem]:
        trustees = self._read_trustees(lib)
        listing = self.client.sync_listing(lib, SYNC_DOCUMENTS, self.sync_page_size, Position())
        # versions older than the held one (unmarked latest): it may come on a later page; if
        # it never does (removed at the source), the newest listed is the document
        older: dict[tuple[str, int], dict[str, Any]] = {}
        for rows in self._walk(lib, f"library {lib}", listing, full=True):
            if isinstance(rows, DocumentFailure):
                yield rows
                return
            current = []
            for row in self._latest_only(lib, rows):
                key = row_key(row, lib) or (lib, -1)
                if self._older_than_held(key, row):
                    older[key] = row  # _latest_only passes only ever newer versions
                else:
                    older.pop(key, None)
                    current.append(row)
            yield from self._placed_page(lib, current, trustees, stale)
        yield from self._placed_page(lib, list(older.values()), trustees, stale)

    def _placed_page(self, lib: str, rows: list[dict[str, Any]], trustees: Trustees,
                     stale: StaleCheck) -> Iterator[CrawlItem]:
        """Ask the index about ``rows`` and read in full the ones it names."""
        placed = {self._placed(lib, row, trustees): row for row in rows}
        names = stale(list(placed)) if placed else set()
        again = [row for p, row in placed.items() if p.external_id in names]
        yield from self._fetch_documents(lib, again, lambda row: self._document(lib, row, trustees))

    def _older_than_held(self, key: tuple[str, int], row: dict[str, Any]) -> bool:
        held = self.version_hints.get(f"{key[0]}!{key[1]}")
        return (pick(row, "latest") is None and pick(row, "is_latest") is None and held is not
                None and held.isdigit() and int(held) > row_version(row))

    def _placed(self, lib: str, row: dict[str, Any], trustees: Trustees | None) -> Placed:
        key = row_key(row, lib) or (lib, -1)  # _latest_only kept keyed rows
        external_id = f"{key[0]}!{key[1]}"
        doc_id = as_text(pick(row, "id", "document_id")) or external_id
        acl = self._acl(lib, row, key=key, doc_id=doc_id, external_id=external_id,
                        trustees=trustees)
        if isinstance(acl, DocumentFailure):  # its own security failed: the full read decides
            acl = unresolvable_acl(acl.reason)
        try:
            fields = self._client_matter(lib, row)
        except SourceHTTPError:  # place unknown: read again (version None is never held)
            return Placed(external_id, None, None, None, acl)
        profile_date = as_text(pick(row, "edit_profile_date"))  # kept in metadata
        return Placed(external_id, str(row_version(row)), fields.client,
                      qualify_matter(self.matter_format, fields.client, fields.matter), acl,
                      fields.client_raw, fields.matter_raw, parse_datetime(pick(row, "edit_date")),
                      (("edit_profile_date", profile_date),) if profile_date else ())

    # --- documents -------------------------------------------------------------------------------

    @staticmethod
    def _is_document(row: Mapping[str, Any]) -> bool:
        kind = as_text(pick(row, "wstype", "type_of_object"))
        return kind is None or kind.strip().lower() in _DOCUMENT_TYPES

    def _latest_only(self, lib: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        best: dict[tuple[str, int], dict[str, Any]] = {}
        for row in rows:
            if not self._is_document(row):
                continue
            if pick(row, "is_latest") is False or pick(row, "latest") is False:
                continue
            key = row_key(row, lib)
            if key is None:
                continue
            if key not in best or row_version(row) > row_version(best[key]):
                best[key] = row
        out = []
        for key, row in best.items():
            version = row_version(row)
            previous = self._versions.get(key)
            if previous is not None and version <= previous:
                continue  # this crawl already delivered this version or a newer one
            self._versions[key] = version
            out.append(row)
        return out

    def _documents(self, lib: str, rows: list[dict[str, Any]], *, trustees: Trustees | None,
                   full: bool = False) -> Iterator[CrawlItem]:
        keep = self._latest_only(lib, rows)
        if full:  # only what the index does not hold as listed (connectors.full_read)
            keep = self._to_read(lib, keep, self.version_hints,
                                 lambda row: self._placed(lib, row, trustees))
        yield from self._fetch_documents(lib, keep, lambda row: self._document(lib, row, trustees))

    def _presence(self, lib: str, doc_id: str) -> Presence:
        try:
            self.client.document(lib, doc_id)
        except CredentialsError:
            raise  # our credentials, not this document
        except SourceHTTPError as exc:
            return presence_for(exc)
        return "present"

    def _verdict(
        self, lib: str, doc_id: str, external_id: str, what: str, exc: SourceHTTPError
    ) -> DocumentFailure | None:
        """What a refused sub-resource says about the document; the profile decides (see
        `DmsConnector._refusal`). None: the document is there."""
        return self._refusal(external_id, what, exc, lambda: self._presence(lib, doc_id), "profile")

    def _acl(
        self,
        lib: str,
        row: Mapping[str, Any],
        *,
        key: tuple[str, int],
        doc_id: str,
        external_id: str,
        trustees: Trustees | None,
    ) -> SourceAcl | DocumentFailure:
        implicit = [
            u for u in (person(pick(row, "author"))[0], person(pick(row, "operator"))[0]) if u
        ]
        sync_denied, fenced = (trustees.denies(key, pick(row, "workspace_id"))
                               if trustees is not None else ([], None))
        if fenced is not None:  # a container's denies cannot be known (imanage.containers)
            return unresolvable_acl(fenced)
        listed: SourceAcl | None = None  # the rules the Sync lists give
        if trustees is not None:
            listed = build_acl(
                library=lib,
                document_id=doc_id,
                default_security=pick(row, "default_security"),
                inherited_default=pick(row, "inherited_default_security"),
                # another version's grants must not widen this one; its denies stand
                entries=of_version(
                    trustees.allowed.get(key, []), row_version(row), GRANTS
                ),
                denied=sync_denied,
                implicit_users=implicit,
                resolver=self.resolver,
            )
            if not self._changed_since(row, trustees.read_at):
                return listed
        try:
            security = self.client.security(lib, doc_id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            failure = self._verdict(lib, doc_id, external_id, "security", exc)
            if failure is not None and failure.status in (404, 403):
                return failure  # gone, or access revoked: out of the index
            if listed is not None and exc.status in (404, 405, 501):
                return listed  # no security endpoint on this tenant ([U]): the lists' rules
            # The document is there (or its presence is unknown) and its permissions cannot
            # be read: visible to nobody until they can. Keeping the last ACL read would keep
            # a grant revoked, or ignore a deny added, since.
            return unresolvable_acl(f"security could not be read (HTTP {exc.status})")
        entries = acl_entries(security) if security else None  # {} or data null: no answer
        if entries is None:
            return unresolvable_acl("security: its access list is in a shape that cannot be read")
        return build_acl(
            library=lib,
            document_id=doc_id,
            default_security=pick(security, "default_security") or pick(row, "default_security"),
            inherited_default=pick(security, "inherited_default_security"),
            entries=entries,
            denied=sync_denied,
            implicit_users=implicit,
            resolver=self.resolver,
        )

    def _changed_since(self, row: Mapping[str, Any], moment: datetime) -> bool:
        """Whether the profile names a change (content, profile, creation) at or after
        ``moment`` less the overlap (the server's clock is not ours)."""
        since = moment - self.overlap
        stamps = (parse_datetime(pick(row, name))
                  for name in ("edit_date", "edit_profile_date", "create_date"))
        return any(stamp is not None and stamp >= since for stamp in stamps)

    def _document(
        self,
        lib: str,
        row: dict[str, Any],
        trustees: Trustees | None,
    ) -> CrawlItem:
        key = row_key(row, lib)
        if key is None:  # _latest_only filtered these; kept for type narrowing
            return DocumentFailure(SOURCE, None, "row without a document number")
        external_id = f"{key[0]}!{key[1]}"
        doc_id = as_text(pick(row, "id", "document_id")) or external_id
        acl = self._acl(
            lib, row, key=key, doc_id=doc_id, external_id=external_id, trustees=trustees
        )
        if isinstance(acl, DocumentFailure):
            return self._with_listed_matter(lib, row, acl)
        try:
            download = self.client.download(lib, doc_id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            failure = self._verdict(lib, doc_id, external_id, "download", exc)
            if failure is not None:
                if not (failure.gone or failure.revoked):
                    failure = dataclasses.replace(failure, acl=acl)  # the rules read stand
                return self._with_listed_matter(lib, row, failure)
            if exc.status in REFUSED_STATUSES:
                # Readable profile, refused content (e.g. an encrypted HIPAA document): it
                # cannot be indexed, and keeping an old copy would outlive the refusal.
                return DocumentFailure(
                    SOURCE, external_id, "download refused though the profile is readable", 403
                )
            return self._with_listed_matter(
                lib,
                row,
                DocumentFailure(
                    SOURCE,
                    external_id,
                    f"download returned HTTP {exc.status} for an existing document",
                    acl=acl,  # the rules read stand though the content waits
                ),
            )
        author_id, author_name = person(pick(row, "author"))
        try:
            fields = self._client_matter(lib, row)
        except SourceHTTPError as exc:  # its workspace (after retries): this document only
            # where it is filed now is unknown (it may have moved behind a wall): the stored
            # copy admits nobody until a sync reads it; hidden, not deleted
            return DocumentFailure(
                SOURCE,
                external_id,
                f"workspace could not be read for client/matter: {exc}",
                acl=unresolvable_acl("its workspace could not be read: placement unknown"),
            )
        extension = as_text(pick(row, "extension"))
        checksum = as_text(pick(row, "checksum"))
        client_field, matter_field = self._fields_for(lib)
        metadata: dict[str, Any] = {
            "imanage_id": doc_id,
            "library": key[0],
            "container": lib,
            "document_number": key[1],
            "workspace_id": as_text(pick(row, "workspace_id")),
            "workspace_name": as_text(pick(row, "workspace_name")),
            "class": as_text(pick(row, "class")),
            "subclass": as_text(pick(row, "subclass")),
            "extension": extension,
            "size": pick(row, "size"),
            "author_id": author_id,
            "operator": person(pick(row, "operator"))[0],
            "last_user": person(pick(row, "last_user"))[0],
            "edit_profile_date": as_text(pick(row, "edit_profile_date")),
            "default_security": as_text(pick(row, "default_security")),
            "is_external": pick(row, "is_external"),
            "is_hipaa": pick(row, "is_hipaa"),
            "filename": download.filename,
            "client_description": as_text(pick(row, client_field + "_description")),
            "matter_description": as_text(pick(row, matter_field + "_description")),
            "acl_note": acl.note,
            **fields.origin,
        }
        return SourceDocument(
            source=SOURCE,
            external_id=external_id,
            title=as_text(pick(row, "name")),
            doc_type=as_text(pick(row, "class_description"))
            or as_text(pick(row, "class"))
            or as_text(pick(row, "type")),
            client_id=fields.client,
            matter_id=qualify_matter(self.matter_format, fields.client, fields.matter),
            client_raw=fields.client_raw,
            matter_raw=fields.matter_raw,
            author=as_text(pick(row, "author_description")) or author_name or author_id,
            created_at=parse_datetime(pick(row, "create_date")),
            modified_at=parse_datetime(pick(row, "edit_date")),
            version=str(row_version(row)),
            checksum=checksum or content_checksum(download.content),
            source_url=as_text(pick(row, "document_url")) or as_text(pick(row, "iwl")),
            acl=acl,
            content=download.content,
            mime_type=guess_mime(download.filename, extension, download.content_type),
            metadata=compact(metadata),
        )

    def _with_listed_matter(
        self, lib: str, row: Mapping[str, Any], failure: DocumentFailure
    ) -> DocumentFailure:
        """A failure to read a listed document, with the matter its profile names (the sync
        takes it out of the index when that is not the matter the index holds)."""
        if failure.gone or failure.revoked or failure.external_id is None:
            return failure
        try:
            fields = self._client_matter(lib, row)
        except SourceHTTPError:
            return failure
        matter = qualify_matter(self.matter_format, fields.client, fields.matter)
        return dataclasses.replace(failure, listed_matter=matter or "",
                                   listed_client=fields.client or "")

    # --- client / matter --------------------------------------------------------------------

    def _workspace(self, lib: str, ws_id: str) -> dict[str, Any] | None:
        cache_key = (lib.upper(), ws_id)
        with self._workspaces_lock:
            if cache_key in self._workspaces:
                return self._workspaces[cache_key]
            # One fetch per workspace even when a page's documents are built in parallel.
            key_lock = self._workspace_locks.setdefault(cache_key, threading.Lock())
        with key_lock:
            with self._workspaces_lock:
                if cache_key in self._workspaces:
                    return self._workspaces[cache_key]
            try:
                profile: dict[str, Any] | None = self.client.workspace(lib, ws_id)
            except CredentialsError:
                raise
            except SourceHTTPError as exc:
                if exc.status not in GONE_STATUSES | REFUSED_STATUSES:
                    raise
                profile = None
            with self._workspaces_lock:
                self._workspaces[cache_key] = profile
            return profile

    def _client_matter(self, lib: str, row: Mapping[str, Any]) -> _Fields:
        """Document fields first, then the owning workspace for what is empty (docs/dms-apis.md §3).

        Raw values are kept as the source gave them; nothing is inferred. A workspace value
        fills a gap only when it agrees with what the document does carry, because matter
        numbers repeat across clients and a mixed pair would file the document under a matter
        of another client.
        """
        client_field, matter_field = self._fields_for(lib)

        def raw(holder: Mapping[str, Any], name: str) -> str | None:
            value = holder.get(name) if name in holder else None
            return as_text(value)

        client_raw, matter_raw = raw(row, client_field), raw(row, matter_field)
        client, matter = normalize_code(client_raw), normalize_code(matter_raw)
        origin = {"client_from": "document", "matter_from": "document"}
        ws_id = as_text(pick(row, "workspace_id"))
        if (not client or not matter) and ws_id and ws_id.strip():
            workspace = self._workspace(lib, ws_id.strip())
            if workspace is not None:
                ws_client_raw, ws_matter_raw = (
                    raw(workspace, client_field),
                    raw(workspace, matter_field),
                )
                ws_client, ws_matter = normalize_code(ws_client_raw), normalize_code(ws_matter_raw)
                take_client = not client and bool(ws_client) and (not matter or ws_matter == matter)
                take_matter = not matter and bool(ws_matter) and (not client or ws_client == client)
                if take_client:
                    client, client_raw = ws_client, ws_client_raw
                    origin["client_from"] = "workspace"
                if take_matter:
                    matter, matter_raw = ws_matter, ws_matter_raw
                    origin["matter_from"] = "workspace"
        if client is None:
            origin.pop("client_from")
        if matter is None:
            origin.pop("matter_from")
        return _Fields(client, matter, client_raw, matter_raw, origin)
