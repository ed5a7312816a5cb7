"""NetDocuments connector: documents with client/matter, access lists and deletions.

Identity: ``external_id`` is the document id (``4824-5093-9170``); content is the official
version (N16). Full crawl: v2 search per cabinet with a broad query, paged through
``connectors.paging`` by skiptoken when the server gives one, else by skip (a page shorter than
``top`` never ends it; the ids must reconcile with ``TotalFound``). Delta: the same
search sorted by modification date descending, walked down to the watermark minus
``connector_overlap_s`` (this avoids the unverified date-range query syntax, §2.5).

Permissions: the document's access list (V/E/S/A grant read, N denies and beats everything),
plus profile-based security: an ``N`` row on the document's value of each attribute in
``EWALL_NETDOCUMENTS_PROFILE_SECURITY`` (matter by default) is a deny as well (§3.2).
Cabinet admins' implicit rights are not modelled (narrower). A document moved to a cabinet
outside the configured scope looks like a delete (§2.6) and leaves the index.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from app.settings import Settings
from connectors.base import (
    CrawlCursor,
    CrawlItem,
    DocumentFailure,
    Presence,
    SourceAcl,
    SourceDocument,
    SourceGroup,
    check_matter_format,
    normalise_code,
    qualify_matter,
)
from connectors.http import (
    Clock,
    ConnectorError,
    CredentialsError,
    Sleep,
    SourceHTTPError,
    as_text,
    guess_mime,
    iso_utc,
    parse_datetime,
    pick,
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

SOURCE = "netdocuments"
NOT_DOCUMENTS = frozenset({"ndfld", "ndsq", "ndflt"})  # folders, saved searches, filters
SELECT = "StandardAttributes,CustomAttributes,Locations"
_GRANT_LETTERS = frozenset("VESA")
_KNOWN_LETTERS = frozenset("VESAN")


def principal(kind: str, ident: str) -> str:
    return f"{SOURCE}:{kind}:{ident.strip().lower()}"


# --- permissions ---------------------------------------------------------------------------


def _principal_of(who: str, kind: str | None, groups_by_name: Mapping[str, str]) -> str | None:
    """``U:email`` and ids with an ``@`` are users; ``UG-`` ids are groups; ``NG-`` (a
    cabinet used as a principal) is kept as a group; anything else is tried as a group name
    (profile-based security writes group names, S9). None when it cannot be placed."""
    text = who.strip()
    if not text:
        return None
    if text[:2].upper() == "U:":
        return principal("user", text[2:]) if text[2:].strip() else None
    if kind in ("user", "group"):
        return principal(kind, text)
    if text[:3].upper() in ("UG-", "NG-"):
        return principal("group", text)
    if "@" in text:
        return principal("user", text)
    group_id = groups_by_name.get(text.lower())
    return principal("group", group_id) if group_id else None


def _rights(entry: Mapping[str, Any]) -> str:
    letters = as_text(pick(entry, "rights", "Rights", "access", "Access", "level", "accessLevel"))
    if letters is not None:
        return letters.strip().upper()
    # The membership shape (N20): one boolean per right.
    flags = (("view", "V"), ("edit", "E"), ("share", "S"), ("administer", "A"),
             ("noAccess", "N"))
    return "".join(letter for name, letter in flags if pick(entry, name) is True)


def parse_profile_access(text: str) -> list[tuple[str, str]]:
    """``Litigation|VES*Estate|V*U:john.smith@firm.com|N`` -> [(who, LEVELS), ...]."""
    out = []
    for part in text.split("*"):
        who, sep, levels = part.rpartition("|")
        if sep and who.strip():
            out.append((who.strip(), levels.strip().upper()))
    return out


def build_acl(
    entries: Iterable[Mapping[str, Any]],
    *,
    profile_access: Iterable[str] = (),
    groups_by_name: Mapping[str, str] | None = None,
) -> SourceAcl:
    """Document access list plus profile-based denies -> SourceAcl (default private).

    Any of V/E/S/A grants read; N denies and, being a deny, beats every grant at query time.
    A deny we cannot attribute to a principal makes the document unresolvable (visible to
    nobody): dropping it would widen access. An unplaceable grant is only skipped.
    From profile-based security only the N rows are taken: its grants are applied to the
    document's own access list when it is profiled, and a matter is a filter, never a grant.
    """
    names = groups_by_name or {}
    allow: set[str] = set()
    deny: set[str] = set()
    notes: list[str] = []
    resolvable = True
    for entry in entries:
        who = as_text(pick(entry, "principal", "Principal", "principalId", "id", "guid")) or ""
        kind = (as_text(pick(entry, "type", "principalType")) or "").strip().lower() or None
        letters = set(_rights(entry))
        name = _principal_of(who, kind, names)
        if letters - _KNOWN_LETTERS:
            resolvable = False
            notes.append(f"unknown rights {''.join(sorted(letters))!r} for {who!r}")
            continue
        if "N" in letters:
            if name is None:
                resolvable = False
                notes.append(f"no-access entry for unknown principal {who!r}")
            else:
                deny.add(name)
        elif letters & _GRANT_LETTERS:
            if name is None:
                notes.append(f"grant to unknown principal {who!r} skipped")
            else:
                allow.add(name)
    for access in profile_access:
        for who, levels in parse_profile_access(access):
            if "N" not in levels:
                continue
            name = _principal_of(who, None, names)
            if name is None:
                resolvable = False
                notes.append(f"matter no-access row for unknown principal {who!r}")
            else:
                deny.add(name)
    return SourceAcl(default="private", allow=frozenset(allow), deny=frozenset(deny),
                     resolvable=resolvable, note="; ".join(notes) or None)


# --- the connector -------------------------------------------------------------------------


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class _LookupTable:
    """Profile-based security rows of one lookup attribute (N5) of one cabinet.

    ``readable`` is False when the table could not be read completely: then a document
    profiled with a value of this attribute is visible to nobody (a missing ``|N`` row would
    otherwise fail open)."""

    attribute: int
    readable: bool
    rows: list[tuple[str | None, str | None, str]]  # (parent, key, access) normalised
    reason: str | None = None

    def access_for(self, value: str | None, parent: str | None) -> list[str]:
        if not value:
            return []
        # Matter numbers repeat across clients: a row with a parent must match the client.
        return [access for row_parent, key, access in self.rows
                if key == value and (row_parent is None or row_parent == parent)]


def parse_profile_security(text: str) -> list[str | int]:
    """``"matter"``, ``"client"``, attribute numbers (1001 or 1), comma-separated."""
    out: list[str | int] = []
    for part in (p.strip().lower() for p in text.split(",")):
        if not part:
            continue
        if part in ("matter", "client"):
            out.append(part)
        elif part.isdigit():
            number = int(part)
            out.append(number - 1000 if number > 1000 else number)
        else:
            raise ConnectorError(f"netdocuments: EWALL_NETDOCUMENTS_PROFILE_SECURITY entry "
                                 f"{part!r} is not matter, client or an attribute number")
    return out


class NetDocumentsConnector:
    """FullLoad, PollSince, ListIds, PermissionSync, ResumableCrawl, PointCheck."""

    source = SOURCE

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
        rng: random.Random | None = None,
        now: Callable[[], datetime] = _utcnow,
        page_size: int = MAX_TOP,
        search_query: str = "*",
        delta_orderby: str = "7|desc",
        oauth_scope: str = "read",
    ) -> None:
        self.settings = settings
        self.client = NetDocumentsClient(settings, transport=transport, sleep=sleep,
                                         clock=clock, rng=rng, scope=oauth_scope)
        self.top = max(1, min(page_size, MAX_TOP))
        self.search_query = search_query
        self.delta_orderby = delta_orderby
        self._now = now
        self.overlap = timedelta(seconds=settings.connector_overlap_s)
        self.configured_cabinets = [
            c.strip() for c in settings.netdocuments_cabinets.split(",") if c.strip()
        ]
        self.scope = "cabinets=" + (",".join(sorted(self.configured_cabinets)) or "*")
        self.total_hint: int | None = None
        self._workers = settings.connector_concurrency
        self._pool: ThreadPoolExecutor | None = None
        self._cabinets: list[Cabinet] | None = None
        self._tables: dict[tuple[str, int], _LookupTable] = {}
        self._group_names: dict[str, dict[str, str]] = {}
        self._tables_lock = threading.Lock()
        self._totals: dict[str, int] = {}
        self.profile_security = parse_profile_security(settings.netdocuments_profile_security)
        try:
            self.matter_format = check_matter_format(settings.netdocuments_matter_id_format,
                                                     "EWALL_NETDOCUMENTS_MATTER_ID_FORMAT")
        except ValueError as exc:
            raise ConnectorError(f"netdocuments: {exc}") from None
        # Per cabinet: how the last full listing ended (server total, ids seen, complete).
        self.listings: dict[str, dict[str, Any]] = {}
        self.warnings: list[str] = []
        self._cabinet_of: dict[str, str] = {}

    # --- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self.client.close()

    def __enter__(self) -> NetDocumentsConnector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _map(self, fn: Callable[[Hit], CrawlItem], hits: list[Hit]) -> Iterator[CrawlItem]:
        if self._workers <= 1 or len(hits) <= 1:
            yield from (fn(h) for h in hits)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self._workers,
                                            thread_name_prefix="netdocuments")
        # In windows: pool.map submits everything at once, and a 1000-row page of
        # downloaded content waiting for its turn would all sit in memory.
        window = self._workers * 2
        for start in range(0, len(hits), window):
            yield from self._pool.map(fn, hits[start:start + window])

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
                        "service account")
                visible = [by_id[c.upper()] for c in self.configured_cabinets]
            self._cabinets = visible
        return list(self._cabinets)

    # --- capability protocols -------------------------------------------------------------------

    def load_all(self) -> Iterator[SourceDocument]:
        """Documents only; failures and checkpoints are in ``crawl_full`` (what run_sync
        uses), so a plain consumer of this cannot sweep or resume."""
        for item in self.crawl_full(None):
            if isinstance(item, SourceDocument):
                yield item

    def poll(self, cursor: str | None) -> Iterator[SourceDocument | str]:
        for item in self.crawl_delta(cursor):
            if isinstance(item, SourceDocument | str):
                yield item

    def list_ids(self) -> Iterator[str]:
        emitted: set[str] = set()
        for cabinet in self.cabinets():
            for page in self._pages(cabinet, orderby=None, skip=0, token=None,
                                    select="StandardAttributes"):
                if isinstance(page, DocumentFailure):
                    raise ConnectorError(page.reason)  # a partial list would fake deletions
                for hit in page[0]:
                    if self._is_document(hit) and hit.id not in emitted:
                        emitted.add(hit.id)
                        yield hit.id

    def check(self, external_id: str) -> Presence:
        try:
            hit = self.client.info(external_id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            if exc.status in (404, 410):
                return "deleted"
            if exc.status in (401, 403):
                return "forbidden"
            raise
        if hit is not None and hit.deleted:
            return "deleted"
        # A document moved to a cabinet outside the configured scope looks like a delete
        # (§2.6): moving it to a restricted or archive cabinet is how firms take it away.
        filed = {c.upper() for c in (hit.cabinets if hit is not None else [])}
        if not filed:
            return "unplaced"  # present, but where is not said; a sweep decides
        in_scope = {c.id.upper() for c in self.cabinets()}
        return "present" if filed & in_scope else "out_of_scope"

    def container_of(self, external_id: str) -> str | None:
        return self._cabinet_of.get(external_id)

    def groups(self) -> Iterator[SourceGroup]:
        members: dict[str, set[str]] = {}
        for cabinet in self.cabinets():
            for group in self.client.cabinet_groups(cabinet.id):
                gid = as_text(pick(group, "Id", "id", "groupId"))
                if not gid or not gid.strip():
                    continue
                bucket = members.setdefault(gid.strip().lower(), set())
                for member in self.client.group_members(gid.strip()):
                    # ACLs name users as U:email, membership lists by id: emit both forms
                    # so either resolves through the person's aliases.
                    for value in (pick(member, "email", "Email"), pick(member, "id", "Id")):
                        text = as_text(value)
                        if text and text.strip():
                            bucket.add(principal("user", text))
        for gid, users in sorted(members.items()):
            yield SourceGroup(source=SOURCE, group_id=gid, members=frozenset(users))

    # --- paging --------------------------------------------------------------------------------

    def _pages(self, cabinet: Cabinet, *, orderby: str | None, skip: int, token: str | None,
               select: str = SELECT, full: bool = False
               ) -> Iterator[tuple[list[Hit], int, str | None] | DocumentFailure]:
        """Search pages as (new hits, skip after the page, skiptoken for the next page),
        through the paging helper: the walk follows the skiptoken (or next link) while the
        server gives one, else ``skip`` until an empty page; a page shorter than ``top`` ends
        nothing (servers cap ``top``). A stored skiptoken that expired restarts the cabinet.
        For a ``full`` listing the ids seen must reconcile with ``TotalFound`` when the server
        gave one; a listing that cannot be completed ends with a failure."""

        def fetch(at: Position) -> Page[Hit]:
            cursor = at.token
            link = cursor if cursor and cursor.startswith(("http://", "https://", "/")) \
                else None
            try:
                page: SearchPage = self.client.search(
                    cabinet.id, q=self.search_query, select=select, top=self.top,
                    orderby=orderby, skip=at.offset, skiptoken=None if link else cursor,
                    link=link)
            except SourceHTTPError as exc:
                if cursor is not None and exc.status in (400, 410):
                    log.warning("netdocuments skiptoken rejected; restarting the cabinet",
                                extra={"cabinet": cabinet.id})
                    raise PositionExpiredError(str(exc)) from None
                raise
            return Page(page.hits, page.total, page.next_token or page.next_link)

        listing = Listing(f"netdocuments cabinet {cabinet.id} search", fetch,
                          lambda hit: hit.id, start=Position(skip, token))
        try:
            for hits in listing.pages():
                if listing.total is not None:
                    self._totals[cabinet.id] = listing.total
                    self.total_hint = sum(self._totals.values())
                yield hits, listing.position.offset, listing.position.token
        except ListingIncompleteError as exc:
            if full:
                self._note_listing(cabinet.id, listing, str(exc))
            yield DocumentFailure(SOURCE, None, str(exc), container=cabinet.id)
            return
        if full:
            self._note_listing(cabinet.id, listing, None)
            if listing.reconciled is False:
                yield DocumentFailure(
                    SOURCE, None, f"cabinet {cabinet.id}: the server reported "
                    f"{listing.total} documents, the listing gave {listing.counted}; "
                    "not complete", container=cabinet.id)

    def _note_listing(self, cabinet: str, listing: Listing[Any], error: str | None) -> None:
        reconciled = listing.reconciled
        self.listings[cabinet] = {
            "server_total": listing.total,
            "listed": listing.counted,
            "complete": error is None and reconciled is not False,
            "reason": error or (None if reconciled is not False else
                                f"server total {listing.total} != {listing.counted} listed"),
        }

    # --- full crawl ------------------------------------------------------------------------------

    def crawl_full(self, resume: str | None) -> Iterator[CrawlItem]:
        cursor = CrawlCursor.load(resume) if resume else CrawlCursor(
            full={"started": iso_utc(self._now()), "done": [], "cab": None, "skip": 0,
                  "token": None})
        full = cursor.full
        if full is None:
            return  # that crawl already finished; only its bookkeeping was left
        cabinets = self.cabinets()
        self.listings = {}
        for cabinet in cabinets:
            if cabinet.id in full["done"]:
                continue
            if full.get("cab") != cabinet.id:
                full.update(cab=cabinet.id, skip=0, token=None)
            for page in self._pages(cabinet, orderby=None, skip=int(full.get("skip") or 0),
                                    token=full.get("token"), full=True):
                if isinstance(page, DocumentFailure):
                    yield page
                    break
                hits, skip, token = page
                yield from self._documents(cabinet, hits)
                full.update(skip=skip, token=token)
                yield cursor.dump()
            full["done"].append(cabinet.id)
            full.update(cab=None, skip=0, token=None)
            yield cursor.dump()
        cursor.since = {c.id: str(full["started"]) for c in cabinets}
        cursor.full = None
        yield cursor.dump()

    # --- delta -----------------------------------------------------------------------------------

    def crawl_delta(self, cursor: str | None) -> Iterator[CrawlItem]:
        state = CrawlCursor.load(cursor)
        for cabinet in self.cabinets():
            watermark = parse_datetime(state.since.get(cabinet.id))
            floor = watermark - self.overlap if watermark else None
            newest = watermark
            failed = False
            ordered = True
            previous: datetime | None = None
            done = False
            for page in self._pages(cabinet, orderby=self.delta_orderby, skip=0, token=None):
                if isinstance(page, DocumentFailure):
                    failed = True
                    yield page
                    break
                hits = page[0]
                stamps = [h.modified for h in hits if h.modified is not None]
                # Trust the early stop only while the server visibly sorts: every page
                # non-increasing and not newer than where the previous page ended.
                if any(a < b for a, b in itertools.pairwise(stamps)) or (
                        previous is not None and stamps and stamps[0] > previous):
                    ordered = False
                if stamps:
                    previous = stamps[-1]
                keep: list[Hit] = []
                for hit in hits:
                    modified = hit.modified
                    if modified is not None:
                        if newest is None or modified > newest:
                            newest = modified
                        if floor is not None and modified < floor:
                            done = done or ordered
                            continue
                    keep.append(hit)
                for item in self._documents(cabinet, keep):
                    if isinstance(item, DocumentFailure) and not (item.gone or item.revoked):
                        failed = True
                    yield item
                if done:
                    break
            # A failed document keeps the old watermark so the next delta retries it.
            if newest is not None and not failed:
                state.since[cabinet.id] = iso_utc(newest)
            yield state.dump()

    # --- documents -------------------------------------------------------------------------------

    @staticmethod
    def _is_document(hit: Hit) -> bool:
        return (hit.extension or "").strip().lower().lstrip(".") not in NOT_DOCUMENTS

    def _documents(self, cabinet: Cabinet, hits: list[Hit]) -> Iterator[CrawlItem]:
        keep = [h for h in hits if self._is_document(h)]
        for hit in keep:
            self._cabinet_of[hit.id] = cabinet.id
        for item in self._map(lambda hit: self._document(cabinet, hit), keep):
            if isinstance(item, DocumentFailure) and item.container is None:
                yield dataclasses.replace(item, container=cabinet.id)
            else:
                yield item

    def _profile_attributes(self, cabinet: Cabinet) -> list[int]:
        out = []
        for entry in self.profile_security:
            number = cabinet.matter_attr if entry == "matter" else \
                cabinet.client_attr if entry == "client" else entry
            if isinstance(number, int) and number not in out:
                out.append(number)
        return out

    def _lookup_table(self, cabinet: Cabinet, attribute: int) -> _LookupTable:
        # Held while fetching: the page's parallel workers wait for one fetch, not race.
        with self._tables_lock:
            cached = self._tables.get((cabinet.id, attribute))
            if cached is None:
                cached = self._tables[(cabinet.id, attribute)] = self._fetch_lookup_table(
                    cabinet, attribute)
            return cached

    def _fetch_lookup_table(self, cabinet: Cabinet, attribute: int) -> _LookupTable:
        repository = self.client.repository_id or cabinet.repository_id
        if not repository:
            return _LookupTable(attribute, False, [], "no repository id to read it from")
        try:
            rows = self.client.lookup_rows(repository, attribute)
        except CredentialsError:
            raise
        except (SourceHTTPError, ListingIncompleteError) as exc:
            # Whatever the cause (404, 5xx after retries, a stalled listing): documents
            # profiled with this attribute become invisible, the crawl goes on.
            reason = (f"lookup table {attribute} of cabinet {cabinet.id} could not be read "
                      f"completely ({exc}); documents profiled with it are visible to nobody")
            log.warning("netdocuments lookup table unreadable",
                        extra={"cabinet": cabinet.id, "attribute": attribute})
            if reason not in self.warnings:
                self.warnings.append(reason)
            return _LookupTable(attribute, False, [], reason)
        table = _LookupTable(attribute, True, [])
        for row in rows:
            access = as_text(pick(row, "access", "Access"))
            if access and access.strip():
                table.rows.append((normalise_code(pick(row, "parent", "Parent")) or None,
                                   normalise_code(pick(row, "key", "Key")), access.strip()))
        return table

    def _groups_by_name(self, cabinet: Cabinet) -> dict[str, str]:
        with self._tables_lock:
            cached = self._group_names.get(cabinet.id)
            if cached is None:
                cached = self._group_names[cabinet.id] = self._fetch_group_names(cabinet)
            return cached

    def _fetch_group_names(self, cabinet: Cabinet) -> dict[str, str]:
        names: dict[str, str] = {}
        try:
            for group in self.client.cabinet_groups(cabinet.id):
                gid, name = as_text(pick(group, "Id", "id")), as_text(pick(group, "Name", "name"))
                if gid and name:
                    names[name.strip().lower()] = gid.strip()
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            if exc.status not in (401, 403, 404):
                raise
        return names

    def _profile_acl(self, cabinet: Cabinet, hit: Hit, entries: list[dict[str, Any]],
                     client: str | None, matter: str | None) -> SourceAcl:
        """The access list plus the ``|N`` rows of every attribute the tenant bases security
        on (EWALL_NETDOCUMENTS_PROFILE_SECURITY); deny beats allow. An attribute whose table
        could not be read completely makes a document profiled with it unresolvable."""
        profile_access: list[str] = []
        unreadable: list[str] = []
        for attribute in self._profile_attributes(cabinet):
            value = normalise_code(hit.custom.get(1000 + attribute, (None, None))[0])
            if not value:
                continue
            table = self._lookup_table(cabinet, attribute)
            if not table.readable:
                unreadable.append(table.reason or f"lookup table {attribute} unreadable")
                continue
            parent = client if attribute == cabinet.matter_attr else None
            profile_access.extend(table.access_for(value, parent))
        acl = build_acl(entries, profile_access=profile_access,
                        groups_by_name=self._groups_by_name(cabinet))
        if unreadable:
            acl = SourceAcl(default=acl.default, allow=acl.allow, deny=acl.deny,
                            resolvable=False,
                            note="profile-based denies unknown: " + "; ".join(unreadable))
        return acl

    @staticmethod
    def _attribute(hit: Hit, number: int | None) -> tuple[str | None, str | None, str | None]:
        """(normalised, raw, description) of custom attribute 1000 + number; absent -> None."""
        if number is None:
            return None, None, None
        value = hit.custom.get(1000 + number)
        if value is None:
            return None, None, None
        raw, description = value
        return normalise_code(raw), raw, description

    def _document(self, cabinet: Cabinet, hit: Hit) -> CrawlItem:
        doc_id = hit.id
        try:
            info = self.client.info(doc_id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            return DocumentFailure(SOURCE, doc_id, f"info: {exc}", exc.status)
        if info is not None and info.deleted:
            return DocumentFailure(SOURCE, doc_id, "info: document is in Deleted Items", 404)
        merged = _merge(hit, info)
        if not self._is_document(merged):
            return DocumentFailure(SOURCE, doc_id, "not a document", 404)
        client, client_raw, client_desc = self._attribute(merged, cabinet.client_attr)
        matter, matter_raw, matter_desc = self._attribute(merged, cabinet.matter_attr)
        try:
            entries: list[dict[str, Any]] | None = self.client.acl(doc_id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            if exc.status not in (401, 403, 404, 410):
                return DocumentFailure(SOURCE, doc_id, f"acl: {exc}", exc.status)
            entries = None  # /info just answered, so the document is there; its ACL is not
        if entries is None:
            acl = SourceAcl(default="private", resolvable=False,
                            note="access list could not be read")
        else:
            acl = self._profile_acl(cabinet, merged, entries, client, matter)
        try:
            download = self.client.download(doc_id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            if exc.status in (401, 403, 404, 410):
                try:
                    verdict = self.check(doc_id)
                except CredentialsError:
                    raise
                except SourceHTTPError as probe:
                    return DocumentFailure(SOURCE, doc_id, f"download: {exc}; info: {probe}")
                if verdict == "deleted":
                    return DocumentFailure(SOURCE, doc_id, "download: document is gone", 404)
                if verdict == "forbidden" or exc.status in (401, 403):
                    return DocumentFailure(SOURCE, doc_id, "download: access refused", 403)
            return DocumentFailure(SOURCE, doc_id, f"download: {exc}",
                                   None if exc.status in (404, 410) else exc.status)
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
            "client_description": client_desc,
            "matter_description": matter_desc,
            "acl_note": acl.note,
        }
        return SourceDocument(
            source=SOURCE,
            external_id=doc_id,
            title=merged.name,
            doc_type=None,
            client_id=client,
            matter_id=qualify_matter(self.matter_format, client, matter),
            client_raw=client_raw,
            matter_raw=matter_raw,
            author=merged.created_by,
            created_at=merged.created,
            modified_at=merged.modified,
            version=merged.official_version or merged.latest_version,
            checksum="sha256:" + hashlib.sha256(download.content).hexdigest(),
            source_url=merged.url,
            acl=acl,
            content=download.content,
            mime_type=guess_mime(download.filename, merged.extension, download.content_type),
            metadata={k: v for k, v in metadata.items() if v is not None},
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
