"""Deterministic chunking per document type.

Chunk ids are the sha256 of ``normalize_chunk_text(chunk.text)``, so the same document must
always produce the same chunks: no randomness, no dependence on set or dict order, and
token counts taken from the real tokenizer. Every chunk fits the embedding model's
passage limit, because the encoder silently truncates anything longer.

All splitting works on character offsets into the source text, so the pages a chunk came
from are known exactly, without searching for its text afterwards.
"""

from __future__ import annotations

from collections.abc import Callable

from app.ingest.chunking.brief import chunk_brief
from app.ingest.chunking.case_law import (
    MIN_CHUNK_WORDS,
    chunk_case_law,
    chunk_case_law_sections,
    merge_fragments,
)
from app.ingest.chunking.claim_chart import chunk_claim_chart
from app.ingest.chunking.classification import normalize_doc_type
from app.ingest.chunking.deposition import chunk_deposition
from app.ingest.chunking.expert_report import chunk_expert_report
from app.ingest.chunking.normalization import normalize_chunk_text
from app.ingest.chunking.packing import Piece, SourceText, chunk_generic, to_drafts
from app.ingest.types import ChunkDraft, ChunkLimits, ExtractedDocument, TokenCounter

__all__ = [
    "MIN_CHUNK_WORDS",
    "chunk_document",
    "merge_fragments",
    "normalize_chunk_text",
    "normalize_doc_type",
]

_CHUNKERS: dict[str, Callable[[SourceText], list[Piece]]] = {
    "claim_chart": chunk_claim_chart,
    "brief": chunk_brief,
    "deposition": chunk_deposition,
    "expert_report": chunk_expert_report,
    "case_law": chunk_case_law,
}


def chunk_document(
    doc: ExtractedDocument, doc_type: str, tokens: TokenCounter, limits: ChunkLimits
) -> list[ChunkDraft]:
    """Cut ``doc`` into chunks the way its document type is structured.

    Every chunk's ``token_count`` is at most ``limits.model_max`` and its text is already
    in ``normalize_chunk_text`` form. Chunks come in document order.
    """
    kind = normalize_doc_type(doc_type)
    has_body = bool(doc.text.strip())
    if doc.sections and (kind == "case_law" or not has_body):
        return chunk_case_law_sections(doc, tokens, limits)
    if not has_body:
        return []
    src = SourceText(doc.text, doc.pages, tokens, limits)
    chunker = _CHUNKERS.get(kind)
    pieces = chunker(src) if chunker else chunk_generic(src, 0, len(doc.text))
    return to_drafts(src, pieces)
