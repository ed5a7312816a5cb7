"""The one way a connector walks a paged listing (documents, deltas, workspaces, groups and
members, lookup tables, access lists).

Why one helper: a listing that ends early looks exactly like a source whose documents were
deleted, and a sweep that follows it deletes what still exists (invariant 9). Servers cap page
sizes below what was asked (iManage ``limit``, NetDocuments ``top``/``$top``), report totals
that are absent or wrong, shift offsets when a document is added mid-crawl, and expire
cursors. So the end of a listing is never inferred from a page shorter than requested. It ends
only when:

* the server returned an empty page (and gave no cursor to go on with), or
* the server paged by cursor/skiptoken and stopped giving one, or
* the offset reached the reported total AND one more page confirmed there is nothing after it
  (a total that is too low must not hide the rest).

A page that adds no id not already seen is a stall, and so is a run of more than
`MAX_EMPTY_WITH_CURSOR` empty pages that still carry a cursor (the server says there is more
but does not deliver it): the listing cannot be completed and `ListingIncompleteError` is
raised; callers turn that into a failed crawl, never a shorter list.
An expired cursor (`PositionExpiredError`) restarts the listing from the top; rows already
yielded are not yielded again. When the server reported a total, `Listing.reconciled` says
whether the ids seen match it; a full crawl is complete only when it does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from connectors.http import ConnectorError

T = TypeVar("T")

MAX_RESTARTS = 3
MAX_EMPTY_WITH_CURSOR = 3


class ListingIncompleteError(ConnectorError):
    """A listing that could not be read to its end."""


class PositionExpiredError(ConnectorError):
    """The server refused a cursor or skiptoken it gave earlier (they expire)."""


@dataclass(frozen=True)
class Position:
    """Where the next page starts: an offset, or the server's cursor (token or next link)."""

    offset: int = 0
    token: str | None = None


@dataclass
class Page(Generic[T]):
    rows: list[T]
    total: int | None = None
    next_token: str | None = None  # cursor, skiptoken or next link; None: the server gave none


@dataclass
class Listing(Generic[T]):
    """Walk ``fetch`` page by page; iterate `pages` for the new rows of each page.

    ``key`` gives a row's identity (None: a row that cannot be deduplicated, passed through).
    ``mode``: "auto" pages by the server's cursor once it gives one, else by offset;
    "cursor" for endpoints that page only by cursor (no cursor on a page: the end);
    "single" for endpoints with no documented paging: exactly one request.
    After each yielded page `position` is where a resumed walk would continue.
    """

    what: str
    fetch: Callable[[Position], Page[T]]
    key: Callable[[T], str | None]
    start: Position = field(default_factory=Position)
    mode: Literal["auto", "cursor", "single"] = "auto"
    position: Position = field(init=False)
    total: int | None = field(default=None, init=False)
    seen: set[str] = field(default_factory=set, init=False)
    restarts: int = field(default=0, init=False)
    pages_read: int = field(default=0, init=False)
    finished: bool = field(default=False, init=False)
    _replay: int = field(default=0, init=False)  # rows to re-read after a restart

    def __post_init__(self) -> None:
        self.position = self.start

    @property
    def reconciled(self) -> bool | None:
        """None when the server reported no total; else whether the ids seen match it."""
        if self.total is None:
            return None
        return self.counted == self.total

    @property
    def counted(self) -> int:
        """Ids seen, plus the rows before a resumed start (unless the walk restarted)."""
        before = self.start.offset if self.restarts == 0 else 0
        return len(self.seen) + before

    def _fresh(self, rows: list[T]) -> list[T]:
        out = []
        for row in rows:
            ident = self.key(row)
            if ident is None:
                out.append(row)
            elif ident not in self.seen:
                self.seen.add(ident)
                out.append(row)
        return out

    def pages(self) -> Iterator[list[T]]:
        by_cursor = self.mode == "cursor" or self.position.token is not None
        empty_with_cursor = 0
        while True:
            try:
                page = self.fetch(self.position)
            except PositionExpiredError:
                if self.restarts >= MAX_RESTARTS or self.position == Position():
                    raise
                self.restarts += 1
                self._replay = len(self.seen)
                self.position = Position()
                by_cursor = self.mode == "cursor"
                continue
            self.pages_read += 1
            if page.total is not None:
                self.total = page.total
            if self.mode == "single":
                fresh = self._fresh(page.rows)
                self.finished = True
                if fresh:
                    yield fresh
                return
            if page.next_token:
                by_cursor = True
            if not page.rows:
                if not page.next_token:
                    self.finished = True
                    return
                if empty_with_cursor >= MAX_EMPTY_WITH_CURSOR:
                    raise ListingIncompleteError(
                        f"{self.what}: {empty_with_cursor + 1} empty pages in a row still "
                        f"carried a cursor after {len(self.seen)} ids; the listing cannot be "
                        "completed"
                    )
                empty_with_cursor += 1
                self.position = Position(self.position.offset, page.next_token)
                continue
            empty_with_cursor = 0
            fresh = self._fresh(page.rows)
            if not fresh and self._replay > 0:
                # After a restart the pages already read come again; pass over them.
                self._replay = max(0, self._replay - len(page.rows))
                self.position = Position(self.position.offset + len(page.rows), page.next_token)
                if by_cursor and not page.next_token:
                    self.finished = True
                    return
                continue
            if fresh:
                self._replay = 0
            if not fresh:
                if self.total is not None and len(self.seen) >= self.total and not page.next_token:
                    self.finished = True
                    return
                raise ListingIncompleteError(
                    f"{self.what}: paging stalled after {len(self.seen)} ids (a page repeated "
                    "earlier ids); the listing cannot be completed"
                )
            offset = self.position.offset + len(page.rows)
            self.position = Position(offset, page.next_token)
            yield fresh
            if by_cursor and not page.next_token:
                self.finished = True
                return
            # By offset: even at the reported total, one more page must come back empty (a
            # total that is too low would otherwise hide the rest; `reconciled` reports it).

    def all(self) -> list[T]:
        return [row for page in self.pages() for row in page]
