"""`ConnectorSource`: a connector written to the crawl protocols of `connectors.base`
(`ResumableCrawl`, `PointCheck`, `ListIds`, `OwnsIds`, `PermissionSync`, or at least a plain
``load_all``) presented as a `Source`, so the run loop drives iManage and NetDocuments the way
it drives every other source.

What the connectors yield is made typed here: a ``str`` checkpoint becomes a `Checkpoint`, and
an item that is neither a document, a failure nor a checkpoint becomes a `DocumentFailure`
(it makes a full crawl incomplete, so nothing is swept after it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from connectors.base import (
    BaseSource,
    Capabilities,
    Checkpoint,
    DocumentFailure,
    FullLoad,
    HeldCheck,
    ListIds,
    OwnsIds,
    PermissionSync,
    PointCheck,
    PollSince,
    Presence,
    ResumableCrawl,
    SecurityPass,
    Source,
    SourceDocument,
    SourceGroup,
    SourceItem,
    StaleCheck,
)


class ConnectorSource(BaseSource):
    def __init__(
        self, connector: object, *, name: str | None = None, kind: str | None = None
    ) -> None:
        self.connector = connector
        self.name = name or str(getattr(connector, "source", "") or "unknown")
        self.kind = kind or self.name
        self.scope = str(getattr(connector, "scope", "") or "default")
        resumable = isinstance(connector, ResumableCrawl)
        self.capabilities = Capabilities(
            changes=resumable or isinstance(connector, PollSince),
            resumable=resumable,
            point_check=isinstance(connector, PointCheck),
            listing=isinstance(connector, ListIds),
            permissions=isinstance(connector, PermissionSync),
            # A complete full crawl lists the whole configured scope: what it missed may go.
            sweep=True,
            containers=True,
        )

    def _items(self, raw: Iterator[object]) -> Iterator[SourceItem]:
        for item in raw:
            if isinstance(item, SourceDocument | DocumentFailure):
                yield item
            elif isinstance(item, str):
                yield Checkpoint(item)
            else:
                reason = getattr(item, "reason", None)
                external_id = getattr(item, "external_id", None)
                yield DocumentFailure(
                    self.name,
                    external_id if isinstance(external_id, str) else None,
                    str(reason) if reason else f"unexpected item {type(item).__name__}",
                )

    def full(self, resume: Checkpoint | None) -> Iterator[SourceItem]:
        connector = self.connector
        if isinstance(connector, ResumableCrawl):
            return self._items(iter(connector.crawl_full(resume.token if resume else None)))
        if isinstance(connector, FullLoad):
            return self._items(iter(connector.load_all()))
        raise self._unsupported("full load")

    def changes(self, since: Checkpoint | None) -> Iterator[SourceItem]:
        connector = self.connector
        token = since.token if since else None
        if isinstance(connector, ResumableCrawl):
            return self._items(iter(connector.crawl_delta(token)))
        if isinstance(connector, PollSince):
            return self._items(iter(connector.poll(token)))
        raise self._unsupported("change listing")

    def check(self, external_id: str) -> Presence:
        if not isinstance(self.connector, PointCheck):
            raise self._unsupported("point check")
        return self.connector.check(external_id)

    def list_ids(self) -> Iterator[str]:
        if not isinstance(self.connector, ListIds):
            raise self._unsupported("id listing")
        return iter(self.connector.list_ids())

    def groups(self) -> Iterator[SourceGroup]:
        if not isinstance(self.connector, PermissionSync):
            raise self._unsupported("group listing")
        return iter(self.connector.groups())

    def security_pass(self, stale: StaleCheck) -> Iterator[SourceItem] | None:
        if not isinstance(self.connector, SecurityPass):
            return None
        items = self.connector.security_pass(stale)
        return None if items is None else self._items(iter(items))

    def skip_held(self, check: HeldCheck | None) -> bool:
        # the DMS connectors place a full crawl's held documents as their security pass does
        if not hasattr(self.connector, "full_check"):
            return False
        self.connector.full_check = check
        return True

    def owns(self, external_id: str) -> bool:
        if isinstance(self.connector, OwnsIds):
            return self.connector.owns(external_id)
        return True

    def container_of(self, external_id: str) -> str | None:
        finder = getattr(self.connector, "container_of", None)
        found = finder(external_id) if callable(finder) else None
        return found if isinstance(found, str) else None

    def hint_versions(self, versions: Mapping[str, str | None]) -> None:
        # iManage addresses a document as LIB!number.version; the index knows the version.
        if hasattr(self.connector, "version_hints"):
            self.connector.version_hints = dict(versions)

    def total(self) -> int | None:
        total = getattr(self.connector, "total_hint", None)
        return total if isinstance(total, int) else None

    def listings(self) -> Mapping[str, Mapping[str, Any]]:
        listings = getattr(self.connector, "listings", None)
        return listings if isinstance(listings, dict) else {}

    def warnings(self) -> list[str]:
        return [str(w) for w in getattr(self.connector, "warnings", None) or []]

    def close(self) -> None:
        close = getattr(self.connector, "close", None)
        if callable(close):
            close()


def as_source(connector: object, name: str | None = None) -> Source:
    """``connector`` itself when it is already a `Source`, else its `ConnectorSource`."""
    if isinstance(connector, BaseSource):
        if name is not None and name != connector.name:
            raise ValueError(f"source {connector.name!r} run as {name!r}")
        return connector
    return ConnectorSource(connector, name=name)
