"""A full crawl reads in full only what the index does not hold as listed, when the operator
asks for it (EWALL_FULL_CRAWL_READS=changed); by default ("all") it reads every document, so a
download the source now refuses, alone, is caught by the next full crawl.

A full crawl lists every document in scope: the sweep after a complete one deletes what it
did not list (invariant 9). Reading every document again costs one request or three per
document (iManage, 2,000 documents: 2,009 requests for a quiet crawl; NetDocuments, 500:
1,511), more than a tenant held to a request or two a second can give a daily crawl of a
million. With "changed" the source places each listed document the index
holds without its content, as a delta's security pass does (`connectors.security_pass`):
version, modification stamp, client, matter and rules. The index
(`Pipeline.held_as_listed`) names those it holds exactly so ("unchanged") and those whose
rules only narrow the stored ones at the same version, stamp and place, which it applies
without the content ("narrowed": a wall needs no download); the source reads the rest in
full, and every document the index does not hold, except one whose content had no text
(a scan without OCR) at the listed version and stamps ("textless": nothing of it is stored,
so no rule or place of it can be out of date). A document left unread is listed all the
same: it is marked seen for the sweep and counted per library/cabinet ("unread", and
"unchanged", "narrowed" or "textless"). A document held "as listed" was also made with the
chunker, encoder and chunk limits of now (its ``prepared_with`` stamp): after any of those changed,
the next full crawl reads every document once. ``run_source(reread=True)`` (``ewall ingest
... --reread``) reads every document's content again whatever the index holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from connectors.base import Checkpoint, Placed, SourceItem

if TYPE_CHECKING:
    from connectors.state import SyncState
    from connectors.sync import _SyncRun


class _HeldCheck:
    """The index's answers to one full crawl's pages, and what they left unread."""

    def __init__(self, sync: _SyncRun, crawl_id: str, summary: dict[str, Any]) -> None:
        self.sync = sync
        self.crawl_id = crawl_id
        self.summary = summary

    def __call__(self, container: str, placed: list[Placed]) -> set[str]:
        sync = self.sync
        held = sync.pipeline.held_as_listed(sync.run, sync.source, placed) if placed else {}
        self.summary["asked"] += len(placed)
        if held and sync.caps.sweep:  # listed: the sweep leaves them (before the checkpoint)
            sync.state.mark_seen(sync.source, sync.scope, self.crawl_id, sorted(held))
        for how in held.values():
            self.summary[how] += 1
            self.summary["unread"] += 1
            for what in ("seen", "unread", how):
                sync.count(container, what)
        sync.items += len(held)
        if held:
            sync.progress(force=True)
        return {p.external_id for p in placed} - set(held)


FULL_READS = ("all", "changed")  # EWALL_FULL_CRAWL_READS


def _reads(reread: bool, full_reads: str) -> str:
    """What a full crawl reads now: "changed" when asked for and not told to reread."""
    return "changed" if full_reads == "changed" and not reread else "all"


def _afresh(st: SyncState, reread: bool, full_reads: str) -> bool:
    """Asked to reread, or to read every document where the unfinished crawl (with
    "changed") left some unread before its checkpoint (a review found them never
    downloaded, the report saying every document was read)."""
    return reread or (_reads(reread, full_reads) == "all" and st.crawl_reads == "changed")


def resumes(st: SyncState, reread: bool, full_reads: str) -> bool:
    """Whether a full crawl now resumes the unfinished one (the run's ``resume``)."""
    return st.crawl_id is not None and not _afresh(st, reread, full_reads)


def starts_afresh(sync: _SyncRun, st: SyncState) -> bool:
    """Whether this full crawl must start afresh rather than resume the unfinished one
    (`_afresh`). Records in ``st`` what the crawl reads (the caller saves it)."""
    reads = _reads(sync.reread, sync.full_reads)
    afresh = _afresh(st, sync.reread, sync.full_reads)
    if afresh or st.crawl_id is None or reads == "changed":
        st.crawl_reads = reads
    return afresh


def full_items(sync: _SyncRun, crawl_id: str, resume: Checkpoint | None) -> Iterator[SourceItem]:
    """``Source.full``: every item of a full load, the source told first which documents
    need no reading (or none, with ``sync.reread``). The report's ``full_read`` says how many
    held documents were asked about and how many were left unread."""
    summary: dict[str, Any] = {"read_all": False, "asked": 0, "unread": 0, "unchanged": 0,
                               "narrowed": 0, "textless": 0}
    if sync.reread:
        sync.origin.skip_held(None)
        summary.update(read_all=True, reason="asked to read every document again (reread)")
    elif sync.full_reads != "changed":
        sync.origin.skip_held(None)
        summary.update(read_all=True, reason="EWALL_FULL_CRAWL_READS=all: every document is "
                       "read, so a download the source now refuses is caught")
    elif sync.origin.skip_held(_HeldCheck(sync, crawl_id, summary)):
        # what it holds, and what had no text (the source places those as well)
        sync.origin.hint_versions(sync.pipeline.known_versions(sync.source, textless=True))
    else:
        summary.update(read_all=True, reason="this source reads every document")
    sync.summary["full_read"] = summary
    yield from sync.origin.full(resume)
