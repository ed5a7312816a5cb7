"""Extraction from every supported format, on files generated here (fpdf2, python-docx)."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.ingest import extract as extract_module
from app.ingest.chunking import chunk_document
from app.ingest.extract import (
    DOCX,
    EML,
    HTML,
    PDF,
    TEXT,
    XML,
    docx_reader,
    extract,
    sniff_mime_type,
    xml_reader,
)
from app.ingest.extract.html_reader import html_to_text
from app.ingest.types import ChunkLimits, ExtractedDocument, ExtractionError
from tests.shared_data import require

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "rechtspraak"

PAGE_ONE = (
    "Pleitnota in de zaak Alpha B.V. tegen Beta N.V. Eiseres vordert vergoeding van schade "
    "op grond van art. 6:162 BW. De rechtbank heeft in r.o. 3.4 overwogen dat Beta "
    "onrechtmatig heeft gehandeld."
)
PAGE_TWO = (
    "Beta betwist dat zij aansprakelijk is. Zij beroept zich op HR 12 maart 2021 en stelt "
    "dat het causaal verband ontbreekt. De vordering moet worden afgewezen."
)


def _pdf(*pages: str, image_only: bool = False, **encryption: Any) -> bytes:
    # fpdf2 (test-only dependency) writes real PDFs with a text layer; pypdf cannot.
    import fpdf  # fpdf2, a declared test dependency

    doc = fpdf.FPDF()
    doc.set_font("Helvetica", size=11)
    for text in pages:
        doc.add_page()
        if text:
            doc.multi_cell(0, 6, text)
    if image_only:
        from PIL import Image

        scan = io.BytesIO()
        Image.new("RGB", (200, 120), (250, 250, 240)).save(scan, format="PNG")
        doc.add_page()
        doc.image(scan, x=10, y=10, w=180)
    if encryption:
        doc.set_encryption(**encryption)
    return bytes(doc.output())


def _reason(**kwargs: Any) -> str:
    with pytest.raises(ExtractionError) as info:
        extract(**kwargs)
    return info.value.reason


def _extract_or_reason(**kwargs: Any) -> ExtractedDocument | str:
    try:
        return extract(**kwargs)
    except ExtractionError as exc:
        return exc.reason


# --- plain text ----------------------------------------------------------------------------


def test_text_is_cleaned_and_nfc() -> None:
    doc = extract(text="Artikel 1\r\nDe ver\x00koper\x07\tlevert\rcafe\u0301", content=None,
                  mime_type=None)  # fmt: skip
    assert doc.text == "Artikel 1\nDe verkoper\tlevert\ncaf\u00e9"
    assert doc.mime_type == TEXT
    assert doc.pages == []


def test_utf8_bytes_with_bom() -> None:
    doc = extract(text=None, content=b"\xef\xbb\xbfZie \xc3\xa9\xc3\xa9n arrest.",
                  mime_type="text/plain")  # fmt: skip
    assert doc.text == "Zie één arrest."
    assert doc.warnings == []


def test_cp1252_bytes_decode_with_warning() -> None:
    raw = "Café – “één” verweerschrift € 5.000".encode("cp1252")
    doc = extract(text=None, content=raw, mime_type="text/plain")
    assert doc.text == "Café – “één” verweerschrift € 5.000"
    assert "decoded as cp1252" in doc.warnings


def test_declared_charset_is_used() -> None:
    raw = "Ærø".encode("latin-1")
    doc = extract(text=None, content=raw, mime_type="text/plain; charset=ISO-8859-1")
    assert doc.text == "Ærø"
    assert doc.warnings == []


@settings(max_examples=60, deadline=None)
@given(
    prefix=st.sampled_from(
        [
            b"",
            b"%PDF-1.4\n",
            b"PK\x03\x04",
            b"<html><body>",
            b"From: a@b.nl\n",
            b"<?xml ?>",
            b"<open-rechtspraak>",
            b"\xd0\xcf\x11\xe0",
        ]
    ),
    body=st.binary(max_size=400),
    mime=st.sampled_from([None, "application/octet-stream", "text/plain", "text/html"]),
)
def test_arbitrary_bytes_never_crash(prefix: bytes, body: bytes, mime: str | None) -> None:
    """Malformed input is an ExtractionError with a reason, never another exception."""
    outcome = _extract_or_reason(text=None, content=prefix + body, mime_type=mime)
    if isinstance(outcome, str):
        assert outcome
    else:
        assert outcome.has_text


# --- PDF -----------------------------------------------------------------------------------


def test_pdf_keeps_page_boundaries() -> None:
    doc = extract(text=None, content=_pdf(PAGE_ONE, PAGE_TWO), mime_type="application/pdf")
    assert doc.mime_type == PDF
    assert [p.number for p in doc.pages] == [1, 2]
    first, second = doc.pages
    assert first.start == 0
    assert second.start == first.end + 2
    assert second.end == len(doc.text)
    assert doc.text[first.end : second.start] == "\n\n"
    assert " ".join(doc.text[first.start : first.end].split()) == PAGE_ONE
    assert " ".join(doc.text[second.start : second.end].split()) == PAGE_TWO
    assert doc.metadata["page_count"] == 2


def test_pdf_page_numbers_reach_the_chunks(embedder: Any) -> None:
    doc = extract(text=None, content=_pdf(PAGE_ONE, PAGE_TWO), mime_type=None,
                  filename="pleitnota.PDF")  # fmt: skip
    chunks = chunk_document(doc, "memo", embedder, ChunkLimits(model_max=30))
    assert len(chunks) > 2
    assert chunks[0].page_from == 1
    assert chunks[-1].page_to == 2
    for chunk in chunks:
        assert chunk.page_from is not None
        assert chunk.page_to is not None
        assert chunk.page_from <= chunk.page_to
        if "HR 12 maart 2021" in chunk.text:
            assert chunk.page_from == 2
        if "art. 6:162 BW" in chunk.text:
            assert chunk.page_from == 1


def test_scanned_pdf_without_text_layer_is_reported() -> None:
    reason = _reason(text=None, content=_pdf(image_only=True), mime_type="application/pdf")
    assert reason.startswith("no text:")


def test_blank_pdf_is_reported() -> None:
    assert _reason(text=None, content=_pdf(""), mime_type=PDF).startswith("no text:")


def test_pdf_with_user_password_is_reported() -> None:
    data = _pdf(PAGE_ONE, owner_password="owner", user_password="geheim")
    assert _reason(text=None, content=data, mime_type=PDF).startswith("encrypted pdf")


def test_pdf_encrypted_only_against_editing_is_read() -> None:
    doc = extract(text=None, content=_pdf(PAGE_ONE, owner_password="owner"), mime_type=PDF)
    assert "art. 6:162 BW" in " ".join(doc.text.split())
    assert any("encrypted" in w for w in doc.warnings)


@pytest.mark.parametrize("data", [b"%PDF-1.7\nnot really a pdf", b"%PDF-"])
def test_corrupt_pdf_is_reported(data: bytes) -> None:
    assert _reason(text=None, content=data, mime_type=PDF).startswith("corrupt pdf")


def test_truncated_pdf_is_reported() -> None:
    data = _pdf(PAGE_ONE)[:300]
    assert _reason(text=None, content=data, mime_type=PDF).startswith("corrupt pdf")


# --- DOCX ----------------------------------------------------------------------------------


def _docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Pleitnota oppositie EP 1 234 567", level=0)
    document.add_paragraph("Namens opposante wordt het volgende aangevoerd.")
    document.add_heading("Inventiviteit", level=1)
    document.add_heading("Closest prior art", level=2)
    document.add_paragraph("D1 is het meest nabije document. D1 toont een behuizing.")
    document.add_paragraph("")  # empty paragraphs are dropped
    table = document.add_table(rows=3, cols=3)
    cells = [
        ("Kenmerk", "Conclusie 1", "D1"),
        ("1[a]", "Een inrichting omvattende een behuizing", "D1 toont behuizing 2"),
        ("1[b]", "en een afdichtring van EPDM", "niet in D1"),
    ]
    for row, values in zip(table.rows, cells, strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    document.add_heading("Probleem", level=2)
    document.add_paragraph("Het objectieve technische probleem is de afdichting te verbeteren.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_docx_headings_and_table() -> None:
    doc = extract(text=None, content=_docx(), mime_type=DOCX)
    assert doc.title == "Pleitnota oppositie EP 1 234 567"
    lines = doc.text.split("\n")
    assert lines[0] == "# Pleitnota oppositie EP 1 234 567"
    assert "# Inventiviteit" in lines
    assert "## Closest prior art" in lines
    assert "Kenmerk | Conclusie 1 | D1" in lines
    assert "1[a] | Een inrichting omvattende een behuizing | D1 toont behuizing 2" in lines
    # table rows are consecutive lines of one block
    first_row = lines.index("Kenmerk | Conclusie 1 | D1")
    assert lines[first_row + 1].startswith("1[a] |")
    assert doc.text.index("Closest prior art") < doc.text.index("1[a]") < doc.text.index("Probleem")


def test_docx_style_names_come_from_a_table_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """python-docx's Paragraph.style scans every style of the document for the default on
    each call: 350,000 paragraphs (a 92 KB zip) took more than six minutes. The extractor
    reads each paragraph's style id against a table of names built once: the same headings,
    and Paragraph.style is never asked."""
    from docx.text.paragraph import Paragraph

    def scan(_self: object) -> None:
        raise AssertionError("Paragraph.style scans every style")

    content = _docx()  # built with the real property (it sets styles)
    monkeypatch.setattr(Paragraph, "style", property(scan))
    doc = extract(text=None, content=content, mime_type=DOCX)
    assert doc.title == "Pleitnota oppositie EP 1 234 567"
    assert "## Closest prior art" in doc.text.split("\n")


def test_docx_feeds_the_brief_and_claim_chart_chunkers(embedder: Any) -> None:
    doc = extract(text=None, content=_docx(), mime_type=None, filename="oppositie.docx")
    limits = ChunkLimits(model_max=embedder.max_passage_tokens)
    paths = [c.section_path for c in chunk_document(doc, "EPO opposition", embedder, limits)]
    assert "Inventiviteit / Closest prior art" in paths
    assert "Inventiviteit / Probleem" in paths
    claims = chunk_document(doc, "claim chart", embedder, limits)
    assert [c.section_path for c in claims if c.section_path] == [
        "Claim 1 / element [a]",
        "Claim 1 / element [b]",
    ]


def _docx_with_body(paragraphs_xml: str) -> bytes:
    """A python-docx document whose body is replaced by raw WordprocessingML paragraphs."""
    import zipfile

    source = zipfile.ZipFile(io.BytesIO(_docx()))
    namespaces = (
        'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
    )
    body = f"<w:document {namespaces}><w:body>{paragraphs_xml}</w:body></w:document>"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                data = body.encode()
            target.writestr(item, data)
    return out.getvalue()


def test_docx_text_in_wrappers_is_read_and_deleted_text_is_not() -> None:
    """python-docx reads only a paragraph's own runs: the text of tracked insertions, moves,
    smart tags, simple fields, custom XML and inline content controls was dropped without a
    warning (a fuzz of 2026-12-05); tracked changes are everyday material in a law firm."""

    def run(text: str) -> str:
        return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'

    wrapped = {
        "ins": "<w:ins w:id='1' w:author='a'>{}</w:ins>",
        "moveto": "<w:moveTo w:id='2' w:author='a'>{}</w:moveTo>",
        "smarttag": "<w:smartTag w:uri='u' w:element='e'>{}</w:smartTag>",
        "field": "<w:fldSimple w:instr='PAGE'>{}</w:fldSimple>",
        "customxml": "<w:customXml w:element='x'>{}</w:customXml>",
        "control": "<w:sdt><w:sdtContent>{}</w:sdtContent></w:sdt>",
        "nested": "<w:ins w:id='3' w:author='a'><w:smartTag w:uri='u' w:element='e'>"
        "{}</w:smartTag></w:ins>",
    }
    shown = "".join(
        f"<w:p>{run(f'voor-{name} ')}{xml.format(run(f'tekst{name}'))}{run(' na')}</w:p>"
        for name, xml in wrapped.items()
    )
    hidden = (
        "<w:p>"
        + run("zichtbaar ")
        + "<w:del w:id='4' w:author='a'><w:r><w:delText>geschrapt</w:delText></w:r></w:del>"
        + "<w:moveFrom w:id='5' w:author='a'>"
        + run("weggezet")
        + "</w:moveFrom>"
        + "<w:r><w:fldChar w:fldCharType='begin'/></w:r>"
        + "<w:r><w:instrText>HYPERLINK veldcode</w:instrText></w:r>"
        + "<w:r><w:fldChar w:fldCharType='separate'/></w:r>"
        + run("veldresultaat")
        + "<w:r><w:fldChar w:fldCharType='end'/></w:r>"
        + "<mc:AlternateContent><mc:Choice Requires='w14'>"
        + run(" keuze")
        + "</mc:Choice><mc:Fallback>"
        + run("terugval")
        + "</mc:Fallback></mc:AlternateContent>"
        + "<w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:noBreakHyphen/><w:t>c</w:t></w:r>"
        + "</w:p>"
    )
    cell = f"<w:tbl><w:tr><w:tc><w:p><w:ins w:id='6' w:author='a'>{run('celtekst')}</w:ins></w:p></w:tc></w:tr></w:tbl>"
    doc = extract(text=None, content=_docx_with_body(shown + hidden + cell), mime_type=DOCX)
    for name in wrapped:
        assert f"voor-{name} tekst{name} na" in doc.text, name
    assert "zichtbaar veldresultaat keuzea\tb-c" in doc.text
    for gone in ("geschrapt", "weggezet", "veldcode", "terugval"):
        assert gone not in doc.text, gone
    assert "celtekst" in doc.text


def test_docx_content_controls_nested_tables_text_boxes_and_math_are_read() -> None:
    """python-docx's iter_inner_content skips block-level content controls (templates put
    whole sections in them), a cell's text leaves out its nested tables, and text boxes and
    equations were left out too (a review of 2026-12-05)."""

    def para(text: str) -> str:
        return f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"

    math_ns = "http://schemas.openxmlformats.org/officeDocument/2006/math"
    body = (
        para("inleiding")
        + "<w:sdt><w:sdtPr/><w:sdtContent>"
        + para("sectieinhoud")
        + "<w:tbl><w:tr><w:tc>"
        + para("buitencel")
        + "<w:tbl><w:tr><w:tc>"
        + para("binnencel")
        + "</w:tc></w:tr></w:tbl></w:tc>"
        + "<w:sdt><w:sdtContent><w:tc>"
        + para("celincontrole")
        + "</w:tc></w:sdtContent></w:sdt></w:tr></w:tbl>"
        + "</w:sdtContent></w:sdt>"
        + "<w:p><w:r><mc:AlternateContent><mc:Choice Requires='wps'><w:drawing><w:txbxContent>"
        + para("tekstvak")
        + "</w:txbxContent></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent>"
        + para("tekstvak")
        + "</w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
        + f"<m:oMath xmlns:m='{math_ns}'><m:r><m:t>x=2</m:t></m:r></m:oMath></w:p>"
    )
    doc = extract(text=None, content=_docx_with_body(body), mime_type=DOCX)
    for word in ("inleiding", "sectieinhoud", "buitencel", "binnencel", "celincontrole", "x=2"):
        assert word in doc.text, word
    assert doc.text.count("tekstvak") == 1
    assert "buitencel binnencel | celincontrole" in doc.text


def test_corrupt_docx_is_reported() -> None:
    assert _reason(text=None, content=b"PK\x03\x04broken", mime_type=DOCX).startswith(
        "corrupt docx"
    )


# --- HTML ----------------------------------------------------------------------------------

HTML_PAGE = b"""<!DOCTYPE html>
<html><head><title>Uitspraak  Rechtbank</title><style>p { color: red }</style>
<script>var tracking = "geheim";</script></head>
<body>
<!-- commentaar -->
<h1>Vonnis</h1>
<p>De rechtbank
   overweegt als volgt.</p>
<div hidden>verborgen tekst</div>
<h2>2. De feiten</h2>
<p>Eiseres heeft<br>op 1 januari 2020 <b>opgezegd</b>.</p>
<table><tr><th>Datum</th><th>Bedrag</th></tr><tr><td>1-1-2020</td><td>&euro; 5.000</td></tr></table>
<ul><li>eerste punt</li><li>tweede punt</li></ul>
</body></html>"""


def test_html_visible_text_with_headings() -> None:
    doc = extract(text=None, content=HTML_PAGE, mime_type="text/html; charset=utf-8")
    assert doc.mime_type == HTML
    assert doc.title == "Uitspraak Rechtbank"
    assert doc.text == (
        "# Vonnis\n\n"
        "De rechtbank overweegt als volgt.\n\n"
        "## 2. De feiten\n\n"
        "Eiseres heeft\nop 1 januari 2020 opgezegd.\n\n"
        "Datum | Bedrag\n1-1-2020 | € 5.000\n\n"
        "eerste punt\n\n"
        "tweede punt"
    )
    for hidden in ("geheim", "color", "commentaar", "verborgen"):
        assert hidden not in doc.text


@pytest.mark.timeout(600)  # a hang guard, no time bound: the old reader took hours here
def test_html_nested_deeply_is_read_in_one_pass() -> None:
    """Marking blocks by editing the tree (bs4 insert/replace walk the subtree before the
    insertion point) took time quadratic in the nesting depth: 8,000 nested <div> 16 s,
    200,000 hours, which held the one job worker (a fuzz of 2026-12-05). Unclosed inline
    tags nest the same way."""
    depth = 200_000
    text, _ = html_to_text("<div>" * depth + "<h2>Kop</h2>merkwoord" + "</div>" * depth)
    assert text == "## Kop\n\nmerkwoord"
    text, _ = html_to_text("<p>begin</p>" + "<b><i><span>" * 30_000 + "merkwoord")
    assert text == "begin\n\nmerkwoord"


def test_html_ruby_text_and_what_follows_a_stray_rp_are_kept() -> None:
    """bs4 types the strings inside <rt> and <rp> apart; a stray unclosed <rp> made the rest
    of the document such strings, and all of it was left out (a review of 2026-12-05)."""
    text, _ = html_to_text("<p>Intro</p><rp>(<h2>Kop</h2><p>verzuim</p>")
    assert text == "Intro\n\n(\n\n## Kop\n\nverzuim"
    text, _ = html_to_text("<ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby> <!-- c -->")
    assert text == "漢(kan)"


def test_html_without_text_is_reported() -> None:
    reason = _reason(text=None, content=b"<html><script>x()</script></html>", mime_type=HTML)
    assert reason.startswith("no text:")


def test_binary_sent_as_text_is_refused_and_utf16_without_bom_is_read() -> None:
    """Random bytes sent as text/plain were decoded as cp1252 into chunks of garbage with
    no report entry (the ingestion fuzz of 2026-12-05)."""
    import random

    noise = random.Random(7).randbytes(20_000)
    assert _reason(text=None, content=noise, mime_type=TEXT).startswith("binary content")
    chinese = "本合同由双方签订，租赁期限为五年。双方同意以下条款：" * 20
    for written, codec in [
        ("Huurovereenkomst € ontbinding, café", "utf-16-le"),
        ("Huurovereenkomst € ontbinding, café", "utf-16-be"),
        (chinese, "utf-16-le"),  # no zero bytes: told apart from noise by its script
        (chinese, "utf-16-be"),
    ]:
        assert extract(text=None, content=written.encode(codec), mime_type=TEXT).text == written
    # a review: real text was refused as binary
    cut = extract(text=None, content=chinese.encode()[:-1], mime_type=TEXT)
    assert cut.text == chinese[:-1] + "\ufffd"
    log = "\x1b[31mFOUT\x1b[0m verbinding met de server mislukt\n" * 20
    assert (
        "verbinding met de server mislukt"
        in extract(text=None, content=log.encode(), mime_type=TEXT).text
    )


# --- e-mail --------------------------------------------------------------------------------


def _email(*, html_only: bool = False) -> bytes:
    from datetime import UTC, datetime

    msg = EmailMessage()
    msg["From"] = "Mr. A. de Vries <a.devries@kantoor.nl>"
    msg["To"] = "Cliënt B.V. <legal@client.nl>"
    msg["Cc"] = "P. Jansen <p.jansen@kantoor.nl>"
    msg["Subject"] = "Conclusie van antwoord – concept"
    msg["Date"] = format_datetime(datetime(2024, 3, 5, 14, 30, tzinfo=UTC))
    msg["Message-ID"] = make_msgid(domain="kantoor.nl")
    body = "Beste Bert,\n\nHierbij het concept van de conclusie van antwoord.\n\nGroet,\nAnne"
    html = "<p>Beste Bert,</p><p>Hierbij het <b>concept</b> van de conclusie.</p>"
    if html_only:
        msg.set_content(html, subtype="html")
    else:
        msg.set_content(body)
        msg.add_alternative(html, subtype="html")
        msg.add_attachment(b"%PDF-1.4 ...", maintype="application", subtype="pdf",
                           filename="Productie 1 – overeenkomst.pdf")  # fmt: skip
        msg.add_attachment("notities", filename="notities.txt")
    return msg.as_bytes()


def test_email_headers_body_and_attachments() -> None:
    raw = _email()
    doc = extract(text=None, content=raw, mime_type=None, filename="bericht.eml")
    assert doc.mime_type == EML
    meta = doc.metadata["email"]
    assert meta["from"] == '"Mr. A. de Vries" <a.devries@kantoor.nl>'
    assert meta["to"] == '"Cliënt B.V." <legal@client.nl>'
    assert meta["cc"] == '"P. Jansen" <p.jansen@kantoor.nl>'
    assert meta["subject"] == "Conclusie van antwoord – concept"
    assert meta["date"] == "2024-03-05T14:30:00+00:00"
    assert meta["message_id"].endswith("@kantoor.nl>")
    assert meta["attachments"] == ["Productie 1 – overeenkomst.pdf", "notities.txt"]
    assert doc.title == "Conclusie van antwoord – concept"
    lines = doc.text.split("\n")
    assert lines[0] == 'Van: "Mr. A. de Vries" <a.devries@kantoor.nl>'
    assert lines[1] == 'Aan: "Cliënt B.V." <legal@client.nl>'
    assert "Onderwerp: Conclusie van antwoord – concept" in lines
    assert any(line.startswith("Datum: Tue, 05 Mar 2024") for line in lines)
    assert "Hierbij het concept van de conclusie van antwoord." in doc.text
    assert "<b>" not in doc.text
    assert doc.text.count("Hierbij het") == 1  # the HTML alternative is not added twice
    # sniffed from the bytes alone as well
    assert extract(text=None, content=raw, mime_type="application/octet-stream").text == doc.text


def test_email_html_only_body_is_converted() -> None:
    doc = extract(text=None, content=_email(html_only=True), mime_type="message/rfc822")
    assert "Hierbij het concept van de conclusie." in doc.text
    assert "<p>" not in doc.text
    assert doc.metadata["email"]["attachments"] == []


def test_email_forwarded_messages_and_text_attachments_are_read() -> None:
    """A forwarded message's body and a text attachment's text were left out without a
    word, and a broken base64 body was stored garbled without one (the ingestion fuzz of
    2026-12-05). Forwarded messages nest; each is read with its own headers."""
    inner = EmailMessage()
    inner["From"] = "wederpartij@advocaat.nl"
    inner["To"] = "a.devries@kantoor.nl"
    inner["Subject"] = "Schikkingsvoorstel"
    inner.set_content("Wij stellen een schikking van EUR 40.000 voor (merkwoordbinnen).")
    forwarded = EmailMessage()
    forwarded["From"] = "a.devries@kantoor.nl"
    forwarded["Subject"] = "FW: Schikkingsvoorstel"
    forwarded.set_content("Zie het doorgestuurde bericht.")
    forwarded.add_attachment(inner)
    outer = EmailMessage()
    outer["From"] = "p.jansen@kantoor.nl"
    outer["Subject"] = "FW: FW: Schikkingsvoorstel"
    outer.set_content("Ter informatie.")
    outer.add_attachment(forwarded)
    outer.add_attachment("telefoonnotitie merkwoordbijlage", filename="notitie.txt")
    outer.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="p.pdf")
    doc = extract(text=None, content=outer.as_bytes(), mime_type=EML)
    assert doc.text.index("Ter informatie.") < doc.text.index("Zie het doorgestuurde bericht.")
    assert doc.text.index("Zie het doorgestuurde") < doc.text.index("merkwoordbinnen")
    assert "Onderwerp: Schikkingsvoorstel" in doc.text.split("\n")
    assert "Bijlage notitie.txt:\ntelefoonnotitie merkwoordbijlage" in doc.text
    assert any("p.pdf" in w and "not read" in w for w in doc.warnings), doc.warnings

    # a forwarded message its mailer encoded (RFC 2046 forbids it; a review found the base64)
    encoded = base64.encodebytes(inner.as_bytes())
    raw = (
        b"From: a@b.nl\r\nSubject: FW\r\nMIME-Version: 1.0\r\n"
        b"Content-Type: multipart/mixed; boundary=XX\r\n\r\n--XX\r\n"
        b"Content-Type: text/plain\r\n\r\nZie onder.\r\n--XX\r\n"
        b"Content-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        + encoded
        + b"--XX--\r\n"
    )
    doc = extract(text=None, content=raw, mime_type=EML)
    assert "merkwoordbinnen" in doc.text and "Onderwerp: Schikkingsvoorstel" in doc.text
    garbled = raw.replace(encoded, b"@@@ niet base64 @@@\r\n")
    doc = extract(text=None, content=garbled, mime_type=EML)
    assert "Zie onder." in doc.text
    assert any("could not be decoded" in w for w in doc.warnings), doc.warnings

    broken = (
        b"From: a@b.nl\r\nSubject: x\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Transfer-Encoding: base64\r\n\r\nSGFsbG8gd2VyZWxk!!!@@@===\r\n"
    )
    doc = extract(text=None, content=broken, mime_type=EML)
    assert any("invalid base64" in w for w in doc.warnings), doc.warnings


# --- XML -----------------------------------------------------------------------------------

RECHTSPRAAK_XML = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<open-rechtspraak><uitspraak>'
    b"<para>De Hoge Raad verwerpt het beroep.</para></uitspraak></open-rechtspraak>"
)


def _install_parser(
    monkeypatch: pytest.MonkeyPatch, parser: Callable[[bytes], ExtractedDocument]
) -> None:
    """Stand in for the case-law parser, to see which bytes reach it."""
    monkeypatch.setattr(xml_reader, "extract_rechtspraak", parser)


@pytest.mark.parametrize(
    ("mime", "filename", "data"),
    [
        ("application/xml", None, RECHTSPRAAK_XML),
        ("text/xml", None, RECHTSPRAAK_XML),
        (None, "ECLI_NL_HR_2020_1.xml", RECHTSPRAAK_XML),
        ("application/octet-stream", None, b"\n" + RECHTSPRAAK_XML),
    ],
)
def test_rechtspraak_xml_is_dispatched(
    monkeypatch: pytest.MonkeyPatch, mime: str | None, filename: str | None, data: bytes
) -> None:
    seen: list[bytes] = []

    def fake(data: bytes) -> ExtractedDocument:
        seen.append(data)
        return ExtractedDocument(text="De Hoge Raad verwerpt het beroep.", mime_type=XML)

    _install_parser(monkeypatch, fake)
    doc = extract(text=None, content=data, mime_type=mime, filename=filename)
    assert doc.text == "De Hoge Raad verwerpt het beroep."
    assert seen == [data]


def test_real_rechtspraak_record() -> None:
    files = sorted((CORPUS / "xml").glob("*.xml"))
    require(bool(files), "../shared/corpus/rechtspraak/xml")
    doc = extract(text=None, content=files[0].read_bytes(), mime_type=None,
                  filename=files[0].name)  # fmt: skip
    assert doc.has_text


def test_rechtspraak_record_without_body_is_not_an_extraction_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A voided ECLI has no text but status markers the pipeline needs."""

    def metadata_only(data: bytes) -> ExtractedDocument:
        return ExtractedDocument(text="", mime_type=XML, metadata={"ecli": "ECLI:NL:HR:1999:1"})

    _install_parser(monkeypatch, metadata_only)
    doc = extract(text=None, content=RECHTSPRAAK_XML, mime_type="application/xml")
    assert not doc.has_text
    assert doc.metadata == {"ecli": "ECLI:NL:HR:1999:1"}


def test_other_xml_falls_back_to_its_text() -> None:
    data = b"<?xml version='1.0'?><wet><artikel>Artikel 1. Deze wet geldt.</artikel></wet>"
    doc = extract(text=None, content=data, mime_type="application/xml")
    assert doc.text == "Artikel 1. Deze wet geldt."
    assert doc.warnings


def test_xml_entities_are_not_expanded() -> None:
    data = (
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b"<r>tekst &x;</r>"
    )
    doc = extract(text=None, content=data, mime_type="text/xml")
    assert "root:" not in doc.text


# --- dispatch and limits -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "filename", "expected"),
    [
        (b"%PDF-1.7 ...", None, PDF),
        (b"anything", "Dagvaarding.PDF", PDF),
        (b"anything", "notitie.htm", HTML),
        (b"anything", "bericht.eml", EML),
        (b"anything", "uitspraak.xml", XML),
        (b"anything", "memo.txt", TEXT),
        (b"<!DOCTYPE html><html><body>x</body></html>", None, HTML),
        (b"  <HTML><body>x</body></HTML>", None, HTML),
        (b"Received: from mx.kantoor.nl\nFrom: a@b.nl\n\nhoi", None, EML),
        (b"From: a@b.nl\nSubject: x\n\nhoi", "noext", EML),
        (b'<?xml version="1.0"?><open-rechtspraak/>', None, XML),
        (b"<open-rechtspraak></open-rechtspraak>", None, XML),
        (b"Gewone tekst zonder kop.", None, TEXT),
        (b"\x00\x01\x02\x03", None, "application/octet-stream"),
        (bytes(range(1, 9)) * 20, None, "application/octet-stream"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", None, "application/x-ole-storage"),
        (b"anything", "oud.doc", "application/msword"),
    ],
)
def test_sniffing(content: bytes, filename: str | None, expected: str) -> None:
    assert sniff_mime_type(content, filename) == expected


def test_sniffing_docx_by_magic() -> None:
    assert sniff_mime_type(_docx(), None) == DOCX
    assert extract(text=None, content=_docx(), mime_type="application/octet-stream").title


@pytest.mark.parametrize(
    ("content", "mime"),
    [
        (b"\x89PNG\r\n\x1a\n....", "image/png"),
        (b"\x00\x01\x02", None),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", None),
        (b"anything", "application/msword"),
    ],
)
def test_unsupported_types(content: bytes, mime: str | None) -> None:
    assert _reason(text=None, content=content, mime_type=mime).startswith(
        "unsupported content type:"
    )


def test_docx_that_unpacks_too_large_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docx_reader, "MAX_DOCX_UNPACKED_BYTES", 1000)
    assert _reason(text=None, content=_docx(), mime_type=DOCX).startswith("docx too large")


def test_reader_bugs_become_extraction_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(content: bytes) -> ExtractedDocument:
        raise ValueError("boom")

    monkeypatch.setattr(extract_module, "extract_html", broken)
    reason = _reason(text=None, content=HTML_PAGE, mime_type=HTML)
    assert reason == "unreadable text/html: ValueError: boom"


def test_size_guard() -> None:
    big = b"a" * (50 * 1024 * 1024 + 1)
    assert "too large" in _reason(text=None, content=big, mime_type="text/plain")


def test_no_content_and_empty_text() -> None:
    assert _reason(text=None, content=None, mime_type=None).startswith("no content")
    assert _reason(text=" \n\t ", content=None, mime_type=None).startswith("no text:")
    assert _reason(text=None, content=b"", mime_type="text/plain").startswith("no text:")


def test_malformed_rechtspraak_records_are_reported_or_recovered() -> None:
    files = sorted((CORPUS / "malformed").glob("*.xml"))
    require(bool(files), "../shared/corpus/rechtspraak/malformed")
    for path in files:
        outcome = _extract_or_reason(
            text=None, content=path.read_bytes(), mime_type="application/xml"
        )
        assert outcome, path.name  # a document, or a reason for the report


def test_docx_placeholders_are_not_text_and_symbols_are() -> None:
    """A content control that shows its placeholder holds the template's prompt, not the
    document's words; a w:sym holds a real character unless it is a symbol font's glyph."""

    def control(text: str, *, placeholder: bool, block: bool) -> str:
        shown = "<w:showingPlcHdr/>" if placeholder else ""
        inner = (
            f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>" if block else f"<w:r><w:t>{text}</w:t></w:r>"
        )
        return f"<w:sdt><w:sdtPr><w:alias w:val='x'/>{shown}</w:sdtPr><w:sdtContent>{inner}</w:sdtContent></w:sdt>"

    body = (
        "<w:sdt><w:sdtPr><w:showingPlcHdr w:val='0'/></w:sdtPr><w:sdtContent><w:p><w:r>"
        "<w:t>ingevuldmetval</w:t></w:r></w:p></w:sdtContent></w:sdt>"
        "<w:sdt><w:sdtPr><w:showingPlcHdr w:val='false'/></w:sdtPr><w:sdtContent><w:p><w:r>"
        "<w:t>ingevuldfalse</w:t></w:r></w:p></w:sdtContent></w:sdt>"
        + control("Klikoftikblok", placeholder=True, block=True)
        + control("ingevuldblok", placeholder=False, block=True)
        + "<w:p><w:r><w:t xml:space='preserve'>naam: </w:t></w:r>"
        + control("Klikoftikregel", placeholder=True, block=False)
        + control("Jansen", placeholder=False, block=False)
        + "<w:r><w:sym w:font='Times New Roman' w:char='00A7'/><w:t>12</w:t>"
        + "<w:sym w:font='Wingdings' w:char='F0FC'/><w:sym w:font='x' w:char='D800'/>"
        + "<w:sym w:font='x' w:char='zz'/></w:r></w:p>"
        + "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>cel</w:t></w:r></w:p></w:tc>"
        + "<w:sdt><w:sdtPr><w:showingPlcHdr/></w:sdtPr><w:sdtContent><w:tc><w:p><w:r>"
        + "<w:t>Klikoftikcel</w:t></w:r></w:p></w:tc></w:sdtContent></w:sdt></w:tr></w:tbl>"
    )
    doc = extract(text=None, content=_docx_with_body(body), mime_type=DOCX)
    assert "Klikoftik" not in doc.text
    assert "ingevuldblok" in doc.text
    assert "ingevuldmetval" in doc.text and "ingevuldfalse" in doc.text
    assert "naam: Jansen§12" in doc.text
    assert "cel" in doc.text
