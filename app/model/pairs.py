"""Training pairs the corpus gives for free, for ``ewall model adapt``.

A pair is (anchor, positive): a short text that describes a passage, and the passage. The
builder sees nothing but chunk rows (:class:`ChunkRow`, read from ``chunks`` and
``documents``); it never reads an evaluation set, so no evaluation question can be trained on.

Kinds:

- ``summary``: a decision's summary (the ``inhoudsindicatie`` section) against the
  decision's other chunks (a sample of at most ``per_document`` of them);
- ``heading``: a section heading (the last part of the section path, its number cut off)
  against the first chunks of that section; headings that many documents share ("De
  beoordeling") say nothing about their section and are skipped;
- ``statute``: a statute article's title ("Artikel 6:162 BW") against its text, with the
  header lines that repeat the title removed;
- ``title``: a firm document's title against its first chunk (titles of three words or more);
- ``sentence``: one sentence of a chunk against the rest of the chunk without it (the
  inverse cloze task: a short text that states one point, against the passage around it).

Documents can be restricted to one half of the corpus (a stable hash of the document key
``source:external_id``, the same key the evaluation sets judge) or to a list of keys, so
the effect can be measured on questions about documents the model never saw.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from app.embeddings import is_summary_section

Half = Literal["even", "odd"]
KINDS = ("summary", "heading", "statute", "title", "sentence")
# sections whose "heading" is the part of the decision, not a heading
_NOT_HEADINGS = {"inhoudsindicatie", "uitspraak", "conclusie", "beslissing"}
_NUMBERING = re.compile(r"^\s*(?:(?:\d+(?:\.\d+)*|[ivxlc]+)[.):]?\s+)?", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9(\[])")
_WORD = re.compile(r"[^\W\d_]{2,}")
MIN_POSITIVE_WORDS = 12
MAX_HEADING_DOCUMENTS = 2


@dataclass(frozen=True)
class ChunkRow:
    """One chunk as the pair builder sees it."""

    document_key: str  # source:external_id
    source: str
    doc_type: str
    title: str
    section_path: str
    ordinal: int
    body: str


@dataclass(frozen=True)
class Pair:
    anchor: str
    positive: str
    kind: str
    document_key: str


def document_half(document_key: str) -> Half:
    """The half of the corpus a document belongs to: stable across databases and runs."""
    digest = hashlib.sha256(document_key.encode("utf-8")).digest()
    return "even" if digest[0] % 2 == 0 else "odd"


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def heading_of(section_path: str) -> str | None:
    """The section's own heading without its number, or None when it has no words."""
    last = section_path.rsplit("/", 1)[-1].strip()
    text = _NUMBERING.sub("", last).strip(" .,:;")
    if text.lower() in _NOT_HEADINGS or _words(text) < 2 or len(text) < 8:
        return None
    return text


def statute_text(body: str) -> str:
    """An article chunk without the header lines that repeat its title (up to the first
    blank line, when the chunk starts with "Artikel")."""
    if body.lstrip().lower().startswith("artikel") and "\n\n" in body:
        return body.split("\n\n", 1)[1].strip()
    return body.strip()


def _selected(
    rows: Iterable[ChunkRow], half: Half | None, documents: Collection[str] | None
) -> dict[str, list[ChunkRow]]:
    by_document: dict[str, list[ChunkRow]] = defaultdict(list)
    for row in rows:
        if half is not None and document_half(row.document_key) != half:
            continue
        if documents is not None and row.document_key not in documents:
            continue
        by_document[row.document_key].append(row)
    for chunks in by_document.values():
        chunks.sort(key=lambda r: r.ordinal)
    return dict(sorted(by_document.items()))


def _sample(rows: Sequence[ChunkRow], n: int, rng: random.Random) -> list[ChunkRow]:
    return (
        list(rows) if len(rows) <= n else sorted(rng.sample(list(rows), n), key=lambda r: r.ordinal)
    )


def build_pairs(
    rows: Iterable[ChunkRow],
    *,
    kinds: Sequence[str] = KINDS,
    half: Half | None = None,
    documents: Collection[str] | None = None,
    per_document: int = 8,
    max_pairs: int | None = None,
    seed: int = 0,
) -> list[Pair]:
    """Pairs from ``rows`` (chunk rows only), deterministic for a seed, shuffled, at most
    ``max_pairs``."""
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown pair kinds: {', '.join(sorted(unknown))}")
    rng = random.Random(seed)  # noqa: S311 - sampling, not security
    by_document = _selected(rows, half, documents)
    heading_documents: dict[str, set[str]] = defaultdict(set)
    for key, chunks in by_document.items():
        for row in chunks:
            heading = heading_of(row.section_path)
            if heading is not None:
                heading_documents[heading.lower()].add(key)
    pairs: list[Pair] = []
    for key, chunks in by_document.items():
        body_chunks = [r for r in chunks if _words(r.body) >= MIN_POSITIVE_WORDS]
        summary = [r for r in chunks if is_summary_section(r.section_path)]
        if "summary" in kinds and summary:
            anchor = " ".join(r.body.strip() for r in summary)
            others = [r for r in body_chunks if r not in summary]
            pairs.extend(
                Pair(anchor, row.body.strip(), "summary", key)
                for row in _sample(others, per_document, rng)
            )
        if "heading" in kinds:
            sections: dict[str, list[ChunkRow]] = defaultdict(list)
            for row in body_chunks:
                heading = heading_of(row.section_path)
                if heading and len(heading_documents[heading.lower()]) <= MAX_HEADING_DOCUMENTS:
                    sections[heading].append(row)
            for heading, section in list(sections.items())[:per_document]:
                pairs.extend(Pair(heading, row.body.strip(), "heading", key) for row in section[:2])
        if "statute" in kinds and chunks[0].doc_type == "statute" and chunks[0].title:
            for row in chunks[:per_document]:
                text = statute_text(row.body)
                if _words(text) >= 4:
                    pairs.append(Pair(chunks[0].title.strip(), text, "statute", key))
        if (
            "title" in kinds
            and chunks[0].doc_type not in ("statute", "case_law")
            and _words(chunks[0].title) >= 3
            and body_chunks
        ):
            pairs.append(Pair(chunks[0].title.strip(), body_chunks[0].body.strip(), "title", key))
        if "sentence" in kinds:
            for row in _sample(body_chunks, per_document, rng):
                pair = _sentence_pair(row, rng)
                if pair is not None:
                    pairs.append(pair)
    unique = list({(p.anchor, p.positive): p for p in pairs}.values())
    rng.shuffle(unique)
    return unique[:max_pairs] if max_pairs is not None else unique


def _sentence_pair(row: ChunkRow, rng: random.Random) -> Pair | None:
    sentences = [s.strip() for s in _SENTENCE.split(row.body.strip()) if s.strip()]
    candidates = [i for i, s in enumerate(sentences) if 6 <= _words(s) <= 60]
    if len(sentences) < 3 or not candidates:
        return None
    i = rng.choice(candidates)
    rest = " ".join(sentences[:i] + sentences[i + 1 :])
    if _words(rest) < MIN_POSITIVE_WORDS:
        return None
    return Pair(sentences[i], rest, "sentence", row.document_key)


def batches(pairs: Sequence[Pair], batch_size: int, seed: int) -> list[list[Pair]]:
    """Shuffled batches in which no two pairs share a document, an anchor or a positive:
    every other pair of a batch is a true negative for in-batch negatives. A pair that does
    not fit waits for the next batch; the last batch may be smaller."""
    rng = random.Random(seed)  # noqa: S311 - shuffling, not security
    waiting = list(pairs)
    rng.shuffle(waiting)
    out: list[list[Pair]] = []
    while waiting:
        batch: list[Pair] = []
        seen: set[str] = set()
        rest: list[Pair] = []
        for pair in waiting:
            marks = {"d:" + pair.document_key, "a:" + pair.anchor, "p:" + pair.positive}
            if len(batch) < batch_size and not marks & seen:
                batch.append(pair)
                seen |= marks
            else:
                rest.append(pair)
        if len(batch) < 2 and out:
            break  # only pairs of one document are left: no negatives for them
        out.append(batch)
        waiting = rest
    return out


def pairs_digest(pairs: Iterable[Pair]) -> str:
    """A short hash of the training pairs (recorded with the model)."""
    h = hashlib.sha256()
    for p in pairs:
        h.update(f"{p.kind}\0{p.document_key}\0{p.anchor}\0{p.positive}\n".encode())
    return h.hexdigest()[:16]
