"""Turning a source document into chunks to store, without the database: extract, chunk,
normalise, and give each chunk its content-addressed id."""

from __future__ import annotations

import hashlib

from app.audit.chain import canonical_json
from app.ingest.chunking import chunk_document, normalize_chunk_text, normalize_doc_type
from app.ingest.extract import extract
from app.ingest.types import (
    ChunkDraft,
    ChunkLimits,
    ExtractedDocument,
    ExtractionError,
    PreparedChunk,
    TokenCounter,
)
from connectors.base import SourceDocument

# bump when extraction or chunking changes what a document yields; the next full crawl of a
# DMS then reads every document again (their stored `prepared_with` differs), as after a
# change of encoder or chunk limits
CHUNKER_VERSION = 2


# what ingestion itself writes into a document's metadata (never part of its input)
OWN_METADATA = ("input_sha256", "prepared_with")


def chunk_id_for(source: str, external_id: str, normalized_text: str) -> str:
    """``<source>:<external_id>:<first 16 hex of sha256(normalised text)>``."""
    digest = hashlib.sha256(normalized_text.encode("utf-8")).hexdigest()
    return f"{source}:{external_id}:{digest[:16]}"


def extract_document(doc: SourceDocument) -> ExtractedDocument:
    """The text of ``doc`` (its ``text``, else what its ``content`` holds). Raises
    ExtractionError for bad or missing content."""
    if doc.text is None and doc.content is None:
        raise ExtractionError("no content: neither text nor content was given")
    filename = doc.metadata.get("filename")
    return extract(
        text=doc.text,
        content=doc.content,
        mime_type=doc.mime_type,
        filename=str(filename) if filename else None,
    )


def prepare_document(
    doc: SourceDocument, tokens: TokenCounter, limits: ChunkLimits
) -> tuple[ExtractedDocument, list[PreparedChunk], str]:
    """Extract and chunk (no database). Raises ExtractionError for bad content."""
    extracted = extract_document(doc)
    if not extracted.has_text:
        raise ExtractionError("no text: the document contains no extractable text")
    doc_type = normalize_doc_type(doc.doc_type)
    if doc.source == "rechtspraak" and doc_type == "other":
        doc_type = "case_law"
    drafts = chunk_document(extracted, doc_type, tokens, limits)
    return extracted, dedupe_chunks(doc, drafts, tokens), doc_type


def dedupe_chunks(
    doc: SourceDocument, drafts: list[ChunkDraft], tokens: TokenCounter
) -> list[PreparedChunk]:
    """Drafts as chunks to store: normalised, content-addressed, identical text once."""
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
                token_count=draft.token_count or tokens.count_tokens(body),
            )
        )
    return out


def prepared_with(model_name: str, limits: ChunkLimits) -> str:
    """What a document's chunks were made with, apart from the document: the chunker's
    version, the encoder and its chunk limits. Stored in each document's metadata, so that a
    full crawl, which reads again only documents that changed at the source, still reads
    every document once after any of these changed."""
    fields = {"chunker": CHUNKER_VERSION, "model": model_name, "limits": _limits(limits)}
    return hashlib.sha256(canonical_json(fields).encode("utf-8")).hexdigest()[:32]


def _limits(limits: ChunkLimits) -> list[int]:
    return [
        limits.model_max,
        limits.generic,
        limits.generic_overlap,
        limits.brief_section,
        limits.deposition_context,
    ]


class UnreadableFieldError(ValueError):
    """A field of a document that UTF-8 cannot hold (a lone surrogate); the message names
    the field, as the run's entry for the document does."""


def unreadable_reason(exc: ValueError | OverflowError) -> str:
    """The report's reason for a document whose fingerprint could not be taken."""
    if isinstance(exc, UnreadableFieldError):
        return str(exc)
    return f"unreadable metadata: {type(exc).__name__}"  # a date past year 9999 in UTC


def _utf8(name: str, value: str, *, at: bool = False) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        where = f" at character {exc.start}" if at else ""
        raise UnreadableFieldError(
            f"unreadable {name}: a lone surrogate (U+{ord(value[exc.start]):04X}){where}, which "
            "UTF-8 cannot hold"
        ) from None


def input_fingerprint(
    doc: SourceDocument,
    public: bool,
    search_state: str | None,
    model_name: str,
    limits: ChunkLimits,
) -> str:
    """Everything that decides a document's chunks and their metadata. Equal fingerprint
    on an active document: nothing to extract, chunk or write (the common re-sync case)."""
    digest = hashlib.sha256()
    content = _utf8("text", doc.text, at=True) if doc.text is not None else (doc.content or b"")
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
        "model": model_name,
        "limits": _limits(limits),
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
        "metadata": {k: v for k, v in doc.metadata.items() if k not in OWN_METADATA},
    }
    try:
        digest.update(canonical_json(fields).encode("utf-8"))
    except UnicodeEncodeError:
        for name, value in fields.items():  # which field holds it: the entry names it
            _utf8(name, canonical_json(value))
        raise
    return digest.hexdigest()
