"""The SQL of the ingest pipeline: runs and their reports (sql/pipeline.sql) and the rows of
one document and its chunks (sql/ingest.sql).

Every function runs in the caller's transaction. Functions that touch ``chunks`` need the
caller to have switched the transaction to writer mode (``mark_writer``): the chunks RLS
policy hides every row from anyone else.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.db import sqlfiles
from app.db.locks import LockNamespace
from app.ingest.types import PreparedChunk
from app.walls.access import mark_writer

# --- runs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunState:
    """What a resumed run continues from."""

    connector: str
    started_by: str
    counts: dict[str, int]
    progress: dict[str, Any]


@dataclass(frozen=True)
class RunRecord:
    run_id: uuid.UUID
    connector: str
    status: str
    started_by: str
    started_at: datetime
    finished_at: datetime | None
    params: dict[str, Any]
    counts: dict[str, Any]
    progress: dict[str, Any]
    error: str | None


@dataclass(frozen=True)
class RunEvent:
    seq: int
    kind: str
    source: str | None
    external_id: str | None
    reason: str | None
    details: dict[str, Any]
    at: datetime


def insert_run(
    conn: Connection,
    run_id: uuid.UUID,
    connector: str,
    started_by: str,
    params_json: str,
    progress_json: str,
) -> None:
    conn.execute(
        sqlfiles.query("pipeline.insert_run"),
        {
            "run_id": run_id,
            "connector": connector,
            "started_by": started_by,
            "params": params_json,
            "progress": progress_json,
        },
    )


def load_run_state(conn: Connection, run_id: uuid.UUID) -> RunState:
    """Raises ``sqlalchemy.exc.NoResultFound`` for an unknown run."""
    row = conn.execute(sqlfiles.query("pipeline.run_state"), {"run_id": run_id}).mappings().one()
    return RunState(
        connector=str(row["connector"]),
        started_by=str(row["started_by"]),
        counts={str(k): int(v) for k, v in dict(row["counts"]).items()},
        progress=dict(row["progress"]),
    )


def reopen_run(conn: Connection, run_id: uuid.UUID) -> None:
    conn.execute(sqlfiles.query("pipeline.reopen_run"), {"run_id": run_id})


def last_event_seq(conn: Connection, run_id: uuid.UUID) -> int:
    return int(
        conn.execute(sqlfiles.query("pipeline.last_event_seq"), {"run_id": run_id}).scalar_one()
    )


def hold_run(conn: Connection, run_id: uuid.UUID) -> None:
    conn.execute(sqlfiles.query("pipeline.hold_run"), {"run_id": run_id})


def release_run(conn: Connection, run_id: uuid.UUID) -> None:
    conn.execute(sqlfiles.query("pipeline.release_run"), {"run_id": run_id})


def reap_orphaned_run(conn: Connection, run_id: uuid.UUID) -> bool:
    """End as failed a run whose holding process is gone; True when it did."""
    result = conn.execute(sqlfiles.query("pipeline.reap_orphaned_run"), {"run_id": run_id})
    return bool(result.rowcount)


def insert_run_event(
    conn: Connection,
    run_id: uuid.UUID,
    seq: int,
    kind: str,
    source: str | None,
    external_id: str | None,
    reason: str | None,
    details_json: str,
) -> None:
    conn.execute(
        sqlfiles.query("pipeline.insert_run_event"),
        {
            "run_id": run_id,
            "seq": seq,
            "kind": kind,
            "source": source,
            "external_id": external_id,
            "reason": reason,
            "details": details_json,
        },
    )


def save_run_progress(
    conn: Connection, run_id: uuid.UUID, progress_json: str, counts_json: str
) -> None:
    conn.execute(
        sqlfiles.query("pipeline.save_run_progress"),
        {"run_id": run_id, "progress": progress_json, "counts": counts_json},
    )


def finish_run(
    conn: Connection,
    run_id: uuid.UUID,
    status: str,
    error: str | None,
    counts_json: str,
    progress_json: str,
) -> None:
    conn.execute(
        sqlfiles.query("pipeline.finish_run"),
        {
            "run_id": run_id,
            "status": status,
            "error": error,
            "counts": counts_json,
            "progress": progress_json,
        },
    )


def load_run(conn: Connection, run_id: uuid.UUID) -> RunRecord | None:
    row = conn.execute(sqlfiles.query("pipeline.run_record"), {"run_id": run_id}).mappings().first()
    if row is None:
        return None
    return RunRecord(
        run_id=row["run_id"],
        connector=row["connector"],
        status=row["status"],
        started_by=row["started_by"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        params=dict(row["params"]),
        counts=dict(row["counts"]),
        progress=dict(row["progress"]),
        error=row["error"],
    )


def load_run_events(conn: Connection, run_id: uuid.UUID) -> list[RunEvent]:
    """The run's report entries in the order they were written."""
    rows = conn.execute(sqlfiles.query("pipeline.run_events"), {"run_id": run_id}).mappings()
    return [
        RunEvent(
            seq=int(r["seq"]),
            kind=r["kind"],
            source=r["source"],
            external_id=r["external_id"],
            reason=r["reason"],
            details=r["details"],
            at=r["at"],
        )
        for r in rows
    ]


# --- documents -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredFingerprint:
    document_id: int
    status: str
    input_sha: str | None
    chunks: int
    prepared_with: str | None  # preparation.prepared_with when it was written


@dataclass(frozen=True)
class StoredDocument:
    """A document row as stored, locked for the transaction that replaces it."""

    document_id: int
    status: str
    client_id: str | None
    matter_id: str | None
    client_raw: str | None
    matter_raw: str | None
    doc_type: str
    title: str | None
    author: str | None
    modified_at: datetime | None
    source_acl_id: str
    version: str | None
    search_state: str
    content_sha256: str | None
    mime_type: str | None
    source_url: str | None
    metadata: dict[str, Any]


@dataclass(frozen=True)
class DocumentRecord:
    """The values a document row is written with."""

    source: str
    external_id: str
    version: str | None
    status: str
    quarantine_reason: str | None
    client_id: str | None
    matter_id: str | None
    client_raw: str | None
    matter_raw: str | None
    doc_type: str
    title: str
    author: str | None
    modified_at: datetime | None
    mime_type: str
    content_sha256: str
    source_acl_id: str
    source_url: str | None
    search_state: str
    metadata_json: str
    last_run_id: uuid.UUID


@dataclass(frozen=True)
class ChunkPlacement:
    """What every chunk of one document carries from its document: who may see it and how
    it is filtered."""

    document_id: int
    source: str
    external_id: str
    client_id: str | None
    matter_id: str | None
    wall_group_id: str
    source_acl_id: str
    doc_type: str
    suppressed: bool
    modified_at: datetime | None


@dataclass(frozen=True)
class MatterClient:
    matter_id: str
    client_id: str | None


@dataclass(frozen=True)
class SourceDocumentRef:
    external_id: str
    version: str | None
    container: str | None


def stored_input(conn: Connection, source: str, external_id: str) -> tuple[str, str | None] | None:
    """A document's status and input fingerprint, or None when it is not stored."""
    row = conn.execute(
        sqlfiles.query("pipeline.document_input"), {"source": source, "external_id": external_id}
    ).first()
    return None if row is None else (str(row.status), row.input_sha)


def find_fingerprint(conn: Connection, source: str, external_id: str) -> StoredFingerprint | None:
    row = conn.execute(
        sqlfiles.query("pipeline.document_fingerprint"),
        {"source": source, "external_id": external_id},
    ).first()
    if row is None:
        return None
    return StoredFingerprint(
        document_id=int(row.document_id),
        status=str(row.status),
        input_sha=row.input_sha,
        chunks=int(row.n),
        prepared_with=row.prepared_with,
    )


def find_document(conn: Connection, source: str, external_id: str) -> tuple[int, str] | None:
    """(document id, stored title) of a document, or None."""
    row = conn.execute(
        sqlfiles.query("pipeline.document_id"), {"source": source, "external_id": external_id}
    ).first()
    return None if row is None else (int(row.document_id), str(row.title))


def lock_new_document(conn: Connection, source: str, external_id: str) -> None:
    """Until the transaction ends, no other writer passes this for the same document."""
    conn.execute(
        sqlfiles.query("ingest.lock_new_document"),
        {
            "namespace": int(LockNamespace.NEW_DOCUMENT),
            "source": source,
            "external_id": external_id,
        },
    )


def supersede_document_jobs(
    conn: Connection, source: str, external_id: str, job_id: int | None, by: str
) -> None:
    conn.execute(
        sqlfiles.query("ingest.supersede_document_jobs"),
        {"source": source, "external_id": external_id, "job_id": job_id, "by": by},
    )


def job_superseded(conn: Connection, job_id: int) -> str | None:
    found = conn.execute(sqlfiles.query("ingest.job_superseded"), {"job_id": job_id}).scalar()
    return None if found is None else str(found)


def lock_document(conn: Connection, source: str, external_id: str) -> StoredDocument | None:
    """The stored row of a document, locked until the transaction ends (FOR UPDATE)."""
    row = (
        conn.execute(
            sqlfiles.query("ingest.lock_document"), {"source": source, "external_id": external_id}
        )
        .mappings()
        .first()
    )
    if row is None:
        return None
    values = dict(row)
    values["metadata"] = dict(values["metadata"] or {})
    return StoredDocument(**values)


@dataclass(frozen=True)
class StoredChunkText:
    chunk_id: str
    section_path: str
    body: str


def document_passages(conn: Connection, document_id: int) -> list[StoredChunkText]:
    """A stored document's chunks in document order (writer mode)."""
    rows = conn.execute(sqlfiles.query("ingest.document_passages"), {"document_id": document_id})
    return [StoredChunkText(str(r.chunk_id), str(r.section_path), str(r.body)) for r in rows]


def touch_embeddings(conn: Connection, document_id: int, chunk_ids: Iterable[str]) -> None:
    """Kept chunks whose document's context changed where the live model had no room for
    it: only while a re-embed run is in progress (sql/ingest.sql, touch_embeddings)."""
    ids = sorted(chunk_ids)
    if ids:
        conn.execute(
            sqlfiles.query("ingest.touch_embeddings"),
            {"document_id": document_id, "chunk_ids": ids},
        )


def refresh_embeddings(
    conn: Connection, document_id: int, vectors: Mapping[str, str], model_id: str | None
) -> None:
    """New vectors (pgvector literals by chunk id) for chunks of the document that stay."""
    if vectors:
        conn.execute(
            sqlfiles.query("ingest.refresh_embeddings"),
            {
                "document_id": document_id,
                "chunk_ids": list(vectors),
                "embeddings": list(vectors.values()),
                "model_id": model_id,
            },
        )


@dataclass(frozen=True)
class StoredPassage:
    """A stored chunk's vector and what its encoder input was made of besides its text and
    its document's title."""

    content_sha256: str
    section_path: str
    summary: str | None
    embedding: str


def embeddings_by_content(
    conn: Connection, hashes: Sequence[str], title: str
) -> list[StoredPassage]:
    """Stored chunks with these texts in documents titled ``title``, one per distinct
    encoder input."""
    rows = conn.execute(
        sqlfiles.query("ingest.embeddings_by_content"), {"hashes": list(hashes), "title": title}
    )
    return [
        StoredPassage(str(r.content_sha256), str(r.section_path), r.summary, str(r.embedding))
        for r in rows
    ]


def find_matter_client(conn: Connection, matter_id: str) -> MatterClient | None:
    row = conn.execute(sqlfiles.query("ingest.matter_client"), {"matter_id": matter_id}).first()
    return None if row is None else MatterClient(str(row.matter_id), row.client_id)


def client_exists(conn: Connection, client_id: str) -> bool:
    return (
        conn.execute(sqlfiles.query("ingest.client_exists"), {"client_id": client_id}).first()
        is not None
    )


def matter_wall_group(conn: Connection, matter_id: str) -> str | None:
    """The wall group the matter has now, or None when it has none; no lock, so a wall
    change may move it before this transaction ends (``share_matter_wall_group``)."""
    row = conn.execute(
        sqlfiles.query("walls.matter_group_for_ingest"), {"matter_id": matter_id}
    ).first()
    return None if row is None else str(row.wall_group_id)


def share_matter_wall_group(conn: Connection, matter_id: str) -> str | None:
    """The matter's wall group as the last committed change left it (after waiting for one
    in flight), or None when it has none. Holds a share lock on the matter's group row until
    the transaction ends, so that a wall change on the matter waits for this write."""
    row = conn.execute(
        sqlfiles.query("walls.lock_matter_group_for_ingest"), {"matter_id": matter_id}
    ).first()
    return None if row is None else str(row.wall_group_id)


def upsert_source_acl(
    conn: Connection, source_acl_id: str, default_access: str, allow: list[str], deny: list[str]
) -> None:
    conn.execute(
        sqlfiles.query("ingest.upsert_source_acl"),
        {
            "source_acl_id": source_acl_id,
            "default_access": default_access,
            "allow": allow,
            "deny": deny,
            "resolvable": True,
        },
    )


@dataclass(frozen=True)
class StoredRules:
    default_access: str
    allow: frozenset[str]  # lower-cased, as stored
    deny: frozenset[str]
    resolvable: bool


def source_acl_rules(conn: Connection, source_acl_id: str) -> StoredRules | None:
    row = conn.execute(
        sqlfiles.query("ingest.source_acl_rules"), {"source_acl_id": source_acl_id}
    ).first()
    if row is None:
        return None
    return StoredRules(
        str(row.default_access), frozenset(row.allow or ()), frozenset(row.deny or ()),
        bool(row.resolvable),
    )  # fmt: skip


def _document_values(record: DocumentRecord) -> dict[str, Any]:
    values = asdict(record)
    values["metadata"] = values.pop("metadata_json")
    return values


def insert_document(conn: Connection, record: DocumentRecord) -> int | None:
    """The new document's id; None when a concurrent transaction inserted it first."""
    row = conn.execute(sqlfiles.query("ingest.insert_document"), _document_values(record)).first()
    return None if row is None else int(row.document_id)


def update_document(conn: Connection, document_id: int, record: DocumentRecord) -> None:
    conn.execute(
        sqlfiles.query("ingest.update_document"),
        {**_document_values(record), "document_id": document_id},
    )


def delete_chunks(conn: Connection, chunk_ids: Sequence[str]) -> None:
    conn.execute(sqlfiles.query("ingest.delete_chunks"), {"chunk_ids": list(chunk_ids)})


def update_chunk_placement(conn: Connection, placement: ChunkPlacement) -> int:
    """Stored chunks of the document follow its placement; the number of chunks changed."""
    return conn.execute(sqlfiles.query("ingest.update_chunk_metadata"), asdict(placement)).rowcount


def update_chunk_positions(conn: Connection, chunks: Iterable[PreparedChunk]) -> None:
    rows = list(chunks)
    if not rows:
        return
    conn.execute(
        sqlfiles.query("ingest.update_chunk_positions"),
        {
            "chunk_ids": [c.chunk_id for c in rows],
            "ordinals": [c.ordinal for c in rows],
            "section_paths": [c.section_path for c in rows],
            "pages_from": [c.page_from for c in rows],
            "pages_to": [c.page_to for c in rows],
        },
    )


def insert_chunks(
    conn: Connection,
    placement: ChunkPlacement,
    chunks: Iterable[PreparedChunk],
    vectors: Mapping[str, str],
    model_id: str | None = None,
) -> None:
    """Insert new chunks with their embeddings (pgvector literals by chunk id) and the id of
    the model that made them."""
    rows = list(chunks)
    if not rows:
        return
    conn.execute(
        sqlfiles.query("ingest.insert_chunks"),
        {
            **asdict(placement),
            "embedding_model": model_id,
            "chunk_ids": [c.chunk_id for c in rows],
            "section_paths": [c.section_path for c in rows],
            "pages_from": [c.page_from for c in rows],
            "pages_to": [c.page_to for c in rows],
            "ordinals": [c.ordinal for c in rows],
            "bodies": [c.body for c in rows],
            "embeddings": [vectors[c.chunk_id] for c in rows],
            "content_hashes": [c.content_sha256 for c in rows],
            "token_counts": [c.token_count for c in rows],
        },
    )


def unknown_denied_groups(conn: Connection, source: str, limit: int = 20) -> list[str]:
    """Groups of ``source`` that some access list denies and whose members ewall does not
    hold (sql/walls.sql allowed_source_acls admits nobody to those lists)."""
    rows = conn.execute(
        sqlfiles.query("ingest.unknown_denied_groups"), {"source": source, "limit": limit}
    )
    return [str(r.principal) for r in rows]


def set_document_acl(conn: Connection, source: str, external_id: str, acl_id: str) -> bool:
    """The document and its chunks to ``acl_id``; False when it was not there or had it."""
    row = conn.execute(
        sqlfiles.query("ingest.set_document_acl"),
        {"source": source, "external_id": external_id, "acl_id": acl_id},
    ).first()
    return row is not None


def delete_document(conn: Connection, source: str, external_id: str) -> bool:
    """Delete a document (its chunks go with it); False when there was none."""
    row = conn.execute(
        sqlfiles.query("pipeline.delete_document"), {"source": source, "external_id": external_id}
    ).first()
    return row is not None


@dataclass(frozen=True)
class StoredPlacement:
    status: str
    version: str | None
    client_id: str | None
    matter_id: str | None
    source_acl_id: str
    client_raw: str | None
    matter_raw: str | None
    modified_at: datetime | None
    metadata: dict[str, Any]


def stored_placements(
    conn: Connection, source: str, external_ids: list[str]
) -> dict[str, StoredPlacement]:
    """external id -> status, version, place, rules and stamps, for those of
    ``external_ids`` held."""
    rows = conn.execute(
        sqlfiles.query("pipeline.stored_placements"), {"source": source, "ids": external_ids}
    )
    return {
        str(r.external_id): StoredPlacement(r.status, r.version, r.client_id, r.matter_id,
                                            r.source_acl_id, r.client_raw, r.matter_raw,
                                            r.modified_at, dict(r.metadata or {}))
        for r in rows
    }


@dataclass(frozen=True)
class Textless:
    """A document whose content had no text: its version, stamp and source metadata then,
    and what it was prepared with (migration 20261212_0067)."""

    version: str | None
    modified_at: datetime | None
    metadata: dict[str, Any]
    prepared_with: str


def record_textless(conn: Connection, source: str, external_id: str, version: str | None,
                    modified_at: datetime | None, metadata_json: str, prepared_with: str) -> None:
    """What `Textless` holds, the metadata as canonical JSON."""
    conn.execute(sqlfiles.query("pipeline.record_textless"), {
        "source": source, "external_id": external_id, "version": version,
        "modified_at": modified_at, "metadata": metadata_json, "prepared_with": prepared_with})


def textless_placements(
    conn: Connection, source: str, external_ids: list[str]
) -> dict[str, Textless]:
    rows = conn.execute(
        sqlfiles.query("pipeline.textless_placements"), {"source": source, "ids": external_ids}
    )
    return {str(r.external_id): Textless(r.version, r.modified_at, dict(r.metadata or {}),
                                         r.prepared_with) for r in rows}


def forget_textless(conn: Connection, source: str, external_ids: list[str]) -> int:
    result = conn.execute(
        sqlfiles.query("pipeline.forget_textless"), {"source": source, "ids": external_ids}
    )
    return int(result.rowcount)


def textless_versions(conn: Connection, source: str) -> dict[str, str | None]:
    """external id -> version, of the textless documents of ``source``."""
    rows = conn.execute(sqlfiles.query("pipeline.textless_versions"), {"source": source})
    return {str(r.external_id): r.version for r in rows}


def source_documents(conn: Connection, source: str) -> list[SourceDocumentRef]:
    return [
        SourceDocumentRef(str(r.external_id), r.version, r.container)
        for r in conn.execute(sqlfiles.query("pipeline.source_documents"), {"source": source})
    ]


# --- runs and the administrator's view of one document (sql/ingest_runs.sql) ---------------


def connector_of_run(conn: Connection, run_id: uuid.UUID) -> str | None:
    """The registry name of the source a run read (``ingest_runs.connector``), or None when
    there is no such run."""
    value = conn.execute(
        sqlfiles.query("ingest_runs.connector_of_run"), {"run_id": run_id}
    ).scalar_one_or_none()
    return str(value) if value is not None else None


def document_summary(conn: Connection, source: str, external_id: str) -> dict[str, Any] | None:
    """One document as stored (its columns as JSON-ready values) with its chunk count,
    counted past the chunks RLS policy: an administrator's view, not a search."""
    mark_writer(conn)
    row = (
        conn.execute(
            sqlfiles.query("ingest_runs.document_summary"),
            {"source": source, "external_id": external_id},
        )
        .mappings()
        .first()
    )
    return None if row is None else dict(row)
