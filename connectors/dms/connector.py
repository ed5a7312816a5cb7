"""The crawl skeleton both document-management connectors share.

A DMS tenant is a set of containers (iManage libraries, NetDocuments cabinets), each listed
page by page through ``connectors.paging``. ``DmsConnector`` owns what does not depend on the
vendor:

* the paging drive (`_walk`): totals for progress, a listing that cannot be completed or does
  not reconcile with the server's total ends in a failure, never in a shorter list;
* the full crawl per container with checkpoints (`crawl_full`): finished containers are
  skipped on resume, the position inside the current one is kept in the cursor, and the
  watermark of every container becomes the crawl's start;
* deltas with a watermark per container (`crawl_delta`): a document that failed for any
  reason other than gone/revoked keeps the old watermark, so the next delta retries it;
* failure verdicts: a refused sub-resource (security, download) is judged by a probe of the
  document itself, because a 404 or 403 on a sub-resource proves nothing about the document;
* parallel fetching of a page's documents, in order, and the connector's lifecycle.

Subclasses say what their containers are (`_container_ids`), how one container is crawled
(`_crawl_container`, `_delta_container`), which rows are ids (`_id_pages`, `_listed_id`), and
how the full-crawl cursor names its position (`container_key`, `start_position`,
`reset_position`).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Generic, Self, TypeVar

from app.settings import Settings
from connectors.base import (
    CrawlCursor,
    CrawlItem,
    DocumentFailure,
    HeldCheck,
    Placed,
    Presence,
    SourceDocument,
    check_matter_format,
)
from connectors.dms.client import DmsClient
from connectors.http.errors import ConnectorError, CredentialsError, SourceHTTPError
from connectors.http.lenient import iso_utc, parse_datetime
from connectors.paging import Listing, ListingIncompleteError

RowT = TypeVar("RowT")
OutT = TypeVar("OutT")
ClientT = TypeVar("ClientT", bound=DmsClient)

GONE_STATUSES = frozenset({404, 410})
REFUSED_STATUSES = frozenset({401, 403})


def utcnow() -> datetime:
    return datetime.now(UTC)


def presence_for(exc: SourceHTTPError) -> Presence:
    """What a failed read of the document itself says: gone (404/410) or no access
    (401/403). Any other failure is no verdict and is raised again."""
    if exc.status in GONE_STATUSES:
        return "deleted"
    if exc.status in REFUSED_STATUSES:
        return "forbidden"
    raise exc


def matter_id_format(source: str, template: str, setting: str) -> str:
    """The configured matter-id template, or a configuration error naming the source."""
    try:
        return check_matter_format(template, setting)
    except ValueError as exc:
        raise ConnectorError(f"{source}: {exc}") from None


def configured_list(text: str) -> list[str]:
    """A comma-separated setting (libraries, cabinets) as its non-empty, trimmed entries."""
    return [part.strip() for part in text.split(",") if part.strip()]


def content_checksum(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def compact(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata without the keys the source left empty."""
    return {k: v for k, v in metadata.items() if v is not None}


# A modification stamped more than this past the run's own clock is a wrong clock or wrong
# data at the source (reported); the watermark never moves past the run's clock itself: one
# document dated 2099 would otherwise make every later delta ask only for changes after
# 2099, and a wall's move or an access removal would wait for the next full crawl.
FUTURE_SKEW = timedelta(minutes=5)


class DeltaWatermark:
    """The newest modification a delta saw in one container, and whether it may advance."""

    def __init__(self, since: datetime | None, now: datetime) -> None:
        self.now = now
        self.future: list[datetime] = []  # modifications stamped past now + FUTURE_SKEW
        # a stored watermark already past the run's clock (written before this check) says
        # nothing about what changed since: list the container from its start once more
        self.poisoned = since is not None and since > now
        self.since = None if self.poisoned else since
        self.newest = self.since
        self.failed = False

    def see(self, moment: datetime | None) -> None:
        if moment is not None and moment > self.now:
            if moment > self.now + FUTURE_SKEW:
                self.future.append(moment)
            moment = self.now  # a clock a little ahead is not reported, but not followed
        if moment is not None and (self.newest is None or moment > self.newest):
            self.newest = moment

    def warning(self, container: str) -> str | None:
        """What the run report says about stamps from the future, if any."""
        if not self.future and not self.poisoned:
            return None
        found = (
            f"{len(self.future)} listed modification(s) dated after the run's clock (latest "
            f"{iso_utc(max(self.future))}); " if self.future else ""
        )
        return (
            f"{container}: {found}the delta watermark stays at the run's clock"
            + (" (a stored watermark in the future was dropped)" if self.poisoned else "")
        )

    def track(self, items: Iterable[CrawlItem]) -> Iterator[CrawlItem]:
        """Pass items on; a failure that is not gone/revoked holds the watermark back."""
        for item in items:
            if isinstance(item, DocumentFailure) and not (item.gone or item.revoked):
                self.failed = True
            yield item

    def advance(self, cursor: CrawlCursor, container: str) -> None:
        if self.newest is not None and not self.failed:
            cursor.since[container] = iso_utc(self.newest)


class DmsConnector(Generic[RowT, ClientT]):
    """Shared state and crawl loops of a DMS connector whose listings yield ``RowT`` rows and
    whose vendor calls go through a ``ClientT``."""

    source: str
    # How the full-crawl cursor names the container being crawled and the position inside it.
    container_key: ClassVar[str]
    start_position: ClassVar[Mapping[str, Any]]
    reset_position: ClassVar[Mapping[str, Any]]

    client: ClientT

    def __init__(
        self,
        settings: Settings,
        *,
        now: Callable[[], datetime],
        matter_id_template: str,
        matter_id_setting: str,
    ) -> None:
        self.settings = settings
        self._now = now
        self.overlap = timedelta(seconds=settings.connector_overlap_s)
        self.matter_format = matter_id_format(self.source, matter_id_template, matter_id_setting)
        self.total_hint: int | None = None
        # Per container: how the last full listing ended (server total, ids seen, complete).
        self.listings: dict[str, dict[str, Any]] = {}
        # Optional features that were off for this tenant ([U]/[O] endpoints that 404), and
        # parts of the permissions that could not be read.
        self.warnings: list[str] = []
        self._workers = settings.connector_concurrency
        self._pool: ThreadPoolExecutor | None = None
        self._totals: dict[str, int] = {}
        # Set by the run loop before a full crawl (`connectors.full_read`): the index names
        # which held documents to read in full; None: every document is read
        self.full_check: HeldCheck | None = None

    # --- what a vendor says -------------------------------------------------------------------

    def _container_ids(self) -> list[str]:
        raise NotImplementedError

    def _prepare_full(self) -> None:
        """Before a full crawl walks its containers (after they are known)."""

    def _prepare_delta(self) -> None:
        """Before a delta walks its containers."""

    def _crawl_container(self, container: str, cursor: CrawlCursor) -> Iterator[CrawlItem]:
        raise NotImplementedError

    def _delta_container(self, container: str, mark: DeltaWatermark) -> Iterator[CrawlItem]:
        raise NotImplementedError

    def _id_pages(self, container: str) -> Iterator[list[RowT] | DocumentFailure]:
        raise NotImplementedError

    def _listed_id(self, container: str, row: RowT) -> str | None:
        raise NotImplementedError

    # --- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self.client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _map(self, fn: Callable[[RowT], OutT], rows: list[RowT]) -> Iterator[OutT]:
        """Fetch a page's documents (or their rules) in parallel (bounded by the tenant's
        semaphore anyway), yielding in page order so checkpoints stay meaningful."""
        if self._workers <= 1 or len(rows) <= 1:
            yield from (fn(r) for r in rows)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=self._workers, thread_name_prefix=self.source
            )
        # In windows: pool.map submits everything at once, and a 1000-row page of
        # downloaded content waiting for its turn would all sit in memory.
        window = self._workers * 2
        for start in range(0, len(rows), window):
            yield from self._pool.map(fn, rows[start : start + window])

    def _to_read(
        self,
        container: str,
        rows: list[RowT],
        held: Mapping[str, str | None],
        place: Callable[[RowT], Placed],
        again: Callable[[RowT], Placed] | None = None,
    ) -> list[RowT]:
        """Of a full crawl's ``rows``, those to read in full: every one, unless the run loop
        set `full_check`. Then the rows of documents the index holds (``held``) are placed
        without their content, as the security pass places them, and the index names which
        of those to read; ``again`` places the named ones once more from where the full read
        takes them (NetDocuments: /info, which a search row may lag) and asks again. A row
        the index does not hold is read without being placed."""
        check = self.full_check
        listed = [(row, self._listed_id(container, row)) for row in rows]
        asked = [row for row, ident in listed if ident is not None and ident in held]
        if check is None or not asked:
            return rows
        names = check(container, list(self._map(place, asked)))
        named = [row for row in asked if self._listed_id(container, row) in names]
        if again is not None and named:
            names -= {self._listed_id(container, row) for row in named}
            names |= check(container, list(self._map(again, named)))
        unread = {self._listed_id(container, row) for row in asked} - names
        return [row for row, ident in listed if ident not in unread]

    def _fetch_documents(
        self, container: str, rows: list[RowT], build: Callable[[RowT], CrawlItem]
    ) -> Iterator[CrawlItem]:
        """Build each row's document (in parallel); failures name their container."""
        for item in self._map(build, rows):
            if isinstance(item, DocumentFailure) and item.container is None:
                yield dataclasses.replace(item, container=container)
            else:
                yield item

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
        for container in self._container_ids():
            for page in self._id_pages(container):
                if isinstance(page, DocumentFailure):
                    raise ConnectorError(page.reason)  # a partial list would fake deletions
                for row in page:
                    ident = self._listed_id(container, row)
                    if ident is not None and ident not in emitted:
                        emitted.add(ident)
                        yield ident

    # --- paging ---------------------------------------------------------------------------------

    def _walk(
        self, container: str, label: str, listing: Listing[RowT], *, full: bool
    ) -> Iterator[list[RowT] | DocumentFailure]:
        """The new rows of each page of ``listing``; ``listing.position`` is where a resumed
        walk continues after the page. A listing that cannot be completed, or (for a ``full``
        listing) whose ids do not reconcile with the server's total, ends with a failure: the
        crawl is then not complete and nothing is swept. ``label`` names the container in
        that failure ("library ACTIVE")."""
        try:
            for rows in listing.pages():
                if listing.total is not None:
                    self._totals[container] = listing.total
                    self.total_hint = sum(self._totals.values())
                yield rows
        except ListingIncompleteError as exc:
            if full:
                self._note_listing(container, listing, str(exc))
            yield DocumentFailure(self.source, None, str(exc), container=container, listing=True)
            return
        if full:
            self._note_listing(container, listing, None)
            if listing.reconciled is False:
                yield DocumentFailure(
                    self.source,
                    None,
                    f"{label}: the server reported {listing.total} documents, the listing "
                    f"gave {listing.counted}; not complete",
                    container=container,
                    listing=True,
                )

    def _note_listing(self, container: str, listing: Listing[Any], error: str | None) -> None:
        reconciled = listing.reconciled
        self.listings[container] = {
            "server_total": listing.total,
            "listed": listing.counted,
            "complete": error is None and reconciled is not False,
            "reason": error
            or (
                None
                if reconciled is not False
                else f"server total {listing.total} != {listing.counted} listed"
            ),
        }

    # --- full crawl and delta -------------------------------------------------------------------

    def crawl_full(self, resume: str | None) -> Iterator[CrawlItem]:
        cursor = (
            CrawlCursor.load(resume)
            if resume
            else CrawlCursor(
                full={
                    "started": iso_utc(self._now()),
                    "done": [],
                    self.container_key: None,
                    **self.start_position,
                }
            )
        )
        full = cursor.full
        if full is None:
            return  # that crawl already finished; only its bookkeeping was left
        self.listings = {}
        containers = self._container_ids()
        self._prepare_full()
        for container in containers:
            if container in full["done"]:
                continue
            if full.get(self.container_key) != container:
                full.update({self.container_key: container, **self.reset_position})
            yield from self._crawl_container(container, cursor)
            full["done"].append(container)
            full.update({self.container_key: None, **self.reset_position})
            yield cursor.dump()
        # Changes made while the crawl ran are caught by the next delta because the watermark
        # is the crawl's start (minus the overlap at query time), not the newest edit seen.
        cursor.since = {container: str(full["started"]) for container in containers}
        cursor.full = None
        yield cursor.dump()

    def crawl_delta(self, cursor: str | None) -> Iterator[CrawlItem]:
        state = CrawlCursor.load(cursor)
        self._prepare_delta()
        for container in self._container_ids():
            mark = DeltaWatermark(parse_datetime(state.since.get(container)), self._now())
            yield from self._delta_container(container, mark)
            mark.advance(state, container)
            warning = mark.warning(container)
            if warning is not None:
                self.warnings.append(warning)
            yield state.dump()

    # --- failures -------------------------------------------------------------------------------

    def read_members(
        self, group_id: str, read: Callable[[], list[dict[str, Any]]]
    ) -> list[dict[str, Any]] | None:
        """A group's member rows, or None when they cannot be read in full: unknown, not
        empty (SourceGroup), so that a deny naming the group does not lapse."""
        try:
            return read()
        except CredentialsError:
            raise
        except ConnectorError as exc:
            self.warnings.append(f"{self.source}: members of group {group_id}: {exc}")
            return None

    def _refusal(
        self,
        external_id: str,
        what: str,
        exc: SourceHTTPError,
        probe: Callable[[], Presence],
        probe_name: str,
    ) -> DocumentFailure | None:
        """What a refused sub-resource (security, download) says about the document.

        A 404 or 403 on a sub-resource is not proof about the document itself, so ``probe``
        (a read of the document) decides: gone -> a 404 failure (delete), no access -> 403
        (remove, fail closed). None means the document is there and only the sub-resource
        failed; any other status is a failure of its own.
        """
        if exc.status not in GONE_STATUSES | REFUSED_STATUSES:
            return DocumentFailure(self.source, external_id, f"{what}: {exc}", exc.status)
        try:
            presence = probe()
        except CredentialsError:
            raise
        except SourceHTTPError as failed:
            return DocumentFailure(
                self.source, external_id, f"{what}: {exc}; {probe_name}: {failed}"
            )
        if presence == "deleted":
            return DocumentFailure(self.source, external_id, f"{what}: document is gone", 404)
        if presence == "forbidden":
            return DocumentFailure(self.source, external_id, f"{what}: access revoked", 403)
        return None
