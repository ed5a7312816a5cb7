"""Case-law fragments ("20.", ".") never stand alone as chunks (real tokenizer)."""

from __future__ import annotations

from typing import Any

from app.ingest.chunking import MIN_CHUNK_WORDS, chunk_document, merge_fragments
from app.ingest.types import ChunkDraft, ChunkLimits, ExtractedDocument, Section

BODY = (
    "De Hoge Raad overweegt dat het middel faalt omdat het Hof de feiten juist heeft "
    "vastgesteld en daaraan de juiste gevolgen heeft verbonden. "
)


def _decision(*sections: tuple[str, str]) -> ExtractedDocument:
    secs = [Section(title=t, text=x, path=t) for t, x in sections]
    return ExtractedDocument(
        text="\n\n".join(x for _, x in sections), mime_type="application/xml", sections=secs
    )


def test_a_paragraph_number_joins_the_paragraph_after_it(embedder: Any) -> None:
    limits = ChunkLimits(model_max=embedder.max_passage_tokens)
    doc = _decision(("1", BODY), ("2", "20."), ("3", BODY * 2), ("4", "."))
    chunks = chunk_document(doc, "case_law", embedder, limits)
    assert all(len(c.text.split()) >= MIN_CHUNK_WORDS for c in chunks), chunks
    assert len(chunks) == 2
    assert chunks[1].text.startswith("20.\n")
    assert chunks[1].section_path == "3"  # the paragraph it introduces
    assert chunks[1].text.endswith(".\n.")  # a trailing fragment joins the chunk before it
    for c in chunks:
        assert c.token_count == embedder.count_tokens(c.text) <= limits.model_max


def test_a_fragment_stays_alone_only_when_no_neighbour_has_room(embedder: Any) -> None:
    cap = embedder.max_passage_tokens
    words: list[str] = []
    while embedder.count_tokens(" ".join([*words, "recht"])) <= cap:
        words.append("recht")
    full = " ".join(words)  # the model's cap exactly: nothing more fits
    big = ChunkDraft(text=full, token_count=embedder.count_tokens(full))
    tiny = ChunkDraft(text="20.", token_count=embedder.count_tokens("20."))
    out = merge_fragments([big, tiny, big], embedder, cap)
    assert [c.text for c in out] == [big.text, "20.", big.text]
    assert merge_fragments([tiny], embedder, cap) == [tiny]
