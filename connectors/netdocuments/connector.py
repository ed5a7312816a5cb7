"""NetDocuments connector: documents with client/matter, access lists and deletions.

Identity: ``external_id`` is the document id (``4824-5093-9170``); content is the official
version (N16). Full crawl: v2 search per cabinet with a broad query, paged through
``connectors.paging`` by skiptoken when the server gives one, else by skip (a page shorter than
``top`` never ends it; the ids must reconcile with ``TotalFound``). Delta: the same
search sorted by modification date descending, walked down to the watermark minus
``connector_overlap_s`` (this avoids the unverified date-range query syntax, docs/dms-apis.md §2.2).

Permissions: the document's access list (V/E/S/A grant read, N denies and beats everything),
plus profile-based security: an ``N`` row on the document's value of each attribute in
``EWALL_NETDOCUMENTS_PROFILE_SECURITY`` (matter by default) is a deny as well
(docs/dms-apis.md §2.3). Cabinet admins' implicit rights are not modelled (narrower). A
document moved to a cabinet outside the configured scope looks like a delete
(docs/dms-apis.md §2.4) and leaves the index.

Security pass (`connectors.security_pass`): after its change listing a delta lists every
cabinet in full again, without content, and reads the access list of each document the index
holds (``version_hints``): a ``|N`` row added to a matter, an access list changed, a document
re-profiled, deleted or moved out of scope need not move the modified date.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, ClassVar, NamedTuple

import httpx

from app.settings import Settings
from app.types import principal_key
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
    REFUSED_STATUSES,
    DeltaWatermark,
    DmsConnector,
    compact,
    configured_list,
    content_checksum,
    presence_for,
    utcnow,
)
from connectors.dms.members import walk_groups
from connectors.http.errors import ConnectorError, CredentialsError, SourceHTTPError
from connectors.http.lenient import as_text, has_key, pick
from connectors.http.mime import guess_mime
from connectors.http.ratelimit import Clock
from connectors.http.retry import Sleep
from connectors.netdocuments.acl import (
    SOURCE,
    GroupsByName,
    LookupTable,
    build_acl,
    group_member,
    parse_profile_security,
)
from connectors.netdocuments.client import (
    MAX_TOP,
    Cabinet,
    Hit,
    NetDocumentsClient,
    SearchPage,
)
from connectors.paging import (
    Listing,
    ListingIncompleteError,
    Page,
    Position,
    PositionExpiredError,
)

log = logging.getLogger("ewall.connectors.netdocuments")

NOT_DOCUMENTS = frozenset({"ndfld", "ndsq", "ndflt"})  # folders, saved searches, filters
SELECT = "StandardAttributes,CustomAttributes,Locations"


class Place(NamedTuple):
    """Client and matter of a document as its profile names them: (normalized, raw,
    description) each, and the matter id given to the conflict matrix."""

    client: str | None
    client_raw: str | None
    client_description: str | None
    matter: str | None
    matter_raw: str | None
    matter_description: str | None
    matter_id: str | None


class NetDocumentsConnector(DmsConnector[Hit, NetDocumentsClient]):
    """FullLoad, PollSince, ListIds, PermissionSync, ResumableCrawl, PointCheck,
    SecurityPass."""

    source = SOURCE
    container_key = "cab"
    start_position: ClassVar[Mapping[str, Any]] = {"skip": 0, "token": None}
    reset_position: ClassVar[Mapping[str, Any]] = {"skip": 0, "token": None}

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
        rng: random.Random | None = None,
        now: Callable[[], datetime] = utcnow,
        page_size: int = MAX_TOP,
        search_query: str = "*",
        delta_orderby: str = "7|desc",
        oauth_scope: str = "read",
    ) -> None:
        self.client = NetDocumentsClient(
            settings, transport=transport, sleep=sleep, clock=clock, rng=rng, scope=oauth_scope
        )
        self.top = max(1, min(page_size, MAX_TOP))
        self.search_query = search_query
        self.delta_orderby = delta_orderby
        self.configured_cabinets = configured_list(settings.netdocuments_cabinets)
        self.scope = "cabinets=" + (",".join(sorted(self.configured_cabinets)) or "*")
        self._cabinets: list[Cabinet] | None = None
        self._tables: dict[tuple[str, int], LookupTable] = {}
        self._group_names: dict[str, GroupsByName] = {}
        self._tables_lock = threading.Lock()
        self.profile_security = parse_profile_security(settings.netdocuments_profile_security)
        super().__init__(
            settings,
            now=now,
            matter_id_template=settings.netdocuments_matter_id_format,
            matter_id_setting="EWALL_NETDOCUMENTS_MATTER_ID_FORMAT",
        )
        self._cabinet_of: dict[str, str] = {}
        # external id -> version the index holds, set by the sync before a security pass;
        # None: unknown, the pass reads the rules of every listed document
        self.version_hints: dict[str, str | None] | None = None

    # --- scope --------------------------------------------------------------------------------

    def cabinets(self) -> list[Cabinet]:
        if self._cabinets is None:
            visible = self.client.cabinets()
            if self.configured_cabinets:
                by_id = {c.id.upper(): c for c in visible}
                missing = [c for c in self.configured_cabinets if c.upper() not in by_id]
                if missing:
                    # A configured cabinet the account cannot see would otherwise look empty,
                    # and an empty cabinet looks like a cabinet whose documents were deleted.
                    raise ConnectorError(
                        f"netdocuments: cabinet(s) {', '.join(missing)} not visible to the "
                        "service account"
                    )
                visible = [by_id[c.upper()] for c in self.configured_cabinets]
            self._cabinets = visible
        return list(self._cabinets)

    def _cabinet(self, cabinet_id: str) -> Cabinet:
        return next(c for c in self.cabinets() if c.id == cabinet_id)

    # --- listings and capability protocols ------------------------------------------------------

    def _container_ids(self) -> list[str]:
        return [cabinet.id for cabinet in self.cabinets()]

    def _id_pages(self, container: str) -> Iterator[list[Hit] | DocumentFailure]:
        pages = self._pages(
            self._cabinet(container), orderby=None, skip=0, token=None, select="StandardAttributes"
        )
        for page in pages:
            yield page if isinstance(page, DocumentFailure) else page[0]

    def _listed_id(self, container: str, row: Hit) -> str | None:
        return row.id if self._is_document(row) else None

    def check(self, external_id: str) -> Presence:
        try:
            hit = self.client.info(external_id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            return presence_for(exc)
        if hit is not None and hit.deleted:
            return "deleted"
        # A document moved to a cabinet outside the configured scope looks like a delete
        # (docs/dms-apis.md §2.4): moving it to a restricted or archive cabinet is how firms
        # take it away.
        filed = {c.upper() for c in (hit.cabinets if hit is not None else [])}
        if not filed:
            return "unplaced"  # present, but where is not said; a sweep decides
        in_scope = {c.id.upper() for c in self.cabinets()}
        return "present" if filed & in_scope else "out_of_scope"

    def container_of(self, external_id: str) -> str | None:
        return self._cabinet_of.get(external_id)

    def groups(self) -> Iterator[SourceGroup]:
        """Every group the cabinets list, and every group nested in one at any depth (read
        through N22 too, each once: `connectors.dms.members`); a cabinet (``NG-``) held by a
        group is not read, so a deny of that group admits nobody."""
        listed: list[str] = []
        for cabinet in self.cabinets():
            for group in self.client.cabinet_groups(cabinet.id):
                gid = as_text(pick(group, "Id", "id", "groupId"))
                if gid and gid.strip():
                    listed.append(gid.strip())
        known = frozenset(principal_key(g) for g in listed)
        found = walk_groups(
            SOURCE,
            listed,
            lambda gid: self.read_members(gid, functools.partial(self.client.group_members, gid)),
            lambda _gid, row: group_member(known, row),
            follow=lambda gid: gid.strip()[:3].upper() != "NG-",
            warn=self.warnings.append,
        )
        for gid, members in sorted(found.items()):
            yield SourceGroup(source=SOURCE, group_id=gid, members=members)

    # --- paging --------------------------------------------------------------------------------

    def _pages(
        self,
        cabinet: Cabinet,
        *,
        orderby: str | None,
        skip: int,
        token: str | None,
        select: str = SELECT,
        full: bool = False,
    ) -> Iterator[tuple[list[Hit], int, str | None] | DocumentFailure]:
        """Search pages as (new hits, skip after the page, skiptoken for the next page),
        through the paging drive (`DmsConnector._walk`): the walk follows the skiptoken (or
        next link) while the server gives one, else ``skip`` until an empty page; a page
        shorter than ``top`` ends nothing (servers cap ``top``). A stored skiptoken that
        expired restarts the cabinet. For a ``full`` listing the ids seen must reconcile with
        ``TotalFound`` when the server gave one."""

        def fetch(at: Position) -> Page[Hit]:
            cursor = at.token
            link = cursor if cursor and cursor.startswith(("http://", "https://", "/")) else None
            try:
                page: SearchPage = self.client.search(
                    cabinet.id,
                    q=self.search_query,
                    select=select,
                    top=self.top,
                    orderby=orderby,
                    skip=at.offset,
                    skiptoken=None if link else cursor,
                    link=link,
                )
            except SourceHTTPError as exc:
                if cursor is not None and exc.status in (400, 410):
                    log.warning(
                        "netdocuments skiptoken rejected; restarting the cabinet",
                        extra={"cabinet": cabinet.id},
                    )
                    raise PositionExpiredError(str(exc)) from None
                raise
            return Page(page.hits, page.total, page.next_token or page.next_link)

        listing = Listing(
            f"netdocuments cabinet {cabinet.id} search",
            fetch,
            lambda hit: hit.id,
            start=Position(skip, token),
        )
        for page in self._walk(cabinet.id, f"cabinet {cabinet.id}", listing, full=full):
            if isinstance(page, DocumentFailure):
                yield page
            else:
                yield page, listing.position.offset, listing.position.token

    # --- full crawl ------------------------------------------------------------------------------

    def _crawl_container(self, container: str, cursor: CrawlCursor) -> Iterator[CrawlItem]:
        full = cursor.full if cursor.full is not None else {}
        cabinet = self._cabinet(container)
        pages = self._pages(
            cabinet,
            orderby=None,
            skip=int(full.get("skip") or 0),
            token=full.get("token"),
            full=True,
        )
        for page in pages:
            if isinstance(page, DocumentFailure):
                yield page
                return
            hits, skip, token = page
            yield from self._documents(cabinet, hits, full=True)
            full.update(skip=skip, token=token)
            yield cursor.dump()

    # --- delta -----------------------------------------------------------------------------------

    def _delta_container(self, container: str, mark: DeltaWatermark) -> Iterator[CrawlItem]:
        cabinet = self._cabinet(container)
        floor = mark.since - self.overlap if mark.since else None
        ordered = True
        previous: datetime | None = None
        done = False
        for page in self._pages(cabinet, orderby=self.delta_orderby, skip=0, token=None):
            if isinstance(page, DocumentFailure):
                mark.failed = True
                yield page
                return
            hits = page[0]
            stamps = [h.modified for h in hits if h.modified is not None]
            # Trust the early stop only while the server visibly sorts: every page
            # non-increasing and not newer than where the previous page ended.
            if any(a < b for a, b in itertools.pairwise(stamps)) or (
                previous is not None and stamps and stamps[0] > previous
            ):
                ordered = False
            if stamps:
                previous = stamps[-1]
            keep: list[Hit] = []
            for hit in hits:
                modified = hit.modified
                if modified is not None:
                    mark.see(modified)
                    if floor is not None and modified < floor:
                        done = done or ordered
                        continue
                keep.append(hit)
            yield from mark.track(self._documents(cabinet, keep))
            if done:
                return

    # --- security pass (connectors.security_pass) ------------------------------------------------

    def security_pass(self, stale: StaleCheck) -> Iterator[CrawlItem] | None:
        """Every cabinet listed in full (the full crawl's listing), without content; for each
        document the index holds, its place from the search row and its rules read now (one
        access-list request each, in parallel); the documents ``stale`` names are read in
        full. A listing that cannot be completed ends its cabinet with a listing failure."""
        return self._security_pass(stale)

    def _security_pass(self, stale: StaleCheck) -> Iterator[CrawlItem]:
        with self._tables_lock:  # the rules as they are now, never a table read before
            self._tables.clear()
            self._group_names.clear()
        for cabinet in self.cabinets():
            pages = self._pages(cabinet, orderby=None, skip=0, token=None, full=True)
            for page in pages:
                if isinstance(page, DocumentFailure):
                    yield page
                    break
                held = self.version_hints
                hits = [
                    h for h in page[0] if self._is_document(h) and (held is None or h.id in held)
                ]
                placed = list(self._map(functools.partial(self._placed, cabinet), hits))
                names = stale(placed)
                # The search index may lag /info, which the full read trusts: a stale row is
                # asked again from /info first, or a lagging row is downloaded every delta.
                rows = [h for h in hits if h.id in names and h.has_custom]
                if rows:
                    again = self._map(functools.partial(self._placed, cabinet, info=True), rows)
                    names = (names - {h.id for h in rows}) | stale(list(again))
                yield from self._documents(cabinet, [h for h in hits if h.id in names])

    def _placed(self, cabinet: Cabinet, hit: Hit, *, info: bool = False) -> Placed:
        """What `_document` would store for ``hit``, read without the content, and without
        /info unless asked or the row lacks the client or matter attribute (a tenant whose
        search ignores the select would otherwise look moved, and be read in full, every
        delta; a document without them costs an /info each pass)."""
        wanted = {1000 + a for a in (cabinet.client_attr, cabinet.matter_attr) if a is not None}
        if info or not wanted <= hit.custom.keys():
            try:
                hit = _merge(hit, self.client.info(hit.id))
            except CredentialsError:
                raise
            except SourceHTTPError:  # unknown now: read in full (version None is never held)
                return Placed(hit.id, None, None, None, unresolvable_acl("info unread"))
        if hit.deleted:  # in Deleted Items: the full read says so, and it leaves the index
            return Placed(hit.id, None, None, None, unresolvable_acl("deleted"))
        place = self._place(cabinet, hit)
        acl = self._rules(cabinet, hit, place)
        return Placed(hit.id, self._listed_version(hit), place.client, place.matter_id, acl,
                      place.client_raw, place.matter_raw, hit.modified)

    def _listed_version(self, hit: Hit) -> str | None:
        """The official version when the search row names it, else the version the index
        holds: the row need not carry one (its fields are [O], docs/dms-apis.md §2.2), a new
        version moves the modified date that the change listing follows, and an /info
        request per document would cost what the pass saves."""
        if hit.official_version:
            return hit.official_version
        if self.version_hints is not None and hit.id in self.version_hints:
            return self.version_hints[hit.id]
        return hit.latest_version

    # --- documents -------------------------------------------------------------------------------

    @staticmethod
    def _is_document(hit: Hit) -> bool:
        return (hit.extension or "").strip().lower().lstrip(".") not in NOT_DOCUMENTS

    def _documents(self, cabinet: Cabinet, hits: list[Hit], *, full: bool = False
                   ) -> Iterator[CrawlItem]:
        keep = [h for h in hits if self._is_document(h)]
        for hit in keep:
            self._cabinet_of[hit.id] = cabinet.id
        if full:  # only what the index does not hold as listed (connectors.full_read),
            # each held document placed from /info: the search index may lag a move, new
            # rules or Deleted Items, and a document left unread counts as seen for the sweep
            # (a review found both kept from a lagging row; the delta's pass trusts the rows,
            # and the full crawl is what catches what they missed)
            keep = self._to_read(cabinet.id, keep, self.version_hints or {},
                                 functools.partial(self._placed, cabinet, info=True))
        yield from self._fetch_documents(cabinet.id, keep, lambda hit: self._document(cabinet, hit))

    def _profile_attributes(self, cabinet: Cabinet) -> list[int]:
        out = []
        for entry in self.profile_security:
            number = (
                cabinet.matter_attr
                if entry == "matter"
                else cabinet.client_attr
                if entry == "client"
                else entry
            )
            if isinstance(number, int) and number not in out:
                out.append(number)
        return out

    def _lookup_table(self, cabinet: Cabinet, attribute: int) -> LookupTable:
        # Held while fetching: the page's parallel workers wait for one fetch, not race.
        with self._tables_lock:
            cached = self._tables.get((cabinet.id, attribute))
            if cached is None:
                cached = self._tables[(cabinet.id, attribute)] = self._fetch_lookup_table(
                    cabinet, attribute
                )
            return cached

    def _fetch_lookup_table(self, cabinet: Cabinet, attribute: int) -> LookupTable:
        repository = self.client.repository_id or cabinet.repository_id
        if not repository:
            return LookupTable(attribute, False, [], "no repository id to read it from")
        try:
            rows = self.client.lookup_rows(repository, attribute)
        except CredentialsError:
            raise
        except (SourceHTTPError, ListingIncompleteError) as exc:
            # Whatever the cause (404, 5xx after retries, a stalled listing): documents
            # profiled with this attribute become invisible, the crawl goes on.
            reason = (
                f"lookup table {attribute} of cabinet {cabinet.id} could not be read "
                f"completely ({exc}); documents profiled with it are visible to nobody"
            )
            log.warning(
                "netdocuments lookup table unreadable",
                extra={"cabinet": cabinet.id, "attribute": attribute},
            )
            if reason not in self.warnings:
                self.warnings.append(reason)
            return LookupTable(attribute, False, [], reason)
        table = LookupTable(attribute, True, [])
        for row in rows:
            raw = pick(row, "access", "Access")
            access = raw.strip() if isinstance(raw, str) else None
            key = normalize_code(pick(row, "key", "Key"))
            if raw not in (None, "") and (access is None or not has_key(row, "key")):
                # rules in a shape we cannot read (structured, or rows without a key field):
                # a deny may be among them, so the table is not read (a review). A row whose
                # key is empty matches no document, and is passed over.
                reason = (f"lookup table {attribute} of cabinet {cabinet.id} has a row whose "
                          f"access cannot be read; documents profiled with it are visible to "
                          f"nobody")
                if reason not in self.warnings:
                    self.warnings.append(reason)
                return LookupTable(attribute, False, [], reason)
            if access and key:
                parent = normalize_code(pick(row, "parent", "Parent")) or None
                table.rows.append((parent, key, access))
        return table

    def _groups_by_name(self, cabinet: Cabinet) -> GroupsByName:
        with self._tables_lock:
            cached = self._group_names.get(cabinet.id)
            if cached is None:
                cached = self._group_names[cabinet.id] = self._fetch_group_names(cabinet)
            return cached

    def _fetch_group_names(self, cabinet: Cabinet) -> GroupsByName:
        """Each group name with its group's id; a name several groups share with all their
        ids (until 2026-12-06 the last one listed: a `Name|N` row denied one of them)."""
        found: dict[str, set[str]] = {}
        try:
            for group in self.client.cabinet_groups(cabinet.id):
                gid, name = as_text(pick(group, "Id", "id")), as_text(pick(group, "Name", "name"))
                if gid and name:
                    found.setdefault(principal_key(name), set()).add(gid.strip())
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            # unknown, whatever the status: grants by name admit nobody and a "Name|N" row
            # makes its documents unresolvable (narrower); never the rules read before
            self.warnings.append(f"netdocuments: group names of cabinet {cabinet.id} could "
                                 f"not be read ({exc}); grants by name admit nobody")
            return {}
        return {n: ids.pop() if len(ids) == 1 else tuple(sorted(ids)) for n, ids in found.items()}

    def _profile_acl(
        self,
        cabinet: Cabinet,
        hit: Hit,
        entries: list[dict[str, Any]],
        client: str | None,
        matter: str | None,
    ) -> SourceAcl:
        """The access list plus the ``|N`` rows of every attribute the tenant bases security
        on (EWALL_NETDOCUMENTS_PROFILE_SECURITY); deny beats allow. An attribute whose table
        could not be read completely makes a document profiled with it unresolvable."""
        profile_access: list[str] = []
        unreadable: list[str] = []
        for attribute in self._profile_attributes(cabinet):
            value = normalize_code(hit.custom.get(1000 + attribute, (None, None))[0])
            if not value:
                continue
            table = self._lookup_table(cabinet, attribute)
            if not table.readable:
                unreadable.append(table.reason or f"lookup table {attribute} unreadable")
                continue
            parent = client if attribute == cabinet.matter_attr else None
            profile_access.extend(table.access_for(value, parent))
        acl = build_acl(
            entries, profile_access=profile_access, groups_by_name=self._groups_by_name(cabinet)
        )
        if unreadable:
            acl = SourceAcl(
                default=acl.default,
                allow=acl.allow,
                deny=acl.deny,
                resolvable=False,
                note="profile-based denies unknown: " + "; ".join(unreadable),
            )
        return acl

    @staticmethod
    def _attribute(hit: Hit, number: int | None) -> tuple[str | None, str | None, str | None]:
        """(normalized, raw, description) of custom attribute 1000 + number; absent -> None."""
        if number is None:
            return None, None, None
        value = hit.custom.get(1000 + number)
        if value is None:
            return None, None, None
        raw, description = value
        return normalize_code(raw), raw, description

    def _place(self, cabinet: Cabinet, hit: Hit) -> Place:
        """Client and matter from the cabinet's workspace attributes (`_document` and the
        security pass alike: a difference would make every document look moved)."""
        client, client_raw, client_desc = self._attribute(hit, cabinet.client_attr)
        matter, matter_raw, matter_desc = self._attribute(hit, cabinet.matter_attr)
        matter_id = qualify_matter(self.matter_format, client, matter)
        return Place(client, client_raw, client_desc, matter, matter_raw, matter_desc, matter_id)

    def _rules(self, cabinet: Cabinet, hit: Hit, place: Place) -> SourceAcl:
        """The access list plus profile-based denies. An access list that cannot be read,
        whatever the status, leaves the document visible to nobody until it can be: the last
        one read may be stale (a deny added since), never left as it was."""
        try:
            entries = self.client.acl(hit.id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            return unresolvable_acl(f"access list could not be read (HTTP {exc.status})")
        return self._profile_acl(cabinet, hit, entries, place.client, place.matter)

    def _document(self, cabinet: Cabinet, hit: Hit) -> CrawlItem:
        doc_id = hit.id
        try:
            info = self.client.info(doc_id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            # listed, profile unreadable: its rules may have changed too, so nobody until read
            unread = None if exc.status in (401, 403, 404, 410) else unresolvable_acl("info unread")
            return DocumentFailure(SOURCE, doc_id, f"info: {exc}", exc.status, acl=unread)
        if info is not None and info.deleted:
            return DocumentFailure(SOURCE, doc_id, "info: document is in Deleted Items", 404)
        merged = _merge(hit, info)
        if not self._is_document(merged):
            return DocumentFailure(SOURCE, doc_id, "not a document", 404)
        place = self._place(cabinet, merged)
        # the matter this profile names: a document that moved but cannot be read is taken
        # out of the index by the sync (fail closed), not left under its old matter
        listed = place.matter_id or ""  # "" when it names none: it left its matter
        acl = self._rules(cabinet, merged, place)  # /info just answered: the document is there
        try:
            download = self.client.download(doc_id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            failure = self._refusal(doc_id, "download", exc, lambda: self.check(doc_id), "info")
            if failure is not None:
                if failure.gone or failure.revoked:
                    return failure
                return dataclasses.replace(failure, listed_matter=listed,
                                           listed_client=place.client or "", acl=acl)
            if exc.status in REFUSED_STATUSES:
                return DocumentFailure(SOURCE, doc_id, "download: access refused", 403)
            # the rules read stand though the content waits
            return DocumentFailure(
                SOURCE, doc_id, f"download: {exc}", listed_matter=listed,
                listed_client=place.client or "", acl=acl,
            )
        metadata: dict[str, Any] = {
            "cabinet": cabinet.id,
            "container": cabinet.id,
            "env_id": merged.env_id,
            "extension": merged.extension,
            "size": merged.size,
            "modified_by": merged.modified_by,
            "official_version": merged.official_version,
            "latest_version": merged.latest_version,
            "filename": download.filename,
            "client_description": place.client_description,
            "matter_description": place.matter_description,
            "acl_note": acl.note,
        }
        return SourceDocument(
            source=SOURCE,
            external_id=doc_id,
            title=merged.name,
            doc_type=None,
            client_id=place.client,
            matter_id=place.matter_id,
            client_raw=place.client_raw,
            matter_raw=place.matter_raw,
            author=merged.created_by,
            created_at=merged.created,
            modified_at=merged.modified,
            version=merged.official_version or merged.latest_version,
            checksum=content_checksum(download.content),
            source_url=merged.url,
            acl=acl,
            content=download.content,
            mime_type=guess_mime(download.filename, merged.extension, download.content_type),
            metadata=compact(metadata),
        )


def _merge(hit: Hit, info: Hit | None) -> Hit:
    """/info is authoritative where it speaks; the search hit fills the rest (the URL, and the
    custom attributes when /info carried none)."""
    if info is None:
        return hit
    return Hit(
        id=hit.id,
        name=info.name or hit.name,
        extension=info.extension or hit.extension,
        created=info.created or hit.created,
        created_by=info.created_by or hit.created_by,
        modified=info.modified or hit.modified,
        modified_by=info.modified_by or hit.modified_by,
        url=info.url or hit.url,
        env_id=info.env_id or hit.env_id,
        size=info.size if info.size is not None else hit.size,
        official_version=info.official_version or hit.official_version,
        latest_version=info.latest_version or hit.latest_version,
        deleted=info.deleted,
        custom=info.custom if info.has_custom else hit.custom,
        has_custom=info.has_custom or hit.has_custom,
    )
