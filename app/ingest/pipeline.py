"""The ingest pipeline: extract -> chunk -> embed -> store, with runs and delta reports.

Every source (API push, export folder, iManage, NetDocuments, Rechtspraak) feeds the same
`IngestPipeline`. Bad input never raises out of `ingest`: it becomes a quarantine entry or
an error in the run's report.

Invariants:
- chunk id = ``<source>:<external_id>:<first 16 hex of sha256(normalised text)>``; identical
  text twice in a document is one chunk; re-ingesting inserts only new chunks, deletes
  vanished ones and leaves unchanged ones alone (no re-embedding);
- a document is replaced in one transaction (the steps are in ``document_write``);
- metadata is tri-state (absent None, present-but-empty "", value); see ``document_write``
  for quarantine (absent, empty or unknown client or matter, a stored document's too).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import Connection

from app.audit.chain import canonical_json
from app.db.engine import Database
from app.embeddings import (
    Embedder,
    document_summary,
    passage_context,
    passage_input,
    vector_literal,
)
from app.errors import AppError
from app.ingest import document_write, job_fence, preparation, repository, source_groups
from app.ingest.report import load_report
from app.ingest.types import (
    ChunkLimits,
    DocumentOutcome,
    ExtractedDocument,
    ExtractionError,
    PreparedChunk,
)
from app.known_vectors import KnownVectors
from app.reembed.service import check_write_model
from app.settings import Settings
from app.types import NOBODY_ACL
from app.walls.access import mark_writer
from connectors.base import Placed, SourceAcl, SourceDocument, SourceGroup

__all__ = ["DocumentOutcome", "IngestPipeline", "IngestRun"]

log = logging.getLogger("ewall.ingest")
Moved = tuple[str | None, str]  # (client, matter) a listing gives: see hide_if_moved


PACED_SLICE = 64  # chunks encoded between two looks at the pacer, within one document


class Pacer(Protocol):
    """Gives way between documents (app/jobs/pacing.py: the job worker's, while people
    search); the API process's pipeline has none, so a pushed document never waits."""

    def pace(self) -> float: ...

    def reset(self) -> None: ...


@dataclass
class IngestRun:
    run_id: uuid.UUID
    connector: str
    started_by: str
    counts: Counter[str] = field(default_factory=Counter)
    seq: int = 0
    progress: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    job_id: int | None = None  # the background push this run carries out, if it is one
    claim: job_fence.JobClaim | None = None  # a job's claim, checked by each write (job_fence)

    def next_seq(self) -> int:
        with self.lock:
            self.seq += 1
            return self.seq


@dataclass(frozen=True)
class PassageInputs:
    """What the encoder reads for each chunk of one document (chunk id -> text), and the
    document title and summary they were built with."""

    title: str
    summary: str | None
    by_chunk: dict[str, str]


# the reason of an outcome whose write failed on our side (a timeout, a lost connection):
# worth another try, unlike a document that cannot be read
STORE_FAILED = "internal error"


class IngestPipeline:
    def __init__(self, database: Database, embedder: Embedder, settings: Settings) -> None:
        self.database = database
        self.embedder = embedder
        self.settings = settings
        self.limits = ChunkLimits(model_max=embedder.max_passage_tokens)
        # benchmark counters (seconds); the pipeline is used from one thread per run
        self.timings: dict[str, float] = {"embed_s": 0.0, "db_s": 0.0}
        # True in a process that runs its ingest work itself (the CLI): each run it starts
        # holds a session lock on a connection of its own until the run ends, so that a
        # reader can tell a run whose process died (reap_orphaned_run) from a live one.
        # Background jobs need none: the job queue retakes a dead worker's job.
        self.hold_runs = False
        self._holders: dict[uuid.UUID, Connection] = {}
        self.pacer: Pacer | None = None
        # vectors already encoded by this model, by encoder input (the demo's shipped ones)
        self.known: KnownVectors | None = None

    # --- runs ---------------------------------------------------------------------------

    def start_run(
        self,
        connector: str,
        params: dict[str, Any],
        started_by: str,
        *,
        conn: Connection | None = None,
        progress: dict[str, Any] | None = None,
    ) -> IngestRun:
        """A new run, in ``conn``'s transaction when given (so that a queued job and its run
        commit together), else in its own."""
        if self.pacer is not None:
            self.pacer.reset()
        run = IngestRun(
            run_id=uuid.uuid4(),
            connector=connector,
            started_by=started_by,
            progress=dict(progress or {}),
        )
        if conn is not None:
            self._insert_run(conn, run, params)
            return run
        if self.hold_runs:
            self._hold(run)
        try:
            with self.database.transaction() as own:
                self._insert_run(own, run, params)
        except BaseException:
            self._release(run.run_id)
            raise
        return run

    def _hold(self, run: IngestRun) -> None:
        """Take the run's liveness lock (before its row exists: a reader never finds it
        running and unheld) on a connection kept until the run ends."""
        holder = self.database.engine.connect()
        try:
            repository.hold_run(holder, run.run_id)
            holder.commit()
        except BaseException:
            holder.close()
            raise
        run.progress["liveness"] = "process"
        self._holders[run.run_id] = holder

    def _release(self, run_id: uuid.UUID) -> None:
        holder = self._holders.pop(run_id, None)
        if holder is None:
            return
        try:
            repository.release_run(holder, run_id)
            holder.commit()
        finally:
            holder.close()  # the lock goes with the session in any case

    @staticmethod
    def _insert_run(conn: Connection, run: IngestRun, params: dict[str, Any]) -> None:
        repository.insert_run(
            conn,
            run.run_id,
            run.connector,
            run.started_by,
            canonical_json(params),
            canonical_json(run.progress),
        )

    def resume_run(self, run_id: uuid.UUID, claim: job_fence.JobClaim | None = None) -> IngestRun:
        """A run started earlier (a background job picking it up, perhaps after a crash):
        counts and progress as last written, events continuing after the last one."""
        if self.pacer is not None:
            self.pacer.reset()
        with job_fence.transaction(self.database, claim) as conn:
            state = repository.load_run_state(conn, run_id)
            repository.reopen_run(conn, run_id)
            seq = repository.last_event_seq(conn, run_id)
        return IngestRun(
            run_id=run_id,
            connector=state.connector,
            started_by=state.started_by,
            counts=Counter(state.counts),
            seq=seq,
            progress=state.progress,
            claim=claim,
        )

    def record_event(
        self,
        conn: Connection,
        run: IngestRun,
        kind: str,
        source: str | None,
        external_id: str | None,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        """Add an entry to the run's report inside the caller's transaction."""
        repository.insert_run_event(
            conn,
            run.run_id,
            run.next_seq(),
            kind,
            source,
            external_id,
            reason,
            canonical_json(details or {}),
        )

    def record_error(
        self,
        run: IngestRun,
        source: str,
        external_id: str | None,
        reason: str,
        details: dict[str, Any] | None = None,
        kind: str = "error",
    ) -> None:
        with run.lock:
            run.counts["errors"] += 1
            run.counts["seen"] += 1 if kind != "sweep_error" else 0
        with job_fence.transaction(self.database, run.claim) as conn:
            self.record_event(conn, run, kind, source, external_id, reason, details)

    def progress(self, run: IngestRun, **fields: Any) -> None:
        run.progress.update(fields)
        with job_fence.transaction(self.database, run.claim) as conn:
            repository.save_run_progress(
                conn, run.run_id, canonical_json(run.progress), canonical_json(dict(run.counts))
            )

    def finish_run(
        self, run: IngestRun, status: str | None = None, error: str | None = None
    ) -> dict[str, Any]:
        if status is None:
            status = "partial" if run.counts.get("errors") else "succeeded"
        try:
            with job_fence.transaction(self.database, run.claim) as conn:
                repository.finish_run(
                    conn,
                    run.run_id,
                    status,
                    error,
                    canonical_json(dict(run.counts)),
                    canonical_json(run.progress),
                )
                return load_report(conn, run.run_id)
        finally:
            self._release(run.run_id)

    # --- documents ------------------------------------------------------------------------

    def prepare(self, doc: SourceDocument) -> tuple[ExtractedDocument, list[PreparedChunk], str]:
        """Extract and chunk (no database). Raises ExtractionError for bad content."""
        return preparation.prepare_document(doc, self.embedder, self.limits)

    def _embeddings(
        self,
        conn: Connection,
        chunks: list[PreparedChunk],
        known_ids: set[str],
        inputs: PassageInputs,
    ) -> dict[str, str]:
        """pgvector literals for chunks not already stored; a stored vector whose encoder
        input was the same text is reused, only genuinely new input goes to the encoder."""
        missing, reuse = document_write.chunks_to_encode(
            conn, chunks, known_ids, inputs.title, inputs.summary)
        return self._encode(missing, reuse, inputs)

    def _passage_inputs(self, chunks: list[PreparedChunk], title: str) -> PassageInputs:
        """What the encoder reads for each chunk: the document's context, then the chunk
        (app/embeddings.py passage_input)."""
        summary = document_summary((c.section_path, c.body) for c in chunks)
        limit = self.embedder.max_passage_tokens
        return PassageInputs(
            title,
            summary,
            {
                c.chunk_id: passage_input(
                    self.embedder, limit, c.body, c.section_path, title, summary
                )
                for c in chunks
            },
        )

    def _encode(
        self, missing: list[PreparedChunk], reuse: dict[str, str], inputs: PassageInputs
    ) -> dict[str, str]:
        """Vectors of ``missing``: reused where ``reuse`` has their text, else taken from
        ``known`` where it holds their input, else encoded from ``inputs`` (no database
        work: the caller holds no transaction open for it, or a short one)."""
        to_encode = [c for c in missing if c.content_sha256 not in reuse]
        out: dict[str, str] = {}
        if self.known is not None and to_encode:
            texts = [inputs.by_chunk[c.chunk_id] for c in to_encode]
            for chunk, known in zip(to_encode, self.known.take(self.embedder, texts), strict=True):
                if known is not None:
                    out[chunk.chunk_id] = vector_literal(known)
            to_encode = [c for c in to_encode if c.chunk_id not in out]
        # a long document gives way between slices too, not only between documents
        step = PACED_SLICE if self.pacer is not None else max(1, len(to_encode))
        for start in range(0, len(to_encode), step):
            piece = to_encode[start : start + step]
            if start and self.pacer is not None:
                self.pacer.pace()
            started = time.perf_counter()
            texts = [inputs.by_chunk[c.chunk_id] for c in piece]
            vectors = self.embedder.embed_passages(texts)
            self.timings["embed_s"] += time.perf_counter() - started
            if self.known is not None:
                self.known.add(texts, vectors)
            for chunk, vec in zip(piece, vectors, strict=True):
                out[chunk.chunk_id] = vector_literal(vec)
        for chunk in missing:
            if chunk.chunk_id not in out:
                out[chunk.chunk_id] = reuse[chunk.content_sha256]
        return out

    def ingest(
        self,
        run: IngestRun,
        doc: SourceDocument,
        *,
        public: bool = False,
        search_state: str | None = None,
    ) -> DocumentOutcome:
        """Ingest one document. ``public`` (internal callers only: case law, statutes) puts it
        in the open group without a client or matter; API and DMS documents never are."""
        if self.pacer is not None:
            self.pacer.pace()
        source = (doc.source or "").strip()
        external_id = (doc.external_id or "").strip()
        with run.lock:
            run.counts["seen"] += 1
        if not source or not external_id:
            self.record_error(
                run, source or "?", external_id or None, "missing source or external_id"
            )
            with run.lock:
                run.counts["seen"] -= 1
            return DocumentOutcome(
                "error", source, external_id, reason="missing id", run_id=run.run_id
            )
        doc.source, doc.external_id = source, external_id
        try:
            input_sha = self.input_fingerprint(doc, public, search_state)
        except (ValueError, OverflowError) as exc:  # a date past year 9999 in UTC, a lone
            # surrogate in a title: what the API refuses (422) is one report entry here
            reason = preparation.unreadable_reason(exc)  # names a field holding a surrogate
            with run.lock:
                run.counts["errors"] += 1
            with job_fence.transaction(self.database, run.claim) as conn:
                self.record_event(conn, run, "error", source, external_id, reason)
            return DocumentOutcome("error", source, external_id, reason=reason, run_id=run.run_id)
        unchanged = self._unchanged(doc, input_sha, run)
        if unchanged is not None:
            with run.lock:
                run.counts["unchanged"] += 1
            unchanged.run_id = run.run_id
            return unchanged
        doc.metadata["input_sha256"] = input_sha
        doc.metadata["prepared_with"] = self.prepared_with
        try:
            extracted, chunks, doc_type = self.prepare(doc)
        except ExtractionError as exc:
            if not public and self._rules_without_text(run, doc):
                with run.lock:
                    run.counts["superseded"] += 1
                return DocumentOutcome("superseded", source, external_id, run_id=run.run_id)
            kind = "no_text" if exc.reason.startswith("no text") else "error"
            with run.lock:
                run.counts["errors"] += 1
            with job_fence.transaction(self.database, run.claim) as conn:
                self.record_event(conn, run, kind, source, external_id, exc.reason)
                if kind == "no_text":  # a full crawl of what changed leaves it until it does
                    document_write.record_textless(conn, doc, self.prepared_with)
            return DocumentOutcome(
                "error", source, external_id, reason=exc.reason, run_id=run.run_id
            )

        started = time.perf_counter()
        embed_before = self.timings["embed_s"]
        try:
            outcome = self._write(run, doc, extracted, chunks, doc_type, public, search_state)
        except job_fence.JobClaimLostError:
            raise  # the job is another worker's now: nothing more of it is this one's
        except Exception as exc:  # a document must never take a whole run down
            if isinstance(exc, AppError) and exc.code == "model_not_live":
                raise  # except this: every document would fail alike (a re-embed switched)
            log.exception("ingest failed", extra={"source": source, "external_id": external_id})
            with run.lock:
                run.counts["errors"] += 1
            with job_fence.transaction(self.database, run.claim) as conn:
                self.record_event(
                    conn,
                    run,
                    "error",
                    source,
                    external_id,
                    f"internal error while storing: {type(exc).__name__}",
                )
            return DocumentOutcome(
                "error", source, external_id, reason=STORE_FAILED, run_id=run.run_id
            )
        self.timings["db_s"] += (time.perf_counter() - started) - (
            self.timings["embed_s"] - embed_before
        )
        with run.lock:
            run.counts[outcome.status] += 1
        outcome.run_id = run.run_id
        return outcome

    @property
    def prepared_with(self) -> str:
        return preparation.prepared_with(self.embedder.name, self.limits)

    def input_fingerprint(self, doc: SourceDocument, public: bool, search_state: str | None) -> str:
        """Everything that decides a document's chunks and their metadata. Equal fingerprint
        on an active document: nothing to extract, chunk or write (the common re-sync case)."""
        return preparation.input_fingerprint(
            doc, public, search_state, self.embedder.name, self.limits
        )

    def _unchanged(
        self, doc: SourceDocument, input_sha: str, run: IngestRun
    ) -> DocumentOutcome | None:
        with job_fence.transaction(self.database, run.claim) as conn:
            mark_writer(conn)
            stored = repository.find_fingerprint(conn, doc.source, doc.external_id)
            # quarantined documents always go the full way: their matter may exist by now;
            # so do those stored without today's stamp (a full crawl would read them again)
            if (stored is None or stored.status != "active" or stored.input_sha != input_sha
                    or stored.prepared_with != self.prepared_with):
                return None
            self._supersede(conn, doc.source, doc.external_id, run)  # it stands as pushed
        return DocumentOutcome(
            status="unchanged",
            source=doc.source,
            external_id=doc.external_id,
            document_id=stored.document_id,
            chunks=stored.chunks,
        )

    def _embed_new_chunks(
        self, doc: SourceDocument, extracted: ExtractedDocument, chunks: list[PreparedChunk]
    ) -> tuple[dict[str, str], PassageInputs]:
        """Embeddings of the chunks the document does not have yet or whose encoder input
        changed, and every chunk's encoder input. What is stored is read in short
        transactions; building the inputs and the encoding (and the pacer's pauses between
        its slices) hold no transaction or pooled connection, and the write transaction
        stays short (it checks the changed inputs again under the document's lock)."""
        with self.database.transaction() as conn:
            mark_writer(conn)
            found = repository.find_document(conn, doc.source, doc.external_id)
            stored = repository.document_passages(conn, found[0]) if found else []
        title = document_write.document_title(doc, extracted, found[1] if found else None)
        inputs = self._passage_inputs(chunks, title)
        changed, _ = self._input_changed(stored, found[1] if found else None, chunks, inputs)
        kept = {p.chunk_id for p in stored} - changed
        with self.database.transaction() as conn:
            missing, reuse = document_write.chunks_to_encode(
                conn, chunks, kept, inputs.title, inputs.summary)
        return self._encode(missing, reuse, inputs), inputs

    def _input_changed(
        self,
        stored: list[repository.StoredChunkText],
        stored_title: str | None,
        chunks: list[PreparedChunk],
        inputs: PassageInputs,
    ) -> tuple[set[str], set[str]]:
        """The stored chunks that stay (same text) but whose encoder input changed with
        their document's context (a new title, a summary published later or changed): their
        vectors are encoded again, or they would keep the old context. Second, those whose
        context changed where the live model has no room for it beside the chunk: their
        vector stays, but another model's, with room, would differ (a re-embed run in
        progress must encode them again)."""
        old_summary = document_summary((p.section_path, p.body) for p in stored)
        new = {c.chunk_id: c for c in chunks}
        limit = self.embedder.max_passage_tokens
        changed: set[str] = set()
        cut_away: set[str] = set()
        for p in stored:
            chunk = new.get(p.chunk_id)
            if chunk is None or passage_context(
                p.section_path, stored_title, old_summary
            ) == passage_context(chunk.section_path, inputs.title, inputs.summary):
                continue
            # a context cut away in both (no room beside a long chunk) changes nothing
            before = passage_input(
                self.embedder, limit, p.body, p.section_path, stored_title, old_summary
            )
            (changed if before != inputs.by_chunk[p.chunk_id] else cut_away).add(p.chunk_id)
        return changed, cut_away

    def _write(
        self,
        run: IngestRun,
        doc: SourceDocument,
        extracted: ExtractedDocument,
        chunks: list[PreparedChunk],
        doc_type: str,
        public: bool,
        search_state: str | None,
    ) -> DocumentOutcome:
        """Replace the stored document with this version in one transaction (written again,
        not encoded again, when PostgreSQL fails it for a concurrent one, also at COMMIT: the
        outcome stands once committed, Database.retried)."""
        vectors, inputs = self._embed_new_chunks(doc, extracted, chunks)
        def write(conn: Connection) -> tuple[DocumentOutcome, int]:
            mark_writer(conn)
            # vectors of another model than the live one (a re-embed switched since this
            # process loaded its model) are refused, never mixed into the column
            e = self.embedder
            check_write_model(conn, e.model_id, e.name, e.dimension)
            before = repository.lock_document(conn, doc.source, doc.external_id)
            if before is None:
                # a first write: a concurrent first write of the same document may be
                # under way; after it commits, this one is an update of its row
                repository.lock_new_document(conn, doc.source, doc.external_id)
                before = repository.lock_document(conn, doc.source, doc.external_id)
            if job_fence.superseded(conn, run):  # the claim is checked first
                # a later write (or delete) of this document came first: it stands
                return DocumentOutcome("superseded", doc.source, doc.external_id), 0
            self._supersede(conn, doc.source, doc.external_id, run)
            # under the lock: what is stored now (another writer may have changed the title
            # or summary meanwhile), read once for the diff and the changed inputs
            stored = repository.document_passages(conn, before.document_id) if before else []
            changed, cut_away = self._input_changed(
                stored, before.title if before else None, chunks, inputs
            )
            placement = document_write.place_document(conn, doc, public)
            acl_id = document_write.store_source_acl(conn, doc.acl)
            record = document_write.document_record(
                doc, extracted, chunks, doc_type, before, placement, acl_id, search_state,
                run.run_id,
            )  # fmt: skip
            document_id = document_write.save_document(conn, before, record)
            delta = document_write.replace_chunks(
                conn,
                document_write.chunk_placement(document_id, record, placement.wall_group_id),
                chunks,
                vectors,
                lambda c, late: self._embeddings(c, late, set(), inputs),
                {p.chunk_id for p in stored},
                changed,
                existing_document=before is not None,
                model_id=self.embedder.model_id,
            )
            # a re-embed run in progress forgets its next vectors of these (the trigger of
            # sql/reembed.sql); without a run this changes nothing
            repository.touch_embeddings(conn, document_id, cut_away)
            changes = document_write.metadata_changes(before, record)
            status = document_write.outcome_status(before, placement.quarantine, delta, changes)
            self._report_document(
                conn, run, doc, status, placement, changes, extracted.warnings,
                {
                    "chunks": len(chunks),
                    "added": delta.added,
                    "removed": delta.removed,
                    "re_encoded": delta.re_encoded,
                },
            )  # fmt: skip
            # last: the matter's group row is locked from here to the commit, never while
            # this write encodes or inserts (document_write.settle_wall_group)
            document_write.settle_wall_group(conn, document_id, record, placement)
            outcome = DocumentOutcome(
                status=status, source=doc.source, external_id=doc.external_id,
                document_id=document_id, chunks=len(chunks), added=delta.added,
                removed=delta.removed, quarantined=placement.quarantine is not None,
                reason=placement.quarantine,
            )  # fmt: skip
            return outcome, len(changes)

        outcome, changed = self.database.retried(write, document_write.WRITE_ATTEMPTS)
        with run.lock:  # counted once the write is committed, not for an attempt
            run.counts["metadata_changes"] += changed
        return outcome

    def _report_document(
        self,
        conn: Connection,
        run: IngestRun,
        doc: SourceDocument,
        status: str,
        placement: document_write.Placement,
        changes: list[dict[str, Any]],
        warnings: list[str],
        sizes: dict[str, int],
    ) -> None:
        """The document's entries in the run's report, in the write transaction."""
        source, external_id = doc.source, doc.external_id
        for change in changes:
            reason = f"{change['field']} changed"
            self.record_event(conn, run, "metadata_change", source, external_id, reason, change)
        if status in ("added", "updated", "quarantined"):
            self.record_event(conn, run, status, source, external_id, placement.quarantine, sizes)
        for warning in warnings:
            self.record_event(conn, run, "warning", source, external_id, warning)

    # --- deletions ------------------------------------------------------------------------

    def delete(self, run: IngestRun, source: str, external_id: str, reason: str) -> bool:
        deleted = self.database.retried(  # whole again on a deadlock, also at COMMIT
            lambda conn: self._delete(conn, run, source, external_id, reason),
            document_write.WRITE_ATTEMPTS,
        )
        return self._counted_deleted(run, deleted)

    def _delete(
        self, conn: Connection, run: IngestRun, source: str, external_id: str, reason: str
    ) -> bool:
        mark_writer(conn)
        self._supersede(conn, source, external_id, run)
        if not repository.delete_document(conn, source, external_id):
            return False
        self.record_event(conn, run, "deleted", source, external_id, reason)
        return True

    @staticmethod
    def _supersede(conn: Connection, source: str, external_id: str, run: IngestRun) -> None:
        """Background pushes of this document queued before this write never apply."""
        by = f"run {run.run_id}"
        repository.supersede_document_jobs(conn, source, external_id, run.job_id, by)

    @staticmethod
    def _counted_deleted(run: IngestRun, deleted: bool) -> bool:
        if deleted:
            with run.lock:
                run.counts["deleted"] += 1
        return deleted

    def apply_acl(self, run: IngestRun, source: str, external_id: str, acl: SourceAcl) -> None:
        """The access rules just read, on a stored document whose content could not be read:
        a deny added at the source must not wait for the content; rules that do not only
        narrow the stored ones hide it until its content is read."""
        self._set_acl(run, source, external_id, acl, "acl_applied", None)

    def hide(self, run: IngestRun, source: str, external_id: str, reason: str) -> bool:
        """Visible to nobody from now on (its source ACL "nobody"), kept in the index: the
        source revoked access, and the deletion waits for the sweep's hold. A sync that
        reads the document again gives it its rules back. False: not stored, or hidden
        already."""
        return self._set_acl(run, source, external_id, None, "hidden", reason)

    def _set_acl(self, run: IngestRun, source: str, external_id: str, acl: SourceAcl | None,
                 kind: str, reason: str | None, only_if: Moved | None = None) -> bool:
        """A stored document's rules set apart from its content (``acl`` None: nobody), when
        ``only_if`` (given) finds the stored row moved."""
        with self.database.transaction() as conn:
            mark_writer(conn)
            # as a write of it: an older queued push of the document must not undo this
            stored = repository.lock_document(conn, source, external_id)
            if only_if is not None and (stored is None or not document_write.moved(
                    stored, *only_if)):  # fmt: skip
                return False
            self._supersede(conn, source, external_id, run)
            acl_id = NOBODY_ACL if acl is None else document_write.store_source_acl(conn, acl)
            if acl is not None and stored is not None and acl_id != stored.source_acl_id:
                # wider rules wait for the text they came with (as for a queued push)
                acl_id = document_write.narrowed_or_nobody(conn, stored.source_acl_id,
                                                            acl_id, acl)
            changed = repository.set_document_acl(conn, source, external_id, acl_id)
            if changed:
                self.record_event(conn, run, kind, source, external_id, reason or acl_id)
            return changed

    def _rules_without_text(self, run: IngestRun, doc: SourceDocument) -> bool:
        """The rules of a version whose text could not be read, on the stored version
        (document_write.access_until_written). True when a later write of the document came
        first (this was a queued push): it stands, and this changes nothing."""
        with self.database.transaction() as conn:
            mark_writer(conn)
            if repository.lock_document(conn, doc.source, doc.external_id) is None:
                return False
            if job_fence.superseded(conn, run):
                return True
            # the newest version, read or not: an older queued push must never apply
            self._supersede(conn, doc.source, doc.external_id, run)
            acl_id = document_write.access_until_written(conn, doc)
            if acl_id is not None:
                hidden = acl_id == NOBODY_ACL
                self.record_event(
                    conn, run, "hidden" if hidden else "acl_applied", doc.source,
                    doc.external_id, "visible to nobody until a version of it is read: it "
                    "moved, lacks a client or matter, or its rules do not only narrow"
                    if hidden else acl_id,
                )  # fmt: skip
        return False

    def hide_if_moved(self, run: IngestRun, source: str, external_id: str, matter_id: str,
                      reason: str, client_id: str | None = None) -> bool:
        """Hide (visible to nobody, kept) a document the source lists under another matter
        or client, or none, than the index holds but that could not be read (its rules or
        content failed): the move may put it behind a wall, which must not wait for the
        source to answer, and the listing may be wrong (a workspace that did not answer), so
        nothing is deleted. A sync that reads it gives it its place and rules. ``client_id``
        None: not listed (the matter alone decides). True when it was hidden."""
        return self._set_acl(run, source, external_id, None, "hidden", reason,
                             only_if=(client_id, matter_id))

    def _source_documents(self, source: str) -> list[repository.SourceDocumentRef]:
        with self.database.transaction() as conn:
            return repository.source_documents(conn, source)

    def known_external_ids(self, source: str) -> set[str]:
        return {d.external_id for d in self._source_documents(source)}

    def known_versions(self, source: str, *, textless: bool = False) -> dict[str, str | None]:
        """external id -> the version held (iManage addresses ``LIB!number.version``); with
        ``textless``, also of the documents not held whose content had no text."""
        with self.database.transaction() as conn:
            held = {d.external_id: d.version for d in repository.source_documents(conn, source)}
            return {**repository.textless_versions(conn, source), **held} if textless else held

    def forget_textless(self, source: str, listed: set[str], owns: Callable[[str], bool]) -> int:
        with self.database.transaction() as conn:
            gone = [i for i in repository.textless_versions(conn, source)
                    if i not in listed and owns(i)]
            return repository.forget_textless(conn, source, gone) if gone else 0

    def stale_placements(self, source: str, placed: list[Placed]) -> set[str]:
        """`document_write.stale_placements`: which a security pass must read again."""
        with self.database.transaction() as conn:
            return document_write.stale_placements(conn, source, placed)

    def narrow_rules(self, run: IngestRun, source: str, placed: list[Placed]) -> set[str]:
        """The ids of ``placed`` whose listed rules only narrow the stored ones, at the same
        version and place: applied without their content (a wall needs no download)."""
        done: set[str] = set()
        for p in placed:
            with self.database.transaction() as conn:
                acl_id = document_write.narrow_in_place(conn, source, p)
                if acl_id is not None:
                    self._supersede(conn, source, p.external_id, run)
                    self.record_event(conn, run, "acl_applied", source, p.external_id, acl_id)
                    done.add(p.external_id)
        return done

    def held_as_listed(self, run: IngestRun, source: str, placed: list[Placed]) -> dict[str, str]:
        """Of a full crawl's listing, what it need not read: "unchanged" (held as listed,
        `document_write.held_as_listed`), "narrowed" (rules that only narrow the stored
        ones, at the same version, stamps and place: applied now, as `narrow_rules` does) or
        "textless" (not held: its content at the listed version and stamps had no text)."""
        with self.database.transaction() as conn:
            same, other_rules, textless = document_write.held_as_listed(
                conn, source, placed, self.prepared_with
            )
        narrowable = [p for p in placed if p.external_id in other_rules]
        narrowed = self.narrow_rules(run, source, narrowable)
        return {**dict.fromkeys(same, "unchanged"), **dict.fromkeys(narrowed, "narrowed"),
                **dict.fromkeys(textless, "textless")}

    def known_containers(self, source: str) -> dict[str, str | None]:
        """external id -> its library or cabinet (``metadata.container``), for sweeps."""
        return {d.external_id: d.container for d in self._source_documents(source)}

    def record_warning(self, run: IngestRun, source: str | None, reason: str) -> None:
        """A degraded feature or a held action: listed under ``warnings``, not an error."""
        with self.database.transaction() as conn:
            self.record_event(conn, run, "warning", source, None, reason)

    def record_held(self, run: IngestRun, source: str, external_id: str, reason: str) -> None:
        """A deletion held until a person confirms it (``ewall ingest confirm-sweep``)."""
        with run.lock:
            run.counts["held"] += 1
        with self.database.transaction() as conn:
            self.record_event(conn, run, "sweep_held", source, external_id, reason)

    def sync_groups(
        self, run: IngestRun, groups: list[SourceGroup], actor: str, *, source: str
    ) -> None:
        """`source_groups.sync_groups`, its report entries in this run, in one transaction."""
        with self.database.transaction() as conn:
            record = functools.partial(self.record_event, conn, run)
            source_groups.sync_groups(conn, record, groups, actor, source)
