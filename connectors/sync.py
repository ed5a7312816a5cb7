"""The one run loop: one run of one `Source` (an export folder, iManage, NetDocuments,
Rechtspraak): crawl, ingest, delete what is gone, sync groups, progress, report.

Written against the ingest pipeline's interface (``app.ingest.pipeline.IngestPipeline``),
described as the `connectors.base.Pipeline` protocol: exactly the calls made here.

Rules this module enforces:

* Full crawl -> mark-and-sweep: documents the pipeline knows but the crawl did not see are
  deleted ONLY after a complete crawl without a single error. Each sweep candidate is first
  confirmed with a point check when the connector offers one (a crawl can miss a document
  for harmless reasons: offsets that shifted, a cabinet out of scope), so only "deleted" and
  "access revoked" answers remove.
* A full crawl is complete only when no page failed and, where the server reported a total,
  the ids listed reconcile with it (the connectors report both per library/cabinet).
* A sweep that would remove more than ``sweep_max_fraction`` of a library or cabinet is held:
  listed in the report and kept in the sync state, applied only by `confirm_sweep` (``ewall
  ingest confirm-sweep RUN`` or its admin route), which point-checks every id again.
* Point checks: 404/410 -> delete; a document that left the configured scope -> remove;
  401/403 -> hidden at once (visible to nobody: fail closed), deleted only by a full crawl's
  sweep, when a point check agrees, under its hold (a service account that lost access to a
  whole library must not empty the index). A document reported gone or revoked mid-crawl:
  the same.
* Delta -> change listing, then the security pass (`connectors.security_pass`): rules, moves
  and deletions that keep the modification date reach the index on this sync (a document
  the pass's whole listing missed is hidden; a full crawl's sweep deletes it).
* A full crawl reads every document in full; with ``full_reads="changed"``
  (EWALL_FULL_CRAWL_READS) only those the index does not hold as listed (version,
  modification stamp, place, rules: `connectors.full_read`); every one when asked to reread.
* Crash safety: the connector's checkpoint is persisted only after the documents before it
  are ingested, together with their "seen" marks (see `connectors.state`).
* Source trouble (auth refused, retries exhausted, an unreadable cursor) ends the run as
  "failed" with a report; anything else is a bug and propagates after the run is closed.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from connectors.base import (
    Checkpoint,
    CursorError,
    DocumentFailure,
    Pipeline,
    RunT,
    Source,
    SourceDocument,
    SourceUnavailableError,
    SourceUnsupportedError,
)
from connectors.crawl import as_source
from connectors.fence import SyncFenceLostError
from connectors.full_read import FULL_READS, full_items, resumes, starts_afresh
from connectors.http import ConnectorError, CredentialsError
from connectors.permissions import sync_groups
from connectors.security_pass import security_pass
from connectors.state import (
    RunLocalState,
    StateStore,
    SyncBusyError,
    SyncState,
    full_crawl_due,
)

log = logging.getLogger("ewall.connectors.sync")

# (items handled so far, the source's estimate of the total or None): a progress bar. The
# phase, deletions and errors go to ``Pipeline.progress`` at the same moments.
ProgressCallback = Callable[[int, int | None], None]
_LISTED_MAX = 1000  # ids listed per category in the report; counts are always complete
_REVOKED = "access revoked at source (fail closed)"
_EXAMPLES_MAX = 10  # ids named in one warning
# per container in the report ("gone": listed, then gone before it was ever stored)
_COUNTED = ("seen", "ingested", "unchanged", "quarantined", "failed", "deleted", "gone", "held",
            "hidden", "unread", "narrowed", "textless")  # unread: as listed, not downloaded
# Source trouble that ends a run as "failed" with a report; anything else is a bug.
_UNREAD = ("present at source but missed by a complete listing: its access was not read; "
           "hidden until a listing holds it again")
_SOURCE_TROUBLE = (ConnectorError, CursorError, SourceUnavailableError, SourceUnsupportedError,
                   OSError, SyncFenceLostError)  # and a sync whose lock another one took


# --- the run ---------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _SyncRun:
    def __init__(self, source: Source, *, pipeline: Pipeline[Any], state: StateStore,
                 run: object, started_by: str, on_progress: ProgressCallback | None,
                 seen_batch: int, progress_every: int) -> None:
        self.origin = source
        self.caps = source.capabilities
        self.source = source.name
        self.scope = source.scope
        self.pipeline = pipeline
        self.state = state
        self.run = run
        self.started_by = started_by
        self.on_progress = on_progress
        self.seen_batch = seen_batch
        self.progress_every = progress_every
        self.outcomes: Counter[str] = Counter()
        self.items = 0
        self.errors = 0
        self.deleted: list[dict[str, str]] = []
        self.gone_unstored: list[dict[str, str]] = []  # listed, gone before the first read
        self.deleted_count = 0
        self.kept_present: list[str] = []
        # present at source, yet no complete listing held them (kept_present is the report)
        self.present_unlisted: set[str] = set()
        self.checkpoints = 0
        self.phase = "crawl"
        self.summary: dict[str, Any] = {}
        self.sweep_max_fraction = 0.05
        self.security_pass_every = 0.0  # seconds between whole security passes; 0: every delta
        self.reread = False  # a full crawl reads every document, held as listed or not
        self.full_reads = "all"  # "changed": a full crawl reads only what changed (full_read)
        self.containers: dict[str, Counter[str]] = {}
        self.warnings: list[str] = []
        # documents ingested visible to nobody (fail closed): how many, and the first few
        self.unreadable_acls = 0
        self.listing_failures: list[str] = []  # a listing that could not be completed
        self.unreadable_examples: list[str] = []
        self._relisted: set[str] | None = None
        self._known_containers: dict[str, str | None] | None = None
        self._relist_failed = False
        # refused while listed (id, container): hidden; the sweep may delete them
        self.revoked: list[tuple[str, str | None]] = []

    # --- reporting ----------------------------------------------------------------------------

    def progress(self, force: bool = False, **extra: Any) -> None:
        # The progress bar moves with every item (one large decision can take the encoder
        # seconds); the run's row is written every `progress_every` items and when forced.
        if not force and self.items % self.progress_every:
            if self.on_progress is not None:
                self.on_progress(self.items, self.origin.total())
            return
        fields: dict[str, Any] = {
            "phase": self.phase, "seen": self.items, "done": self.items,
            "deleted": self.deleted_count, "errors": self.errors, **extra,
        }
        total = self.origin.total()
        if total is not None:
            fields["total"] = total
        self.pipeline.progress(self.run, **fields)
        if self.on_progress is not None:
            self.on_progress(self.items, fields.get("total"))

    def error(self, external_id: str | None, reason: str,
              details: dict[str, Any] | None = None) -> None:
        self.errors += 1
        self.pipeline.record_error(self.run, self.source, external_id, reason, details)

    def delete(self, external_id: str, reason: str, container: str | None = None) -> bool:
        deleted = bool(self.pipeline.delete(self.run, self.source, external_id, reason))
        if deleted:
            self.deleted_one(external_id, reason, container)
        return deleted

    def deleted_one(self, external_id: str, reason: str, container: str | None) -> None:
        """The report's share of a removal the pipeline made."""
        self.deleted_count += 1
        self.count(container or self.container_of(external_id), "deleted")
        if len(self.deleted) < _LISTED_MAX:
            self.deleted.append({"external_id": external_id, "reason": reason})

    def container_of(self, external_id: str) -> str | None:
        """The library/cabinet of a document: the source's word, else what the index
        recorded when it was ingested."""
        found = self.origin.container_of(external_id)
        if found is not None:
            return found
        if self._known_containers is None:
            known = getattr(self.pipeline, "known_containers", None)
            self._known_containers = known(self.source) if callable(known) else {}
        known_found = self._known_containers.get(external_id)
        return known_found if isinstance(known_found, str) else None

    def count(self, container: str | None, what: str, n: int = 1) -> None:
        if not self.caps.containers:
            return
        self.containers.setdefault(container or "?", Counter())[what] += n

    def warn(self, message: str) -> None:
        if message in self.warnings:
            return
        self.warnings.append(message)
        record = getattr(self.pipeline, "record_warning", None)
        if callable(record):
            record(self.run, self.source, message)

    def collect_warnings(self) -> None:
        for message in self.origin.warnings():
            self.warn(message)
        if self.unreadable_acls:
            shown = "; ".join(self.unreadable_examples)
            more = self.unreadable_acls - len(self.unreadable_examples)
            self.warn(
                f"{self.unreadable_acls} document(s) ingested visible to nobody: their "
                f"permissions could not be read ({shown}{f'; and {more} more' if more else ''})"
            )

    def container_report(self) -> dict[str, dict[str, Any]]:
        """Per library/cabinet: server total, seen, ingested, unchanged, quarantined, failed,
        deleted, gone, held, hidden (access revoked) and whether its listing was complete."""
        listings = self.origin.listings()
        out: dict[str, dict[str, Any]] = {}
        for name in sorted(set(self.containers) | set(listings)):
            counts = self.containers.get(name, Counter())
            listing = listings.get(name) or {}
            out[name] = {"server_total": listing.get("server_total"),
                         "listed": listing.get("listed"), "complete": listing.get("complete"),
                         **{what: counts[what] for what in _COUNTED}}
            if listing.get("reason"):
                out[name]["reason"] = listing["reason"]
        return out

    # --- items ------------------------------------------------------------------------------------

    def ingest(self, doc: SourceDocument) -> str:
        outcome = self.origin.ingest(self.pipeline, self.run, doc)
        self.outcomes[outcome.status] += 1
        if doc.acl is not None and not doc.acl.resolvable and outcome.status != "error":
            # fail closed, and said: a tenant without the permissions endpoint would
            # otherwise hide every document while every run reports success
            self.unreadable_acls += 1
            if len(self.unreadable_examples) < _EXAMPLES_MAX:
                self.unreadable_examples.append(
                    f"{doc.external_id}: {doc.acl.note or 'unresolvable'}"
                )
        container = doc.metadata.get("container")
        container = container if isinstance(container, str) else None
        self.count(container, "seen")
        self.count(container, {"added": "ingested", "updated": "ingested",
                               "unchanged": "unchanged", "quarantined": "quarantined"}
                   .get(outcome.status, "failed"))
        return outcome.status

    def failure(self, item: DocumentFailure) -> bool:
        """Act on a connector failure; True when it counts as an error."""
        if item.external_id:
            self.count(item.container, "seen")
        if item.external_id and item.gone:
            reason = f"deleted at source: {item.reason}"
            if not self.delete(item.external_id, reason, item.container):  # never stored
                self.count(item.container, "gone")
                if len(self.gone_unstored) < _LISTED_MAX:
                    self.gone_unstored.append({"external_id": item.external_id,
                                               "reason": item.reason})
            return False
        if item.external_id and item.revoked:
            self.hide(item.external_id, f"{_REVOKED}: {item.reason}", item.container)
            self.revoked.append((item.external_id, item.container))
            return False
        if item.external_id and item.acl is not None:  # the rules read stand, content or not
            self.pipeline.apply_acl(self.run, self.source, item.external_id, item.acl)
        if item.external_id and item.listed_matter is not None:
            hide = getattr(self.pipeline, "hide_if_moved", None)
            reason = (f"moved at source to matter {item.listed_matter!r} but could not be read "
                      f"({item.reason}): hidden until a sync reads it (fail closed)")
            if callable(hide) and hide(self.run, self.source, item.external_id,
                                       item.listed_matter, reason, item.listed_client):
                self.count(item.container, "hidden")
        self.count(item.container, "failed")
        if item.listing:
            self.listing_failures.append(item.reason)
        details = dict(item.details or {})
        if self.caps.containers:
            details.update(status=item.status, container=item.container)
        self.error(item.external_id, item.reason, details)
        return True

    # --- deletions ----------------------------------------------------------------------------

    def give_version_hints(self) -> None:
        """Let a source address documents the way its API documents them (iManage:
        ``LIB!number.version``) with the version the index holds."""
        if self.caps.point_check:
            self.origin.hint_versions(self.pipeline.known_versions(self.source))

    def verdict(self, external_id: str, origin: str, *, listed: bool) -> str | None:
        """Why the document should leave the index, or None to keep it.

        ``listed``: the caller has just listed the whole configured scope completely and the
        document was not in it; only then is "present somewhere, place unknown" read as
        "left the scope".
        """
        if not self.caps.point_check:
            if origin in ("sweep", "confirmed sweep"):
                return "not seen in a complete crawl"
            return None  # a suspect without a point check stays: the next sweep decides
        try:
            presence = self.origin.check(external_id)
        except CredentialsError:
            raise
        except ConnectorError as exc:
            self.error(external_id, f"{origin}: point check failed, kept: {exc}")
            return None
        if presence == "deleted":
            return "deleted at source"
        if presence == "forbidden":
            return _REVOKED
        if presence == "out_of_scope":
            return "moved out of the configured scope"
        if presence == "unplaced" and listed and not self.listed_again(external_id):
            return ("present at source but in no complete listing of the configured scope, "
                    "twice (moved out of it)")
        self.present_unlisted.add(external_id)
        if len(self.kept_present) < _LISTED_MAX:
            self.kept_present.append(external_id)
        return None

    def listed_again(self, external_id: str) -> bool:
        """Whether a second, fresh listing of the scope holds the document. A document the
        source cannot place is removed only when two complete listings missed it: one
        listing can skip a row when an offset shifts under it and no total tells. True (keep)
        when the listing cannot be made."""
        if self._relisted is None:
            if not self.caps.listing:
                return True
            try:
                self._relisted = set(self.origin.list_ids())
            except CredentialsError:
                raise
            except ConnectorError as exc:
                self.error(None, f"second listing for unplaced documents failed, kept: {exc}")
                self._relisted = set()
                self._relist_failed = True
        return self._relist_failed or external_id in self._relisted

    def confirm_and_delete(self, external_id: str, origin: str, *, listed: bool) -> None:
        reason = self.verdict(external_id, origin, listed=listed)
        if reason == _REVOKED and origin == "point check":
            self.hide(external_id, f"{origin}: {reason}", None)
        elif reason is not None:
            self.delete(external_id, f"{origin}: {reason}")

    def hide(self, external_id: str, reason: str, container: str | None) -> bool:
        hidden = self.pipeline.hide(self.run, self.source, external_id, reason)
        if hidden:
            self.count(container or self.container_of(external_id), "hidden")
        return hidden

    def sweep(self, crawl_id: str, st: SyncState) -> dict[str, Any]:
        self.phase = "sweep"
        seen = self.state.seen_ids(self.source, self.scope, crawl_id)
        known = self.pipeline.known_external_ids(self.source)
        candidates = sorted(known - seen)
        candidates = [c for c in candidates if self.origin.owns(c)]
        forgotten = self.pipeline.forget_textless(self.source, seen, self.origin.owns)
        self.give_version_hints()
        removals: dict[str, list[tuple[str, str]]] = {}
        before = self.deleted_count
        for external_id in candidates:
            reason = self.verdict(external_id, "sweep", listed=True)
            if reason == _REVOKED:  # access: hidden now, deleted as the hold allows
                self.hide(external_id, f"sweep: {reason}", None)
            elif external_id in self.present_unlisted:
                # Present, but the complete listing skipped it (a shifted offset, a dropped
                # page): its security was not read, and the access it was indexed with may be
                # wider than the source's now. Hidden until a listing reads it (fail closed).
                self.hide(external_id, f"sweep: {_UNREAD}", None)
            if reason is not None:
                container = self.container_of(external_id) or "?"
                removals.setdefault(container, []).append((external_id, reason))
        listed: Counter[str] = Counter()  # revoked while listed: hidden, seen, removals too
        for external_id, where in self.revoked:
            if external_id not in known or not self.caps.point_check:
                continue  # never indexed: nothing to delete; or no point check: stays hidden
            # listed, so a point check must agree (a refusal may pass): else it stays hidden
            reason = self.verdict(external_id, "sweep", listed=False)
            if reason is None:
                continue
            container = where or self.container_of(external_id) or "?"
            removals.setdefault(container, []).append((external_id, reason))
            listed[container] += 1
        seen_by: Counter[str] = Counter()  # per library/cabinet: what the index knew before
        for name, counts in self.containers.items():
            seen_by[name] += counts["seen"]
        total_known = len(seen) + len(candidates)
        held: list[tuple[str, str]] = []
        held_containers: dict[str, dict[str, Any]] = {}
        for container, items in sorted(removals.items()):
            size = total_known if container == "?" else (
                seen_by[container] + len(items) - listed[container])
            share = len(items) / size if size else 1.0
            if share > self.sweep_max_fraction:
                held.extend(items)  # a point check confirmed them (gone, moved): hidden now
                for external_id, reason in items if self.caps.point_check else ():
                    self.hide(external_id, f"sweep: {reason}", None)
                held_containers[container] = {"would_remove": len(items), "of": size,
                                              "share": round(share, 4)}
                self.count(container, "held", len(items))
                continue
            for external_id, reason in items:
                self.delete(external_id, f"sweep: {reason}",
                            None if container == "?" else container)
        run_id = str(getattr(self.run, "run_id", ""))
        if held:
            st.held_sweep = {"run_id": run_id, "crawl_id": crawl_id, "at": _now(),
                             "ids": [list(x) for x in held]}
            hold = getattr(self.pipeline, "record_held", None)
            for external_id, reason in held:
                if callable(hold):
                    hold(self.run, self.source, external_id, f"sweep held: {reason}")
            self.warn(f"sweep held: {len(held)} removal(s) exceed EWALL_SWEEP_MAX_FRACTION="
                      f"{self.sweep_max_fraction} of {', '.join(sorted(held_containers))}; "
                      f"apply with `ewall ingest confirm-sweep {run_id}`")
        else:
            st.held_sweep = None
        self.progress(force=True)
        out: dict[str, Any] = {"ran": True, "seen": len(seen), "candidates": len(candidates),
                               "deleted": self.deleted_count - before,
                               "textless_forgotten": forgotten}
        if held:
            out["held"] = {"count": len(held), "containers": held_containers,
                           "ids": [x[0] for x in held[:_LISTED_MAX]],
                           "confirm": f"ewall ingest confirm-sweep {run_id}"}
        return out

    # --- modes ----------------------------------------------------------------------------------

    def full(self, st: SyncState) -> None:
        if starts_afresh(self, st):  # a reread, or all after a crawl that left some unread
            st.crawl_id = None
        resumed = st.crawl_id is not None
        if st.crawl_id is None:
            st.crawl_id = uuid.uuid4().hex
            st.crawl_cursor = None
            st.crawl_started_at = _now()
            st.crawl_errors = 0
            st.crawl_error_reasons = []
            self.state.forget_crawls(self.source, self.scope)  # leftovers of abandoned crawls
        self.state.save(self.source, self.scope, st)  # with what this crawl reads
        crawl_id = st.crawl_id
        self.summary.update(crawl_id=crawl_id, resumed=resumed, document_failures=0,
                            resumed_from_checkpoint=bool(resumed and st.crawl_cursor))
        resume = Checkpoint(st.crawl_cursor) if st.crawl_cursor else None
        sweeps = self.caps.sweep
        pending: list[str] = []
        for item in full_items(self, crawl_id, resume):
            if isinstance(item, Checkpoint):
                st.crawl_cursor = item.token
                self.state.checkpoint(self.source, self.scope, st, pending)
                pending = []
                self.checkpoints += 1
                continue
            self.items += 1
            # A document that was listed but failed (its content, its ingest) is seen: the
            # listing was whole, so it blocks no sweep; only a listing's failure does
            listed_failure = isinstance(item, DocumentFailure) and bool(item.external_id)
            if isinstance(item, SourceDocument) or listed_failure:
                failed = (
                    self.failure(item)
                    if isinstance(item, DocumentFailure)
                    else self.ingest(item) == "error"
                )
                self.summary["document_failures"] += failed
                if sweeps and item.external_id:  # seen marks exist for the sweep only
                    pending.append(item.external_id)
                if len(pending) >= self.seen_batch:
                    self.state.mark_seen(self.source, self.scope, crawl_id, pending)
                    pending = []
            elif self.failure(item):
                self._crawl_error(st, item.reason)
            self.progress()
        self.state.checkpoint(self.source, self.scope, st, pending)
        self.summary["finished"] = True
        # Complete: finished, no listing failed, every listing reconciled (documents that
        # failed are in document_failures and the run's errors).
        self.summary["complete"] = not st.crawl_errors
        if not sweeps:
            self.summary["sweep"] = {
                "ran": False,
                "skipped_reason": "this source loads what it is given and never sweeps",
            }
        elif st.crawl_errors:
            self.summary["sweep"] = {
                "ran": False,
                "skipped_reason": f"{st.crawl_errors} error(s) during the crawl; "
                                  "deletions wait for a complete, error-free crawl",
                "errors": list(st.crawl_error_reasons),
            }
        else:
            self.summary["sweep"] = self.sweep(crawl_id, st)
        if self.caps.resumable and st.crawl_cursor:
            st.cursor = st.crawl_cursor  # a finished crawl's last checkpoint starts the delta
        st.watermark = st.crawl_started_at
        st.last_complete_crawl_id = crawl_id
        st.last_complete_crawl_at = _now()
        st.crawl_id = st.crawl_cursor = st.crawl_started_at = None
        st.crawl_errors = 0
        st.crawl_error_reasons = []
        self.state.save(self.source, self.scope, st)
        self.state.forget_crawls(self.source, self.scope)

    def _crawl_error(self, st: SyncState, reason: str) -> None:
        # Persisted with the next checkpoint, so a crawl resumed after a crash still knows
        # that it may not sweep.
        st.crawl_errors += 1
        if len(st.crawl_error_reasons) < 20:
            st.crawl_error_reasons.append(reason[:300])

    def delta(self, st: SyncState, suspects: Iterable[str], deletion_scan: bool) -> None:
        started = _now()
        since = Checkpoint(st.cursor) if st.cursor else None
        for item in self.origin.changes(since):
            if isinstance(item, Checkpoint):
                st.cursor = item.token
                self.state.save(self.source, self.scope, st)
                self.checkpoints += 1
                continue
            self.items += 1
            if isinstance(item, SourceDocument):
                self.ingest(item)
            else:
                self.failure(item)
            self.progress()
        self.summary["security_pass"] = security_pass(self, st)
        self.summary["complete"] = True
        self.point_checks(set(suspects), deletion_scan)
        st.last_delta_at = _now()
        st.watermark = started
        self.state.save(self.source, self.scope, st)

    def point_checks(self, suspects: set[str], deletion_scan: bool) -> None:
        self.phase = "point_checks"
        scanned: int | None = None
        known_missing: set[str] = set()
        listed: set[str] | None = None
        if deletion_scan and self.caps.listing and self.caps.point_check:
            try:
                listed = set(self.origin.list_ids())
            except CredentialsError:
                raise
            except ConnectorError as exc:
                self.listing_failures.append(f"deletion suspects not listed, none checked: {exc}")
                self.error(None, self.listing_failures[-1])
        if listed is not None and self.caps.point_check:
            known_missing = self.pipeline.known_external_ids(self.source) - listed
            known_missing = {k for k in known_missing if self.origin.owns(k)}
            scanned = len(listed)
        before = self.deleted_count
        self.give_version_hints()
        for external_id in sorted(suspects | known_missing):
            self.confirm_and_delete(external_id, "point check",
                                    listed=external_id in known_missing)
        self.summary["point_checks"] = {"suspects": len(suspects | known_missing),
                                        "listed": scanned,
                                        "deleted": self.deleted_count - before}
        self.progress(force=True)


def run_source(
    source: Source,
    pipeline: Pipeline[RunT],
    state: StateStore | None,
    *,
    mode: str,
    started_by: str,
    on_progress: ProgressCallback | None = None,
    run: RunT | None = None,
    suspects: Iterable[str] = (),
    deletion_scan: bool = False,
    sync_permissions: bool = True,
    seen_batch: int = 500,
    progress_every: int = 50,
    sweep_max_fraction: float = 0.05,
    full_crawl_every_s: float | None = None,
    security_pass_every_s: float = 0.0,
    reread: bool = False,
    full_reads: str = "all",
) -> dict[str, Any]:
    """The one run loop: load one source fully or its changes, and return the pipeline's
    delta report plus a ``sync`` section (mode, crawl id, resume, sweep or why it was
    skipped, point checks, deletions, groups, per-container counts, failure) and whatever
    sections the source adds (`Source.report`).

    ``mode``: "full" or "delta"; a source without a change listing always loads fully.
    ``run``: a run the caller already started (the API starts it to answer 202 at once);
    otherwise one is started here. ``suspects``: external ids to point-check in a delta (e.g.
    documents of a workspace that changed). ``deletion_scan``: in a delta, also list every id
    at the source and point-check the known ones that are missing (costly on large tenants;
    full crawls sweep anyway). A full run resumes an unfinished full crawl of the same
    (source, scope) if there is one. ``sweep_max_fraction``: see the module docstring.
    ``full_crawl_every_s``: a delta runs as a full crawl when the last complete one is older
    than this (or there was none): only a full crawl lists every document and deletes what
    is gone (its sweep); it reads in full what the index does not hold as listed
    (`connectors.full_read`) with ``full_reads`` "changed" (EWALL_FULL_CRAWL_READS), else
    every document; ``reread``: every document, in a crawl of its own. ``security_pass_every_s``: a
    delta's security pass (`connectors.security_pass`) runs when its last whole one is at
    least this old (0: every delta). ``state`` is used only by sources that keep state
    between runs (`Capabilities.keeps_state`). Raises `SyncBusyError` when another sync of
    the same scope is running (a given ``run`` is then closed as failed first).
    """
    if mode not in ("full", "delta"):
        raise ValueError(f"mode must be 'full' or 'delta', not {mode!r}")
    if full_reads not in FULL_READS:  # a typo must not turn off the safe default
        raise ValueError(f"full_reads must be one of {FULL_READS}, not {full_reads!r}")
    if not source.capabilities.changes:
        mode = "full"
    store: StateStore = RunLocalState()
    if source.capabilities.keeps_state:
        if state is None:
            raise ValueError(f"{source.kind} keeps state between runs: give its state store")
        store = state
    try:
        with store.lock(source.name, source.scope) as held:
            return _locked_run(
                source, pipeline, held, mode=mode, started_by=started_by,
                on_progress=on_progress, run=run, suspects=suspects,
                deletion_scan=deletion_scan, sync_permissions=sync_permissions,
                seen_batch=seen_batch, progress_every=progress_every,
                sweep_max_fraction=sweep_max_fraction, full_crawl_every_s=full_crawl_every_s,
                security_pass_every_s=security_pass_every_s, reread=reread,
                full_reads=full_reads)
    except SyncBusyError as exc:
        if run is not None:
            pipeline.finish_run(run, status="failed", error=str(exc))
        raise


def run_sync(
    source: str,
    connector: object,
    pipeline: Pipeline[RunT],
    state: StateStore,
    **kw: Any,
) -> dict[str, Any]:
    """`run_source` for a connector written to the crawl protocols (iManage, NetDocuments),
    presented as a `Source` by `connectors.crawl.as_source`; ``source`` is its name."""
    return run_source(as_source(connector, source), pipeline, state, **kw)


def _locked_run(
    source: Source,
    pipeline: Pipeline[RunT],
    state: StateStore,
    *,
    mode: str,
    started_by: str,
    on_progress: ProgressCallback | None,
    run: RunT | None,
    suspects: Iterable[str],
    deletion_scan: bool,
    sync_permissions: bool,
    seen_batch: int,
    progress_every: int,
    sweep_max_fraction: float,
    full_crawl_every_s: float | None,
    security_pass_every_s: float,
    reread: bool,
    full_reads: str,
) -> dict[str, Any]:
    name, scope = source.name, source.scope
    st = state.load(name, scope)
    promoted = full_crawl_due(st, full_crawl_every_s) if mode == "delta" else None
    if promoted:
        mode = "full"
    if run is None:
        params = {**source.run_params(), "mode": mode, "scope": scope,
                  "resume": bool(mode == "full" and resumes(st, reread, full_reads))}
        run = pipeline.start_run(source.kind, params, started_by)
    sync = _SyncRun(source, pipeline=pipeline, state=state, run=run, started_by=started_by,
                    on_progress=on_progress, seen_batch=max(1, seen_batch),
                    progress_every=max(1, progress_every))
    sync.sweep_max_fraction = sweep_max_fraction
    sync.security_pass_every = security_pass_every_s
    sync.reread = reread
    sync.full_reads = full_reads
    sync.summary.update(mode=mode, scope=scope, complete=False)
    if promoted:
        sync.summary["promoted_to_full"] = promoted
    failed: str | None = None
    try:
        if mode == "full":
            sync.full(st)
        else:
            sync.delta(st, suspects, deletion_scan)
        if sync_permissions:
            sync_groups(sync)
    except _SOURCE_TROUBLE as exc:
        failed = f"{type(exc).__name__}: {exc}"
        log.warning("sync failed", extra={"source": name, "scope": scope, "mode": mode,
                                          "error": failed})
        sync.error(None, failed)
    except BaseException as exc:
        # A bug or a crash of the consumer: close the run as failed, keep the state as it
        # was at the last checkpoint, and let the exception through.
        try:
            pipeline.finish_run(run, status="failed", error=f"interrupted: {type(exc).__name__}")
        except Exception:
            log.exception("could not close the interrupted run")
        raise
    if failed is None and sync.listing_failures:
        # invariant 9: a listing that cannot be completed is a failed crawl (a scheduler
        # reading the exit status must see it), whatever it ingested on the way
        n = len(sync.listing_failures)
        failed = (f"{n} listing{'s' if n > 1 else ''} could not be completed (a failed crawl: "
                  f"the sweep waits for a complete one): {sync.listing_failures[0]}")
    sync.phase = "done"
    sync.collect_warnings()
    sync.summary.update(
        containers=sync.container_report(),
        warnings=sync.warnings,
        failed=failed,
        items=sync.items,
        outcomes=dict(sync.outcomes),
        errors=sync.errors,
        checkpoints=sync.checkpoints,
        deleted=sync.deleted,
        deleted_count=sync.deleted_count,
        gone_unstored=sync.gone_unstored,
        kept_present=sync.kept_present,
    )
    if mode == "full" and not sync.summary.get("finished"):
        sync.summary["sweep"] = {"ran": False, "skipped_reason": "the crawl did not finish; "
                                 "it resumes from its last checkpoint next time"}
    # Kept with the run, so GET /v1/ingest/runs/{id} shows it too (progress.sync).
    sync.progress(force=True, sync=sync.summary)
    report = pipeline.finish_run(run, status="failed" if failed else None, error=failed)
    return {**report, **source.report(pipeline, run), "sync": sync.summary}


class SweepNotHeldError(ValueError):
    """confirm_sweep for a run whose sweep is not (or no longer) the one held."""


def confirm_source_sweep(
    source: Source,
    pipeline: Pipeline[RunT],
    state: StateStore,
    *,
    held_run_id: str,
    started_by: str,
) -> dict[str, Any]:
    """Apply a held sweep: a person confirmed that the removals are expected.

    Every held id is point-checked again first (a document restored since the crawl stays);
    the removals are recorded in a new run whose report is returned. Raises
    `SweepNotHeldError` when ``held_run_id`` is not the sweep held for this source and scope
    (never held, already confirmed, or superseded by a later complete crawl, or a source
    that never sweeps).
    """
    name, scope = source.name, source.scope
    if not source.capabilities.sweep:
        raise SweepNotHeldError(f"{source.kind} never sweeps; run {held_run_id} holds no sweep")
    with state.lock(name, scope) as held_state:
        st = held_state.load(name, scope)
        held = st.held_sweep
        if not held or str(held.get("run_id")) != str(held_run_id):
            raise SweepNotHeldError(f"no sweep of run {held_run_id} is held for {name} "
                                    f"({scope})")
        run = pipeline.start_run(source.kind, {"confirm_sweep": str(held_run_id),
                                               "scope": scope}, started_by)
        sync = _SyncRun(source, pipeline=pipeline, state=held_state, run=run,
                        started_by=started_by, on_progress=None, seen_batch=500,
                        progress_every=50)
        sync.phase = "confirmed sweep"
        ids = [str(x[0]) for x in held.get("ids") or [] if isinstance(x, list) and x]
        failed: str | None = None
        try:
            sync.give_version_hints()
            for external_id in ids:
                sync.confirm_and_delete(external_id, "confirmed sweep", listed=True)
            st.held_sweep = None
            held_state.save(name, scope, st)
        except _SOURCE_TROUBLE as exc:
            failed = f"{type(exc).__name__}: {exc}"
            sync.error(None, failed)
        report = pipeline.finish_run(run, status="failed" if failed else None, error=failed)
        return {**report, "sync": {"mode": "confirm-sweep", "scope": scope,
                                   "held_run_id": str(held_run_id), "held": len(ids),
                                   "deleted": sync.deleted, "deleted_count": sync.deleted_count,
                                   "kept_present": sync.kept_present, "failed": failed}}


def confirm_sweep(
    source: str,
    connector: object,
    pipeline: Pipeline[RunT],
    state: StateStore,
    *,
    held_run_id: str,
    started_by: str,
) -> dict[str, Any]:
    """`confirm_source_sweep` for a connector written to the crawl protocols."""
    return confirm_source_sweep(as_source(connector, source), pipeline, state,
                                held_run_id=held_run_id, started_by=started_by)
