"""The ingest pipeline: extract -> chunk -> embed -> upsert, with runs and delta reports.

Every source (API push, export folder, iManage, NetDocuments, Rechtspraak) feeds the same
`IngestPipeline`. Bad input never raises out of `ingest`: it becomes a quarantine entry or
an error in the run's report.

Rules (architecture.md, invariants 6 and 7):
- chunk id = ``<source>:<external_id>:<first 16 hex of sha256(normalised text)>``; identical
  text twice in a document is one chunk; re-ingesting inserts only new chunks, deletes
  vanished ones and leaves unchanged ones alone (no re-embedding);
- a document is replaced in one transaction;
- metadata is tri-state (absent None, present-but-empty "", value). A new document whose
  client or matter is absent, empty or unknown is quarantined (stored in the quarantine
  group, visible to no one). An empty field never overwrites a known value (parse error in
  the report, previous value kept).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Connection, text

from app.audit.chain import canonical_json
from app.db import sqlfiles
from app.db.engine import Database
from app.embeddings import Embedder, vector_literal
from app.ingest.chunking import chunk_document, normalize_chunk_text, normalize_doc_type
from app.ingest.extract import extract
from app.ingest.types import ChunkDraft, ChunkLimits, ExtractedDocument, ExtractionError
from app.settings import Settings
from app.walls.graph import OPEN_GROUP, QUARANTINE_GROUP
from app.walls.retag import mark_writer
from connectors.base import SourceAcl, SourceDocument, SourceGroup

log = logging.getLogger("ewall.ingest")

CHUNKER_VERSION = 2  # bump when extraction or chunking changes what a document yields
PUBLIC_ACL = "public"
NOBODY_ACL = "nobody"
MAX_FIELD = 2000


@dataclass
class IngestRun:
    run_id: uuid.UUID
    connector: str
    started_by: str
    counts: Counter[str] = field(default_factory=Counter)
    seq: int = 0
    progress: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def next_seq(self) -> int:
        with self.lock:
            self.seq += 1
            return self.seq


@dataclass
class DocumentOutcome:
    status: str  # added | updated | unchanged | quarantined | error
    source: str
    external_id: str
    document_id: int | None = None
    chunks: int = 0
    added: int = 0
    removed: int = 0
    quarantined: bool = False
    reason: str | None = None
    run_id: uuid.UUID | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "document_id": self.document_id,
            "status": self.status,
            "chunks": self.chunks,
            "added": self.added,
            "removed": self.removed,
            "quarantined": self.quarantined,
            "reason": self.reason,
            "run_id": str(self.run_id) if self.run_id else None,
        }


@dataclass(frozen=True)
class PreparedChunk:
    chunk_id: str
    body: str
    content_sha256: str
    section_path: str
    page_from: int | None
    page_to: int | None
    ordinal: int
    token_count: int


def chunk_id_for(source: str, external_id: str, normalized_text: str) -> str:
    digest = hashlib.sha256(normalized_text.encode("utf-8")).hexdigest()
    return f"{source}:{external_id}:{digest[:16]}"


def acl_id_for(acl: SourceAcl) -> str:
    rules = {
        "default": acl.default,
        "allow": sorted({p.lower() for p in acl.allow}),
        "deny": sorted({p.lower() for p in acl.deny}),
    }
    if acl.default == "public" and not rules["allow"] and not rules["deny"]:
        return PUBLIC_ACL
    return "acl_" + hashlib.sha256(canonical_json(rules).encode()).hexdigest()[:24]


def _field(value: str | None) -> str | None:
    """Tri-state: None stays None (absent); whitespace-only becomes "" (present, empty)."""
    if value is None:
        return None
    return " ".join(value.split())[:MAX_FIELD]


def _parse_vec(literal: str) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.asarray(json.loads(literal), dtype=np.float32)


class IngestPipeline:
    def __init__(self, database: Database, embedder: Embedder, settings: Settings) -> None:
        self.database = database
        self.embedder = embedder
        self.settings = settings
        self.limits = ChunkLimits(
            model_max=embedder.max_passage_tokens,
            generic=settings.chunk_tokens,
            generic_overlap=settings.chunk_overlap_tokens,
            brief_section=settings.brief_section_tokens,
            deposition_context=settings.deposition_context_tokens,
        )
        # benchmark counters (seconds); the pipeline is used from one thread per run
        self.timings: dict[str, float] = {"embed_s": 0.0, "db_s": 0.0}

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
        run = IngestRun(
            run_id=uuid.uuid4(),
            connector=connector,
            started_by=started_by,
            progress=dict(progress or {}),
        )
        statement = text(
            "INSERT INTO ingest_runs (run_id, connector, status, started_by, params, progress) "
            "VALUES (:run_id, :connector, 'running', :started_by, CAST(:params AS jsonb), "
            "CAST(:progress AS jsonb))"
        )
        values = {
            "run_id": run.run_id,
            "connector": connector,
            "started_by": started_by,
            "params": canonical_json(params),
            "progress": canonical_json(run.progress),
        }
        if conn is not None:
            conn.execute(statement, values)
        else:
            with self.database.transaction() as own:
                own.execute(statement, values)
        return run

    def resume_run(self, run_id: uuid.UUID) -> IngestRun:
        """A run started earlier (a background job picking it up, perhaps after a crash):
        counts and progress as last written, events continuing after the last one."""
        with self.database.transaction() as conn:
            row = (
                conn.execute(
                    text(
                        "SELECT connector, started_by, counts, progress FROM ingest_runs "
                        "WHERE run_id = :run_id"
                    ),
                    {"run_id": run_id},
                )
                .mappings()
                .one()
            )
            # an earlier attempt may have ended it: it runs again until this one ends
            conn.execute(
                text(
                    "UPDATE ingest_runs SET status = 'running', finished_at = NULL "
                    "WHERE run_id = :run_id AND status <> 'running'"
                ),
                {"run_id": run_id},
            )
            seq = conn.execute(
                text("SELECT coalesce(max(seq), 0) FROM ingest_run_events WHERE run_id = :run_id"),
                {"run_id": run_id},
            ).scalar_one()
        return IngestRun(
            run_id=run_id,
            connector=str(row["connector"]),
            started_by=str(row["started_by"]),
            counts=Counter({str(k): int(v) for k, v in dict(row["counts"]).items()}),
            seq=int(seq),
            progress=dict(row["progress"]),
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
        conn.execute(
            text(
                "INSERT INTO ingest_run_events (run_id, seq, kind, source, external_id, reason,"
                " details) VALUES (:run_id, :seq, :kind, :source, :external_id, :reason,"
                " CAST(:details AS jsonb))"
            ),
            {
                "run_id": run.run_id,
                "seq": run.next_seq(),
                "kind": kind,
                "source": source,
                "external_id": external_id,
                "reason": reason,
                "details": canonical_json(details or {}),
            },
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
        with self.database.transaction() as conn:
            self.record_event(conn, run, kind, source, external_id, reason, details)

    def progress(self, run: IngestRun, **fields: Any) -> None:
        run.progress.update(fields)
        with self.database.transaction() as conn:
            conn.execute(
                text(
                    "UPDATE ingest_runs SET progress = CAST(:progress AS jsonb),"
                    " counts = CAST(:counts AS jsonb) WHERE run_id = :run_id"
                ),
                {
                    "run_id": run.run_id,
                    "progress": canonical_json(run.progress),
                    "counts": canonical_json(dict(run.counts)),
                },
            )

    def finish_run(
        self, run: IngestRun, status: str | None = None, error: str | None = None
    ) -> dict[str, Any]:
        if status is None:
            status = "partial" if run.counts.get("errors") else "succeeded"
        with self.database.transaction() as conn:
            conn.execute(
                text(
                    "UPDATE ingest_runs SET status = :status, finished_at = now(), error = :error,"
                    " counts = CAST(:counts AS jsonb), progress = CAST(:progress AS jsonb)"
                    " WHERE run_id = :run_id"
                ),
                {
                    "run_id": run.run_id,
                    "status": status,
                    "error": error,
                    "counts": canonical_json(dict(run.counts)),
                    "progress": canonical_json(run.progress),
                },
            )
            return load_report(conn, run.run_id)

    # --- documents ------------------------------------------------------------------------

    def prepare(self, doc: SourceDocument) -> tuple[ExtractedDocument, list[PreparedChunk], str]:
        """Extract and chunk (no database). Raises ExtractionError for bad content."""
        if doc.text is None and doc.content is None:
            raise ExtractionError("no content: neither text nor content was given")
        extracted = extract(
            text=doc.text,
            content=doc.content,
            mime_type=doc.mime_type,
            filename=str(doc.metadata.get("filename")) if doc.metadata.get("filename") else None,
        )
        if not extracted.has_text:
            raise ExtractionError("no text: the document contains no extractable text")
        doc_type = normalize_doc_type(doc.doc_type)
        if doc.source == "rechtspraak" and doc_type == "other":
            doc_type = "case_law"
        drafts = chunk_document(extracted, doc_type, self.embedder, self.limits)
        return extracted, self._dedupe(doc, drafts), doc_type

    def _dedupe(self, doc: SourceDocument, drafts: list[ChunkDraft]) -> list[PreparedChunk]:
        out: list[PreparedChunk] = []
        seen: set[str] = set()
        for draft in drafts:
            body = normalize_chunk_text(draft.text)
            if not body:
                continue
            cid = chunk_id_for(doc.source, doc.external_id, body)
            if cid in seen:
                continue
            seen.add(cid)
            out.append(
                PreparedChunk(
                    chunk_id=cid,
                    body=body,
                    content_sha256=hashlib.sha256(body.encode("utf-8")).hexdigest(),
                    section_path=draft.section_path[:500],
                    page_from=draft.page_from,
                    page_to=draft.page_to,
                    ordinal=len(out),
                    token_count=draft.token_count or self.embedder.count_tokens(body),
                )
            )
        return out

    def _embeddings(
        self, conn: Connection, chunks: list[PreparedChunk], known_ids: set[str]
    ) -> dict[str, str]:
        """pgvector literals for chunks not already stored; identical text elsewhere is
        reused, only genuinely new text goes to the encoder."""
        missing = [c for c in chunks if c.chunk_id not in known_ids]
        if not missing:
            return {}
        reuse: dict[str, str] = {}
        hashes = sorted({c.content_sha256 for c in missing})
        mark_writer(conn)
        for row in conn.execute(sqlfiles.query("ingest.embeddings_by_content"), {"hashes": hashes}):
            reuse[row.content_sha256] = row.embedding
        to_encode = [c for c in missing if c.content_sha256 not in reuse]
        out: dict[str, str] = {}
        if to_encode:
            import time

            started = time.perf_counter()
            vectors = self.embedder.embed_passages([c.body for c in to_encode])
            self.timings["embed_s"] += time.perf_counter() - started
            for chunk, vec in zip(to_encode, vectors, strict=True):
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
        import time

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
        input_sha = self.input_fingerprint(doc, public, search_state)
        unchanged = self._unchanged(doc, input_sha)
        if unchanged is not None:
            with run.lock:
                run.counts["unchanged"] += 1
            unchanged.run_id = run.run_id
            return unchanged
        doc.metadata["input_sha256"] = input_sha
        try:
            extracted, chunks, doc_type = self.prepare(doc)
        except ExtractionError as exc:
            kind = "no_text" if exc.reason.startswith("no text") else "error"
            with run.lock:
                run.counts["errors"] += 1
            with self.database.transaction() as conn:
                self.record_event(conn, run, kind, source, external_id, exc.reason)
            return DocumentOutcome(
                "error", source, external_id, reason=exc.reason, run_id=run.run_id
            )

        started = time.perf_counter()
        embed_before = self.timings["embed_s"]
        try:
            outcome = self._write(run, doc, extracted, chunks, doc_type, public, search_state)
        except Exception as exc:  # a document must never take a whole run down
            log.exception("ingest failed", extra={"source": source, "external_id": external_id})
            with run.lock:
                run.counts["errors"] += 1
            with self.database.transaction() as conn:
                self.record_event(
                    conn,
                    run,
                    "error",
                    source,
                    external_id,
                    f"internal error while storing: {type(exc).__name__}",
                )
            return DocumentOutcome(
                "error", source, external_id, reason="internal error", run_id=run.run_id
            )
        self.timings["db_s"] += (time.perf_counter() - started) - (
            self.timings["embed_s"] - embed_before
        )
        with run.lock:
            run.counts[outcome.status] += 1
        outcome.run_id = run.run_id
        return outcome

    def input_fingerprint(self, doc: SourceDocument, public: bool, search_state: str | None) -> str:
        """Everything that decides a document's chunks and their metadata. Equal fingerprint
        on an active document: nothing to extract, chunk or write (the common re-sync case)."""
        digest = hashlib.sha256()
        content = doc.text.encode("utf-8") if doc.text is not None else (doc.content or b"")
        digest.update(hashlib.sha256(content).digest())
        acl = (
            None
            if doc.acl is None
            else {
                "default": doc.acl.default,
                "allow": sorted(doc.acl.allow),
                "deny": sorted(doc.acl.deny),
                "resolvable": doc.acl.resolvable,
            }
        )
        fields = {
            "chunker": CHUNKER_VERSION,
            "model": self.embedder.name,
            "limits": [
                self.limits.model_max,
                self.limits.generic,
                self.limits.generic_overlap,
                self.limits.brief_section,
                self.limits.deposition_context,
            ],
            "text": doc.text is not None,
            "mime": doc.mime_type,
            "doc_type": doc.doc_type,
            "client_id": doc.client_id,
            "matter_id": doc.matter_id,
            "title": doc.title,
            "author": doc.author,
            "modified_at": doc.modified_at,
            "version": doc.version,
            "source_url": doc.source_url,
            "acl": acl,
            "public": public,
            "search_state": search_state,
            "metadata": {k: v for k, v in doc.metadata.items() if k != "input_sha256"},
        }
        digest.update(canonical_json(fields).encode("utf-8"))
        return digest.hexdigest()

    def _unchanged(self, doc: SourceDocument, input_sha: str) -> DocumentOutcome | None:
        with self.database.transaction() as conn:
            mark_writer(conn)
            row = conn.execute(
                text(
                    "SELECT d.document_id, d.status, d.metadata->>'input_sha256' AS input_sha, "
                    "(SELECT count(*) FROM chunks c WHERE c.document_id = d.document_id) AS n "
                    "FROM documents d WHERE d.source = :s AND d.external_id = :e"
                ),
                {"s": doc.source, "e": doc.external_id},
            ).first()
        # quarantined documents always go the full way: their matter may exist by now
        if row is None or row.status != "active" or row.input_sha != input_sha:
            return None
        return DocumentOutcome(
            status="unchanged",
            source=doc.source,
            external_id=doc.external_id,
            document_id=int(row.document_id),
            chunks=int(row.n),
        )

    def _resolve_metadata(
        self,
        conn: Connection,
        run: IngestRun,
        doc: SourceDocument,
        before: Any,
        public: bool,
    ) -> tuple[str | None, str | None, str | None, list[tuple[str, str, dict[str, Any]]]]:
        """(client_id, matter_id, quarantine_reason, report entries)."""
        entries: list[tuple[str, str, dict[str, Any]]] = []
        if public:
            return None, None, None, entries
        incoming = {"client_id": _field(doc.client_id), "matter_id": _field(doc.matter_id)}
        resolved: dict[str, str | None] = {}
        reasons: list[str] = []
        for name, value in incoming.items():
            previous = getattr(before, name) if before is not None else None
            if value is None:
                if previous:
                    resolved[name] = previous
                else:
                    resolved[name] = None
                    reasons.append(f"{name} absent")
            elif value == "":
                if previous:
                    resolved[name] = previous
                    entries.append(
                        (
                            "parse_error",
                            f"{name} arrived empty; kept the known value {previous!r}",
                            {"field": name, "kept": previous},
                        )
                    )
                else:
                    resolved[name] = None
                    reasons.append(f"{name} present but empty")
            else:
                resolved[name] = value
        client_id, matter_id = resolved["client_id"], resolved["matter_id"]
        if not reasons and matter_id is not None and client_id is not None:
            row = conn.execute(
                sqlfiles.query("ingest.matter_client"), {"matter_id": matter_id}
            ).first()
            if row is None:
                reasons.append(f"matter {matter_id!r} unknown to the conflict matrix")
            elif row.client_id != client_id:
                known_client = conn.execute(
                    sqlfiles.query("ingest.client_exists"), {"client_id": client_id}
                ).first()
                reasons.append(
                    f"client {client_id!r} unknown to the conflict matrix"
                    if known_client is None
                    else f"matter {matter_id!r} belongs to client {row.client_id!r}, "
                    f"not {client_id!r}"
                )
        return client_id, matter_id, "; ".join(reasons) or None, entries

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
        source, external_id = doc.source, doc.external_id
        # Embed outside the write transaction: read what is stored, embed what is new.
        with self.database.transaction() as conn:
            mark_writer(conn)
            existing_doc = conn.execute(
                text("SELECT document_id FROM documents WHERE source = :s AND external_id = :e"),
                {"s": source, "e": external_id},
            ).first()
            stored: set[str] = set()
            if existing_doc is not None:
                stored = {
                    r.chunk_id
                    for r in conn.execute(
                        sqlfiles.query("ingest.document_chunk_ids"),
                        {"document_id": existing_doc.document_id},
                    )
                }
            vectors = self._embeddings(conn, chunks, stored)

        with self.database.transaction() as conn:
            mark_writer(conn)
            before = conn.execute(
                sqlfiles.query("ingest.lock_document"),
                {"source": source, "external_id": external_id},
            ).first()
            client_id, matter_id, quarantine, entries = self._resolve_metadata(
                conn, run, doc, before, public
            )
            if public:
                wall_group = OPEN_GROUP
            elif quarantine is None:
                group_row = conn.execute(
                    sqlfiles.query("walls.matter_group_for_ingest"), {"matter_id": matter_id}
                ).first()
                if group_row is None:  # the matter vanished between the checks
                    quarantine = f"matter {matter_id!r} has no wall group"
                    wall_group = QUARANTINE_GROUP
                else:
                    wall_group = group_row.wall_group_id
            else:
                wall_group = QUARANTINE_GROUP
            status = "quarantined" if quarantine else "active"
            if quarantine:
                # Quarantined chunks carry no client or matter: nothing (not a later wall
                # change, not a re-tag) can move them into a visible group by accident.
                client_id = matter_id = None

            if doc.acl is None:
                acl_id = PUBLIC_ACL
            elif not doc.acl.resolvable:
                acl_id = NOBODY_ACL
            else:
                acl_id = acl_id_for(doc.acl)
                conn.execute(
                    sqlfiles.query("ingest.upsert_source_acl"),
                    {
                        "source_acl_id": acl_id,
                        "default_access": doc.acl.default,
                        "allow": sorted({p.lower() for p in doc.acl.allow}),
                        "deny": sorted({p.lower() for p in doc.acl.deny}),
                        "resolvable": True,
                    },
                )

            state = search_state or (before.search_state if before is not None else "active")
            suppressed = state != "active"
            content_sha = hashlib.sha256(
                "\n".join(c.content_sha256 for c in chunks).encode()
            ).hexdigest()
            title = (
                _field(doc.title)
                or (before.title if before is not None else None)
                or (extracted.title or external_id)
            )
            metadata = dict(doc.metadata)
            metadata.update({k: v for k, v in extracted.metadata.items() if k not in metadata})
            if extracted.warnings:
                metadata["extraction_warnings"] = list(extracted.warnings)
            row = {
                "source": source,
                "external_id": external_id,
                "version": _field(doc.version),
                "status": status,
                "quarantine_reason": quarantine,
                "client_id": client_id,
                "matter_id": matter_id,
                "client_raw": doc.client_raw if doc.client_raw is not None else doc.client_id,
                "matter_raw": doc.matter_raw if doc.matter_raw is not None else doc.matter_id,
                "doc_type": doc_type,
                "title": title[:MAX_FIELD],
                "author": _field(doc.author) or (before.author if before is not None else None),
                "modified_at": doc.modified_at
                or (before.modified_at if before is not None else None),
                "mime_type": extracted.mime_type,
                "content_sha256": content_sha,
                "source_acl_id": acl_id,
                "source_url": doc.source_url,
                "search_state": state,
                "metadata": canonical_json(metadata),
                "last_run_id": run.run_id,
            }
            if before is None:
                inserted = conn.execute(sqlfiles.query("ingest.insert_document"), row).first()
                if inserted is None:
                    raise RuntimeError("concurrent insert of the same document")
                document_id = int(inserted.document_id)
            else:
                document_id = int(before.document_id)
                conn.execute(
                    sqlfiles.query("ingest.update_document"), {**row, "document_id": document_id}
                )

            stored_now = {
                r.chunk_id
                for r in conn.execute(
                    sqlfiles.query("ingest.document_chunk_ids"), {"document_id": document_id}
                )
            }
            new_ids = {c.chunk_id for c in chunks}
            vanished = sorted(stored_now - new_ids)
            to_add = [c for c in chunks if c.chunk_id not in stored_now]
            late = [c for c in to_add if c.chunk_id not in vectors]
            if late:  # stored chunks vanished concurrently; rare, embed them now
                vectors.update(self._embeddings(conn, late, set()))
            if vanished:
                conn.execute(sqlfiles.query("ingest.delete_chunks"), {"chunk_ids": vanished})
            common = {
                "document_id": document_id,
                "source": source,
                "external_id": external_id,
                "client_id": client_id,
                "matter_id": matter_id,
                "wall_group_id": wall_group,
                "source_acl_id": acl_id,
                "doc_type": doc_type,
                "suppressed": suppressed,
                "modified_at": row["modified_at"],
            }
            metadata_changed = 0
            if before is not None:
                metadata_changed = conn.execute(
                    sqlfiles.query("ingest.update_chunk_metadata"), common
                ).rowcount
                kept = [c for c in chunks if c.chunk_id in stored_now]
                if kept:
                    conn.execute(
                        sqlfiles.query("ingest.update_chunk_positions"),
                        [
                            {
                                "chunk_id": c.chunk_id,
                                "ordinal": c.ordinal,
                                "section_path": c.section_path,
                                "page_from": c.page_from,
                                "page_to": c.page_to,
                            }
                            for c in kept
                        ],
                    )
            if to_add:
                conn.execute(
                    sqlfiles.query("ingest.insert_chunk"),
                    [
                        {
                            **common,
                            "chunk_id": c.chunk_id,
                            "section_path": c.section_path,
                            "page_from": c.page_from,
                            "page_to": c.page_to,
                            "ordinal": c.ordinal,
                            "body": c.body,
                            "embedding": vectors[c.chunk_id],
                            "content_sha256": c.content_sha256,
                            "token_count": c.token_count,
                        }
                        for c in to_add
                    ],
                )

            # --- the delta report -------------------------------------------------------
            changes = self._metadata_changes(before, row)
            if before is None:
                outcome_status = "quarantined" if quarantine else "added"
            elif quarantine and before.status != "quarantined":
                outcome_status = "quarantined"
            elif to_add or vanished or changes or metadata_changed:
                outcome_status = "quarantined" if quarantine else "updated"
            else:
                outcome_status = "quarantined" if quarantine else "unchanged"
            for kind, reason, details in entries:
                self.record_event(conn, run, kind, source, external_id, reason, details)
                with run.lock:
                    run.counts["parse_errors"] += 1
            for change in changes:
                self.record_event(
                    conn,
                    run,
                    "metadata_change",
                    source,
                    external_id,
                    f"{change['field']} changed",
                    change,
                )
                with run.lock:
                    run.counts["metadata_changes"] += 1
            if outcome_status in ("added", "updated", "quarantined"):
                self.record_event(
                    conn,
                    run,
                    outcome_status,
                    source,
                    external_id,
                    quarantine,
                    {"chunks": len(chunks), "added": len(to_add), "removed": len(vanished)},
                )
            for warning in extracted.warnings:
                self.record_event(conn, run, "warning", source, external_id, warning)
        return DocumentOutcome(
            status=outcome_status,
            source=source,
            external_id=external_id,
            document_id=document_id,
            chunks=len(chunks),
            added=len(to_add),
            removed=len(vanished),
            quarantined=quarantine is not None,
            reason=quarantine,
        )

    @staticmethod
    def _metadata_changes(before: Any, row: dict[str, Any]) -> list[dict[str, Any]]:
        if before is None:
            return []
        out = []
        for name, label in (
            ("matter_id", "matter"),
            ("client_id", "client"),
            ("source_acl_id", "acl"),
            ("doc_type", "doc_type"),
            ("status", "status"),
        ):
            old, new = getattr(before, name), row[name]
            if old != new:
                out.append({"field": label, "from": old, "to": new})
        return out

    # --- deletions ------------------------------------------------------------------------

    def delete(self, run: IngestRun, source: str, external_id: str, reason: str) -> bool:
        with self.database.transaction() as conn:
            mark_writer(conn)
            row = conn.execute(
                text(
                    "DELETE FROM documents WHERE source = :s AND external_id = :e "
                    "RETURNING document_id"
                ),
                {"s": source, "e": external_id},
            ).first()
            if row is None:
                return False
            self.record_event(conn, run, "deleted", source, external_id, reason)
        with run.lock:
            run.counts["deleted"] += 1
        return True

    def known_external_ids(self, source: str) -> set[str]:
        with self.database.transaction() as conn:
            return {
                r[0]
                for r in conn.execute(
                    text("SELECT external_id FROM documents WHERE source = :s"), {"s": source}
                )
            }

    def known_versions(self, source: str) -> dict[str, str | None]:
        """external id -> the version the index holds (connectors address some documents
        by a versioned id, e.g. iManage ``LIB!number.version``)."""
        with self.database.transaction() as conn:
            return {
                r[0]: r[1]
                for r in conn.execute(
                    text("SELECT external_id, version FROM documents WHERE source = :s"),
                    {"s": source},
                )
            }

    def known_containers(self, source: str) -> dict[str, str | None]:
        """external id -> the library or cabinet it was ingested from (``metadata.container``),
        so a sweep can weigh its removals per container."""
        with self.database.transaction() as conn:
            return {
                r[0]: r[1]
                for r in conn.execute(
                    text(
                        "SELECT external_id, metadata->>'container' FROM documents "
                        "WHERE source = :s"
                    ),
                    {"s": source},
                )
            }

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

    def sync_groups(self, run: IngestRun, groups: list[SourceGroup], actor: str) -> None:
        from app.matrix.schemas import GroupImport
        from app.matrix.service import apply_matrix

        if not groups:
            return
        with self.database.transaction() as conn:
            result = apply_matrix(
                conn,
                actor=actor,
                source_groups=[
                    GroupImport(
                        source=g.source.lower(),
                        group_id=g.group_id.lower(),
                        members=sorted(g.members),
                    )
                    for g in groups
                ],
                action="groups.sync",
            )
            if result.changed:
                self.record_event(
                    conn,
                    run,
                    "groups_synced",
                    None,
                    None,
                    None,
                    {"groups": len(groups), "policy_version": result.policy_version},
                )


_REPORTED_KINDS = frozenset(
    {
        "added",
        "updated",
        "deleted",
        "quarantined",
        "error",
        "no_text",
        "parse_error",
        "metadata_change",
        "warning",
        "sweep_held",
    }
)


def load_report(conn: Connection, run_id: uuid.UUID, max_events: int = 1000) -> dict[str, Any]:
    """The delta report of one run: counts and the listed entries."""
    run = (
        conn.execute(text("SELECT * FROM ingest_runs WHERE run_id = :run_id"), {"run_id": run_id})
        .mappings()
        .first()
    )
    if run is None:
        return {}
    by_kind: dict[str, list[dict[str, Any]]] = {}
    totals: Counter[str] = Counter()
    for ev in conn.execute(
        text(
            "SELECT seq, kind, source, external_id, reason, details, at FROM ingest_run_events "
            "WHERE run_id = :run_id ORDER BY seq"
        ),
        {"run_id": run_id},
    ).mappings():
        totals[ev["kind"]] += 1
        bucket = by_kind.setdefault(ev["kind"], [])
        if len(bucket) < max_events:
            bucket.append(
                {
                    "source": ev["source"],
                    "external_id": ev["external_id"],
                    "reason": ev["reason"],
                    "details": ev["details"],
                    "at": ev["at"].isoformat(),
                }
            )
    counts = dict(run["counts"])
    return {
        "run_id": str(run["run_id"]),
        "connector": run["connector"],
        "status": run["status"],
        "started_by": run["started_by"],
        "started_at": run["started_at"].isoformat(),
        "finished_at": run["finished_at"].isoformat() if run["finished_at"] else None,
        "params": run["params"],
        "progress": run["progress"],
        "error": run["error"],
        "counts": {
            "seen": counts.get("seen", 0),
            "added": counts.get("added", 0),
            "updated": counts.get("updated", 0),
            "unchanged": counts.get("unchanged", 0),
            "deleted": counts.get("deleted", 0),
            "quarantined": counts.get("quarantined", 0),
            "errors": counts.get("errors", 0),
            "parse_errors": counts.get("parse_errors", 0),
            "metadata_changes": counts.get("metadata_changes", 0),
            "held": counts.get("held", 0),
        },
        "added": by_kind.get("added", []),
        "updated": by_kind.get("updated", []),
        "deleted": by_kind.get("deleted", []),
        "quarantined": by_kind.get("quarantined", []),
        "errors": by_kind.get("error", []) + by_kind.get("no_text", []),
        "parse_errors": by_kind.get("parse_error", []),
        "metadata_changes": by_kind.get("metadata_change", []),
        "warnings": by_kind.get("warning", []),
        "held": by_kind.get("sweep_held", []),
        # kinds written by particular sources (case-law state changes, held decisions, ...)
        "other_events": {
            kind: entries for kind, entries in by_kind.items() if kind not in _REPORTED_KINDS
        },
        "listed_events": dict(totals),
    }
