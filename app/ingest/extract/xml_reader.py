"""XML: Rechtspraak open data through the case-law parser, any other XML as its text."""

from __future__ import annotations

import re

from app.caselaw.parse import extract_rechtspraak
from app.ingest.extract.mime import XML
from app.ingest.extract.text import clean_text
from app.ingest.types import ExtractedDocument, ExtractionError

_XML_ROOT_RE = re.compile(
    rb"^(?:\s|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*<(?:[\w.-]+:)?([\w.-]+)", re.DOTALL
)


def xml_root(content: bytes) -> str | None:
    head = content[:65536].lstrip(b"\xef\xbb\xbf")
    match = _XML_ROOT_RE.match(head)
    return match.group(1).decode("ascii", "replace").lower() if match else None


def extract_xml(content: bytes) -> ExtractedDocument:
    if xml_root(content) == "open-rechtspraak":
        return _extract_rechtspraak(content)
    return _extract_generic_xml(content)


def _extract_rechtspraak(content: bytes) -> ExtractedDocument:
    try:
        return extract_rechtspraak(content)
    except ExtractionError:
        raise
    except Exception as exc:  # malformed input must reach the report, not become a 500
        raise ExtractionError(f"invalid rechtspraak xml: {type(exc).__name__}: {exc}") from exc


def _extract_generic_xml(content: bytes) -> ExtractedDocument:
    from lxml import etree

    # No entities, no network, no DTD: uploaded XML is untrusted.
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(content, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise ExtractionError(f"invalid xml: {exc}") from exc
    if root is None:
        raise ExtractionError("invalid xml: empty document")
    parts = [" ".join(t.split()) for t in root.itertext()]
    text = "\n".join(p for p in parts if p)
    return ExtractedDocument(
        text=clean_text(text),
        mime_type=XML,
        warnings=["xml is not Rechtspraak open data; extracted its text content only"],
    )
