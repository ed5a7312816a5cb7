"""PDF: text per page, with page offsets."""

from __future__ import annotations

import io
from typing import Any

from app.ingest.extract.mime import PDF
from app.ingest.extract.text import clean_text, tidy_lines
from app.ingest.types import ExtractedDocument, ExtractionError, PageSpan


def _decrypt_pdf(reader: Any) -> None:
    from pypdf.errors import DependencyError

    # Many PDFs are encrypted only against editing, with an empty user password.
    try:
        decrypted = reader.decrypt("")
    except (DependencyError, NotImplementedError) as exc:
        raise ExtractionError(f"encrypted pdf: cannot decrypt ({exc})") from exc
    if not decrypted:
        raise ExtractionError("encrypted pdf: a password is required to open it")


def extract_pdf(content: bytes) -> ExtractedDocument:
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    warnings: list[str] = []
    try:
        reader = PdfReader(io.BytesIO(content))
        if reader.is_encrypted:
            _decrypt_pdf(reader)
            warnings.append("pdf was encrypted with an empty user password")
        raw_pages = list(reader.pages)
    except ExtractionError:
        raise
    except FileNotDecryptedError as exc:
        raise ExtractionError("encrypted pdf: a password is required to open it") from exc
    except PdfReadError as exc:
        raise ExtractionError(f"corrupt pdf: {exc}") from exc
    except Exception as exc:  # pypdf raises assorted builtin errors on damaged files
        raise ExtractionError(f"corrupt pdf: {type(exc).__name__}: {exc}") from exc

    if not raw_pages:
        raise ExtractionError("corrupt pdf: the file has no pages")

    page_texts: list[str] = []
    failed: list[int] = []
    for number, page in enumerate(raw_pages, start=1):
        try:
            page_text = page.extract_text() or ""
        except Exception:  # one damaged content stream should not lose the other pages
            failed.append(number)
            page_text = ""
        page_texts.append(tidy_lines(clean_text(page_text)))

    if not any(t.strip() for t in page_texts):
        if failed and len(failed) == len(raw_pages):
            raise ExtractionError("corrupt pdf: text extraction failed on every page")
        raise ExtractionError(
            f"no text: the PDF ({len(raw_pages)} page(s)) has no text layer; "
            "it is probably scanned and OCR is not supported"
        )
    if failed:
        warnings.append("text extraction failed on page(s) " + ", ".join(map(str, failed)))
    empty = [str(i) for i, t in enumerate(page_texts, start=1) if not t and i not in failed]
    if empty:
        warnings.append("page(s) without text layer: " + ", ".join(empty))

    pages: list[PageSpan] = []
    offset = 0
    for number, page_text in enumerate(page_texts, start=1):
        if number > 1:
            offset += 2  # the "\n\n" that joins pages
        pages.append(PageSpan(number=number, start=offset, end=offset + len(page_text)))
        offset += len(page_text)

    title: str | None = None
    metadata: dict[str, Any] = {"page_count": len(raw_pages)}
    try:
        info = reader.metadata
        if info is not None and info.title:
            title = clean_text(str(info.title)).strip() or None
    except Exception:  # broken metadata is no reason to lose the text
        warnings.append("pdf metadata unreadable")
    return ExtractedDocument(
        text="\n\n".join(page_texts),
        mime_type=PDF,
        pages=pages,
        title=title,
        metadata=metadata,
        warnings=warnings,
    )
