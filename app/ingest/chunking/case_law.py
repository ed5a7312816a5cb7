"""Case law: chunks per section of the decision, with fragments (a bare paragraph number)
folded into a neighbour."""

from __future__ import annotations

from app.ingest.chunking.normalization import normalize_chunk_text
from app.ingest.chunking.packing import Piece, SourceText, chunk_span, to_drafts
from app.ingest.types import ChunkDraft, ChunkLimits, ExtractedDocument, TokenCounter


def chunk_case_law_sections(
    doc: ExtractedDocument, tokens: TokenCounter, limits: ChunkLimits
) -> list[ChunkDraft]:
    budget = limits.cap(limits.generic)
    out: list[ChunkDraft] = []
    for section in doc.sections:
        src = SourceText(section.text, [], tokens, limits)
        path = (section.path or section.title).strip()
        out += to_drafts(src, chunk_span(src, 0, len(section.text), path, budget))
    return merge_fragments(out, tokens, limits.model_max)


# A chunk of fewer words than this ("20.", ".", "Beslissing") cannot stand alone: it says
# nothing to a reader, gets a near-random embedding and matches only its own number.
MIN_CHUNK_WORDS = 5


def merge_fragments(
    drafts: list[ChunkDraft], tokens: TokenCounter, cap: int, min_words: int = MIN_CHUNK_WORDS
) -> list[ChunkDraft]:
    """Fold chunks of fewer than ``min_words`` words into the next chunk (a paragraph number
    belongs to the paragraph after it), else into the previous one; a fragment stays alone
    only when neither neighbour has room under ``cap`` tokens."""
    out: list[ChunkDraft] = []
    pending: ChunkDraft | None = None
    for draft in drafts:
        current = draft
        if pending is not None:
            merged = _joined(pending, draft, tokens, cap, path_of=draft)
            if merged is None:
                out.append(pending)
            else:
                current = merged
            pending = None
        if len(current.text.split()) < min_words:
            pending = current
        else:
            out.append(current)
    if pending is not None:
        merged = _joined(out[-1], pending, tokens, cap, path_of=out[-1]) if out else None
        if merged is None:
            out.append(pending)
        else:
            out[-1] = merged
    return out


def _joined(
    first: ChunkDraft, second: ChunkDraft, tokens: TokenCounter, cap: int, *, path_of: ChunkDraft
) -> ChunkDraft | None:
    text = normalize_chunk_text(first.text + "\n" + second.text)
    n = tokens.count_tokens(text)
    if n > cap:
        return None
    pages = [
        p
        for p in (first.page_from, second.page_from, first.page_to, second.page_to)
        if p is not None
    ]
    return ChunkDraft(
        text=text,
        section_path=path_of.section_path,
        page_from=min(pages) if pages else None,
        page_to=max(pages) if pages else None,
        token_count=n,
    )


def chunk_case_law(src: SourceText) -> list[Piece]:
    return chunk_span(src, 0, len(src.text), "", src.limits.cap(src.limits.generic))
