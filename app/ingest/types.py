"""Types shared by extraction, chunking and the ingest pipeline."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

# Canonical document types. Sources and sidecars use many spellings; `normalize_doc_type`
# maps them here. Each has a chunker (app/ingest/chunking/); anything else is "other".
DOC_TYPES = (
    "claim_chart",
    "brief",  # briefs, EPO/EOV oppositions, pleitnota's, dagvaardingen, conclusies
    "deposition",  # depositions, witness statements (getuigenverklaringen)
    "expert_report",
    "case_law",
    "statute",
    "memo",
    "email",
    "contract",
    "other",
)


class ExtractionError(Exception):
    """Content that cannot be turned into text; ``reason`` goes into the ingest report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class PageSpan:
    """Characters [start, end) of ExtractedDocument.text belong to page ``number`` (1-based)."""

    number: int
    start: int
    end: int


@dataclass(frozen=True)
class Section:
    """A structural section given by the source format (e.g. Rechtspraak XML <section>)."""

    title: str
    text: str
    path: str = ""  # e.g. "uitspraak / 3" ; defaults to title


@dataclass
class ExtractedDocument:
    text: str
    mime_type: str
    pages: list[PageSpan] = field(default_factory=list)  # empty when the format has no pages
    sections: list[Section] = field(default_factory=list)  # empty when there is no structure
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # e.g. e-mail headers, ECLI data
    warnings: list[str] = field(default_factory=list)  # recoveries (e.g. "decoded as cp1252")

    @property
    def has_text(self) -> bool:
        return bool(self.text.strip()) or any(s.text.strip() for s in self.sections)


@dataclass(frozen=True)
class ChunkDraft:
    text: str
    section_path: str = ""
    page_from: int | None = None
    page_to: int | None = None
    token_count: int = 0


@dataclass(frozen=True)
class PreparedChunk:
    """A chunk ready to store: normalised text, its content-addressed id and its position."""

    chunk_id: str
    body: str
    content_sha256: str
    section_path: str
    page_from: int | None
    page_to: int | None
    ordinal: int
    token_count: int


class TokenCounter(Protocol):
    """The embedding model's tokenizer (app.embeddings.Embedder satisfies this)."""

    def count_tokens(self, text: str) -> int: ...

    @property
    def max_passage_tokens(self) -> int: ...


@dataclass(frozen=True)
class ChunkLimits:
    """Token budgets; every size is capped by the model's maximum sequence length."""

    model_max: int
    generic: int = 600
    generic_overlap: int = 80
    brief_section: int = 800
    deposition_context: int = 200

    def cap(self, size: int) -> int:
        return max(16, min(size, self.model_max))

    @property
    def scale(self) -> float:
        """Overlaps and windows shrink with the cap (the sizes assume a 512-token model)."""
        return min(1.0, self.model_max / 512)


@dataclass
class DocumentOutcome:
    status: str  # added | updated | unchanged | quarantined | error | superseded
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
