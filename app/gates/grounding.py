"""The grounding gate: is each sentence of an answer supported by what the retrieval returned?

Support may come ONLY from chunks that this audited retrieval returned (audit log), that
the person may still see now (walls and source permissions resolved at this instant, the
same SQL predicates and RLS as search), and whose content is still what was returned
(content hash as audited). Anything else, however similar, cannot ground an answer: the
model was never shown it, or the person may no longer read it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection

from app.errors import Forbidden, NotFound, Unprocessable
from app.gates import repository
from app.reembed.service import check_query_model
from app.resources import Resources
from app.walls import policy
from app.walls.access import access_for, current_access, visible_chunks
from app.walls.graph import MatrixSnapshot

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class SentenceResult:
    text: str
    supported: bool
    best_chunk_id: str | None
    similarity: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "supported": self.supported,
            "best_chunk_id": self.best_chunk_id,
            "similarity": self.similarity,
        }


@dataclass(frozen=True)
class GroundingResult:
    retrieval_id: str
    ok: bool
    threshold: float
    sentences: list[SentenceResult] = field(default_factory=list)
    policy_version: int | None = None  # the policy the access check enforced

    def as_dict(self) -> dict[str, Any]:
        return {
            "retrieval_id": self.retrieval_id,
            "ok": self.ok,
            "threshold": self.threshold,
            "sentences": [s.as_dict() for s in self.sentences],
        }


def _vector(value: object) -> npt.NDArray[np.float32]:
    """pgvector's text form "[0.1,0.2,...]" (or an array, should an adapter be active)."""
    if isinstance(value, str):
        inner = value.strip().removeprefix("[").removesuffix("]")
        return np.array([float(x) for x in inner.split(",") if x.strip()], dtype=np.float32)
    return np.asarray(value, dtype=np.float32)


def _normalized(rows: Matrix) -> Matrix:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Matrix = np.asarray(rows / norms, dtype=np.float32)
    return out


def returned_chunks(conn: Connection, retrieval_id: uuid.UUID, person_id: str) -> dict[str, str]:
    """chunk_id -> content hash as audited, for a retrieval made by ``person_id``."""
    owner = repository.retrieval_owner(conn, retrieval_id)
    if owner is None:
        raise NotFound("retrieval", str(retrieval_id))
    if owner != person_id:
        raise Forbidden("Only the person who made the retrieval may check it.")
    return repository.retrieval_results(conn, retrieval_id)


@dataclass(frozen=True)
class Support:
    """What may ground an answer: the audited, still visible chunks and their vectors, read
    under one policy version (all the grounding gate reads from the database)."""

    chunk_ids: list[str]
    vectors: Matrix | None
    policy_version: int


def read_support(
    conn: Connection,
    resources: Resources,
    person_id: str,
    retrieval_id: uuid.UUID,
    snapshot: MatrixSnapshot | None = None,
) -> Support:
    """The audit row and results of the retrieval, the person's access now, and the chunks
    among the results that access still shows. With ``snapshot`` (read in this very
    transaction, as on a replica) the person is resolved with it; otherwise with the
    resolver's snapshot at least as new as the policy this transaction sees."""
    audited = returned_chunks(conn, retrieval_id, person_id)
    if not audited:
        version = snapshot.version if snapshot is not None else policy.current_version(conn)
        return Support([], None, version)
    if snapshot is None:
        access = current_access(conn, resources.require_resolver(), resources.database, person_id)
    else:
        resolution = resources.require_resolver().resolve_with(
            snapshot, person_id, datetime.now(UTC)
        )
        access = access_for(conn, resolution)
    embedder = resources.embedder
    if embedder is not None:  # the chunks' vectors and the sentences' must be one model's
        check_query_model(conn, embedder.model_id)
    rows = visible_chunks(conn, access, list(audited))
    ids: list[str] = []
    vectors: list[npt.NDArray[np.float32]] = []
    for row in rows:
        chunk_id = str(row["chunk_id"])
        # same id but other content would mean a broken content address: do not trust it
        if audited.get(chunk_id) != row.get("content_sha256"):
            continue
        ids.append(chunk_id)
        vectors.append(_vector(row["embedding"]))
    if not ids:
        return Support([], None, access.policy_version)
    return Support(ids, _normalized(np.vstack(vectors)), access.policy_version)


def score_sentences(
    sentences: Sequence[str],
    sentence_vectors: Matrix,
    chunk_ids: Sequence[str],
    chunk_vectors: Matrix | None,
    threshold: float,
) -> list[SentenceResult]:
    """Best cosine similarity of each sentence against the supporting chunks."""
    if chunk_vectors is None or not chunk_ids:
        return [SentenceResult(s, False, None, None) for s in sentences]
    similarities = _normalized(sentence_vectors) @ chunk_vectors.T
    out: list[SentenceResult] = []
    for i, sentence in enumerate(sentences):
        best = int(np.argmax(similarities[i]))
        value = float(similarities[i, best])
        out.append(SentenceResult(sentence, value >= threshold, chunk_ids[best], round(value, 4)))
    return out


def check_grounding(
    conn: Connection,
    resources: Resources,
    person_id: str,
    retrieval_id: str | uuid.UUID,
    sentences: Sequence[str],
    *,
    read: Callable[[uuid.UUID], Support] | None = None,
) -> GroundingResult:
    """Check the answer's ``sentences`` (split once by the caller, after its size checks)
    against retrieval ``retrieval_id``. The database reads run on ``conn`` unless ``read``
    is given (app/gates/replica.py: on a replica, whose transaction ends before the
    sentences are embedded)."""
    try:
        rid = retrieval_id if isinstance(retrieval_id, uuid.UUID) else uuid.UUID(retrieval_id)
    except ValueError as exc:
        raise Unprocessable(
            "invalid_retrieval_id", "retrieval_id must be a UUID.", field="retrieval_id"
        ) from exc
    if not sentences:
        raise Unprocessable("empty_answer", "The answer has no sentence to check.", field="answer")
    limit = resources.settings.grounding_max_sentences
    if len(sentences) > limit:
        # each sentence is a model call's worth of work; bound one request's cost
        raise Unprocessable(
            "too_many_sentences",
            f"The answer has {len(sentences)} sentences; at most {limit} are checked.",
            field="answer",
            limit=limit,
        )
    support = read(rid) if read is not None else read_support(conn, resources, person_id, rid)
    chunk_ids, chunk_vectors = support.chunk_ids, support.vectors
    threshold = float(resources.settings.grounding_threshold)
    if chunk_vectors is None:
        results = score_sentences(sentences, np.zeros((0, 0), np.float32), [], None, threshold)
    else:
        # many sentences nobody waits on interactively: bulk, behind every search's query
        vectors = resources.require_embedder().embed_queries(sentences, priority="bulk")
        results = score_sentences(sentences, vectors, chunk_ids, chunk_vectors, threshold)
    return GroundingResult(
        retrieval_id=str(rid),
        ok=bool(results) and all(r.supported for r in results),
        threshold=threshold,
        sentences=results,
        policy_version=support.policy_version,
    )
