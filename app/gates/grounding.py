"""The grounding gate: is each sentence of an answer supported by what the retrieval returned?

Support may come ONLY from chunks that this audited retrieval returned (audit log), that
the person may still see now (walls and source permissions resolved at this instant, the
same SQL predicates and RLS as search), and whose content is still what was returned
(content hash as audited). Anything else, however similar, cannot ground an answer: the
model was never shown it, or the person may no longer read it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from app.errors import Forbidden, NotFound, Unprocessable
from app.gates.sentences import split_sentences
from app.resources import Resources
from app.walls.access import current_access, visible_chunks

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


def _normalised(rows: Matrix) -> Matrix:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Matrix = np.asarray(rows / norms, dtype=np.float32)
    return out


def returned_chunks(conn: Connection, retrieval_id: uuid.UUID, person_id: str) -> dict[str, str]:
    """chunk_id -> content hash as audited, for a retrieval made by ``person_id``."""
    owner = conn.execute(
        text("SELECT person_id FROM audit_retrievals WHERE retrieval_id = :id"),
        {"id": retrieval_id},
    ).scalar_one_or_none()
    if owner is None:
        raise NotFound("retrieval", str(retrieval_id))
    if owner != person_id:
        raise Forbidden("Only the person who made the retrieval may check it.")
    rows = conn.execute(
        text(
            "SELECT chunk_id, content_sha256 FROM audit_retrieval_results "
            "WHERE retrieval_id = :id ORDER BY rank"
        ),
        {"id": retrieval_id},
    )
    return {str(r.chunk_id): str(r.content_sha256) for r in rows}


def _supporting_chunks(
    conn: Connection, resources: Resources, person_id: str, audited: Mapping[str, str]
) -> tuple[list[str], Matrix | None]:
    if not audited:
        return [], None
    access = current_access(conn, resources.require_resolver(), resources.database, person_id)
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
        return [], None
    return ids, _normalised(np.vstack(vectors))


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
    similarities = _normalised(sentence_vectors) @ chunk_vectors.T
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
    answer: str,
) -> GroundingResult:
    try:
        rid = retrieval_id if isinstance(retrieval_id, uuid.UUID) else uuid.UUID(retrieval_id)
    except ValueError as exc:
        raise Unprocessable(
            "invalid_retrieval_id", "retrieval_id must be a UUID.", field="retrieval_id"
        ) from exc
    sentences = split_sentences(answer)
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
    audited = returned_chunks(conn, rid, person_id)
    chunk_ids, chunk_vectors = _supporting_chunks(conn, resources, person_id, audited)
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
    )
