"""Chunking per document type, with the real all-MiniLM-L6-v2 tokenizer (never mocked)."""

from __future__ import annotations

import csv
import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.ingest.chunking import chunk_document, normalize_chunk_text, normalize_doc_type
from app.ingest.types import (
    DOC_TYPES,
    ChunkDraft,
    ChunkLimits,
    ExtractedDocument,
    PageSpan,
    Section,
)
from tests.shared_data import require

CASES_CSV = (
    Path(__file__).resolve().parents[3]
    / "shared"
    / "corpus"
    / "rechtspraak_csv"
    / "sample_cases_content.csv"
)


@pytest.fixture(scope="module")
def limits(embedder: Any) -> ChunkLimits:
    return ChunkLimits(model_max=embedder.max_passage_tokens)


def _doc(text: str, pages: list[PageSpan] | None = None) -> ExtractedDocument:
    return ExtractedDocument(text=text, mime_type="text/plain", pages=pages or [])


def _paths(chunks: list[ChunkDraft]) -> list[str]:
    return [c.section_path for c in chunks]


def _assert_valid(chunks: list[ChunkDraft], embedder: Any, cap: int) -> None:
    for chunk in chunks:
        assert chunk.text
        assert chunk.text == normalize_chunk_text(chunk.text)
        assert chunk.token_count == embedder.count_tokens(chunk.text)
        assert chunk.token_count <= cap


def _assert_encoder_sees_all(chunks: list[ChunkDraft], embedder: Any) -> None:
    """The reference is the model itself, not the chunker's own arithmetic: what the encoder
    is given (the passage prompt, the chunk, its special tokens) must fit the model's
    max_seq_length, or the encoder silently truncates the chunk's tail."""
    model = embedder._model  # the SentenceTransformer that embeds the chunks
    limit = int(model.max_seq_length)
    for chunk in chunks:
        given = embedder.passage_prompt + chunk.text
        full = len(model.tokenizer(given, add_special_tokens=True, verbose=False)["input_ids"])
        assert full <= limit, (full, limit, chunk.text[:80])


def _words(text: str) -> list[str]:
    return text.split()


# --- document types ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Pleitnota", "brief"),
        ("pleitnota's", "brief"),
        ("pleading", "brief"),
        ("Dagvaarding", "brief"),
        ("conclusie van antwoord", "brief"),
        ("Conclusie van Repliek", "brief"),
        ("memorie van grieven", "brief"),
        ("EPO opposition", "brief"),
        ("EOV-oppositie", "brief"),
        ("oppositie", "brief"),
        ("brief", "brief"),
        ("getuigenverklaring", "deposition"),
        ("Witness statement", "deposition"),
        ("deposition", "deposition"),
        ("proces-verbaal getuigenverhoor", "deposition"),
        ("deskundigenrapport", "expert_report"),
        ("Expert Report", "expert_report"),
        ("expert_report", "expert_report"),
        ("claim chart", "claim_chart"),
        ("Claim-Chart", "claim_chart"),
        ("infringement chart", "claim_chart"),
        ("uitspraak", "case_law"),
        ("Vonnis", "case_law"),
        ("jurisprudentie", "case_law"),
        ("case law", "case_law"),
        ("conclusie", "case_law"),
        ("Conclusie A-G", "case_law"),
        ("conclusie van de advocaat-generaal", "case_law"),
        ("wet", "statute"),
        ("Statute", "statute"),
        ("verordening", "statute"),
        ("memo", "memo"),
        ("notitie", "memo"),
        ("Memorandum", "memo"),
        ("legal opinion", "memo"),
        ("e-mail", "email"),
        ("E-Mail", "email"),
        ("email", "email"),
        ("contract", "contract"),
        ("overeenkomst", "contract"),
        ("Licentieovereenkomst", "contract"),
        ("NDA", "contract"),
        ("foto", "other"),
        ("", "other"),
        (None, "other"),
        ("  ", "other"),
    ],
)
def test_normalize_doc_type(raw: str | None, expected: str) -> None:
    assert normalize_doc_type(raw) == expected


def test_canonical_doc_types_map_to_themselves() -> None:
    for doc_type in DOC_TYPES:
        assert normalize_doc_type(doc_type) == doc_type


# --- normalisation -------------------------------------------------------------------------


def test_normalize_chunk_text() -> None:
    raw = "  Artikel\t 6:162   BW  \r\n\r\n\r\n\n  cafe\u0301\u00a0 lid 2 \n\n"
    assert normalize_chunk_text(raw) == "Artikel 6:162 BW\n\ncafé lid 2"
    assert normalize_chunk_text(" \n\t ") == ""


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_normalize_chunk_text_is_idempotent(text: str) -> None:
    once = normalize_chunk_text(text)
    assert normalize_chunk_text(once) == once
    assert "\n\n\n" not in once
    assert once == once.strip()


# --- sentences -----------------------------------------------------------------------------

SENTENCES = [
    "Het hof verwijst naar art. 6:162 BW jo. art. 6:98 BW en naar r.o. 3.4 van het vonnis.",
    "Mr. J.A. de Vries stelt namens eiseres o.a. dat de schade e.d. volledig moet worden vergoed.",
    "Zie HR 12 maart 2021, ECLI:NL:HR:2021:123, NJ 2021/45, blz. 12 en p. 7 van de memorie.",
    "Dat is i.c. niet het geval, omdat de EHRM-rechtspraak nr. 5 anders luidt.",
    "Waarom zou de rechtbank daarvan afwijken?",
    "Eiseres heeft € 3.400,50 gevorderd, vermeerderd met de wettelijke rente.",
    "De rechtbank wijst de vordering af!",
    "Prof. dr. ir. A.B. Bakker en dhr. K. Jansen waren ter zitting aanwezig.",
]


def test_sentences_are_not_broken_on_legal_abbreviations(embedder: Any) -> None:
    text = " ".join(SENTENCES * 3)
    limits = ChunkLimits(model_max=64)  # every sentence fits, two rarely do
    chunks = chunk_document(_doc(text), "memo", embedder, limits)
    assert len(chunks) > 6
    _assert_valid(chunks, embedder, 64)
    for chunk in chunks:
        # every chunk is a run of whole sentences
        rest = chunk.text
        while rest:
            match = next((s for s in SENTENCES if rest.startswith(s)), None)
            assert match is not None, chunk.text
            rest = rest[len(match) :].lstrip()


# --- generic -------------------------------------------------------------------------------


def _case_texts(count: int) -> list[str]:
    require(CASES_CSV.exists(), "../shared/corpus/rechtspraak_csv")
    with CASES_CSV.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))[:count]
    return ["\n\n".join(p.strip() for p in row["description"].split("|")) for row in rows]


def test_generic_chunks_overlap_on_sentence_boundaries(embedder: Any, limits: ChunkLimits) -> None:
    text = " ".join(SENTENCES * 12)
    chunks = chunk_document(_doc(text), "memo", embedder, limits)
    assert len(chunks) >= 3
    _assert_valid(chunks, embedder, limits.model_max)
    overlap = round(limits.generic_overlap * limits.scale)
    overlapped = 0
    for before, after in itertools.pairwise(chunks):
        last = next(s for s in SENTENCES if before.text.endswith(s))
        if embedder.count_tokens(last) <= overlap:
            # the next chunk repeats the tail of the previous one, whole sentences only
            first = next(s for s in SENTENCES if after.text.startswith(s))
            shared = before.text[before.text.rindex(" " + first) + 1 :]
            assert after.text.startswith(shared)
            assert embedder.count_tokens(shared) <= overlap
            overlapped += 1
        else:
            assert not after.text.startswith(last)
    assert overlapped >= 2


def test_generic_on_real_case_law_text(embedder: Any, limits: ChunkLimits) -> None:
    for text in _case_texts(5):
        chunks = chunk_document(_doc(text), "other", embedder, limits)
        _assert_valid(chunks, embedder, limits.model_max)
        joined = " ".join(c.text for c in chunks)
        assert set(_words(text)) <= set(_words(joined))


def test_empty_documents_have_no_chunks(embedder: Any, limits: ChunkLimits) -> None:
    for doc_type in DOC_TYPES:
        assert chunk_document(_doc(""), doc_type, embedder, limits) == []
        assert chunk_document(_doc(" \n\n\t "), doc_type, embedder, limits) == []


# --- brief ---------------------------------------------------------------------------------

PLEITNOTA = """PLEITNOTA

in de zaak van Alpha B.V. tegen Beta N.V., zaaknummer C/13/123456.

I. INLEIDING

1. Inleiding
Eiseres vordert schadevergoeding. De rechtbank dient deze vordering af te wijzen.

2. Feiten
2.1 Partijen hebben in 2019 een leveringsovereenkomst gesloten.

2.2 Beta heeft de overeenkomst bij brief van 3 maart 2020 opgezegd.

II. GRONDEN

3.1 Geen tekortkoming
Van een toerekenbare tekortkoming in de zin van art. 6:74 BW is geen sprake.

3.2 Geen schade
Eiseres heeft haar schade niet onderbouwd.

A. Subsidiair: matiging
De rechtbank kan de schadevergoeding op grond van art. 6:109 BW matigen.

CONCLUSIE
Beta verzoekt de rechtbank de vorderingen van Alpha af te wijzen.
"""


def test_brief_section_paths(embedder: Any, limits: ChunkLimits) -> None:
    chunks = chunk_document(_doc(PLEITNOTA), "Pleitnota", embedder, limits)
    _assert_valid(chunks, embedder, limits.model_max)
    assert _paths(chunks) == [
        "PLEITNOTA",
        "I / 1",
        "I / 2",
        "II / 3.1",
        "II / 3.2",
        "II / A",
        "CONCLUSIE",
    ]
    by_path = {c.section_path: c.text for c in chunks}
    # a heading with nothing under it opens the section below it
    assert by_path["I / 1"].startswith("I. INLEIDING\n\n1. Inleiding\nEiseres vordert")
    # numbered sentences are paragraphs, not headings
    assert "2.2 Beta heeft de overeenkomst" in by_path["I / 2"]
    assert by_path["II / 3.2"] == "3.2 Geen schade\nEiseres heeft haar schade niet onderbouwd."


def test_brief_markdown_heading_paths(embedder: Any, limits: ChunkLimits) -> None:
    text = (
        "# Inventiviteit\n\n## Closest prior art\n\nD1 is het meest nabije document.\n\n"
        "## Probleem\n\nHet probleem is de afdichting.\n\n"
        "# Nieuwheid\n\nD2 openbaart kenmerk [c] niet."
    )
    chunks = chunk_document(_doc(text), "EPO opposition", embedder, limits)
    assert _paths(chunks) == [
        "Inventiviteit / Closest prior art",
        "Inventiviteit / Probleem",
        "Nieuwheid",
    ]


def test_brief_roman_numerals_and_letters(embedder: Any, limits: ChunkLimits) -> None:
    romans = ["I", "II", "III", "IV", "V", "VI"]
    text = "\n".join(
        f"{r}. Onderdeel {r}\nTekst.\nA. Eerste punt\nTekst.\nB. Tweede punt\nTekst."
        for r in romans
    )
    paths = _paths(chunk_document(_doc(text), "brief", embedder, limits))
    assert paths == [p for r in romans for p in (r, f"{r} / A", f"{r} / B")]
    letters = "\n".join(f"{chr(65 + i)}. Punt\nTekst {i}." for i in range(12))
    paths = _paths(chunk_document(_doc(letters), "brief", embedder, limits))
    assert paths == [chr(65 + i) for i in range(12)]  # "I." after "H." is a letter


def test_brief_ignores_running_heads(embedder: Any, limits: ChunkLimits) -> None:
    page = "VERTROUWELIJK\n{n}. Punt {n}\nDe gedaagde betwist de vordering."
    text = "\n\n".join(page.format(n=n) for n in range(1, 5))
    chunks = chunk_document(_doc(text), "brief", embedder, limits)
    assert _paths(chunks) == ["", "1", "2", "3", "4"]
    assert chunks[0].text == "VERTROUWELIJK"


def _paragraph(n: int) -> str:
    return (
        f"Alinea {n}. Opposante stelt dat de vakman, uitgaande van D1, zonder inventieve "
        "denkarbeid tot de uitvinding zou komen, omdat D2 dezelfde afdichting beschrijft en "
        "de combinatie voor de hand ligt. Octrooihoudster betwist dit met verwijzing naar "
        "de beschrijving."
    )


def test_long_brief_section_splits_on_paragraphs(embedder: Any, limits: ChunkLimits) -> None:
    paragraphs = [_paragraph(n) for n in range(1, 13)]
    text = "II. GRONDEN\n\n3.2 Inventiviteit\n\n" + "\n\n".join(paragraphs)
    chunks = chunk_document(_doc(text), "brief", embedder, limits)
    assert len(chunks) > 2
    assert set(_paths(chunks)) == {"II / 3.2"}
    _assert_valid(chunks, embedder, limits.model_max)
    body = "\n\n".join(c.text for c in chunks)
    for chunk in chunks:
        parts = chunk.text.split("\n\n")
        assert all(p in paragraphs or p in {"II. GRONDEN", "3.2 Inventiviteit"} for p in parts)
    assert all(p in body for p in paragraphs)


def test_brief_sizes_follow_the_model_cap(embedder: Any) -> None:
    """The 800-token design size applies only as far as the model allows."""
    text = "1. Feiten\n\n" + "\n\n".join(_paragraph(n) for n in range(1, 5))
    total = embedder.count_tokens(text)
    assert 300 < total < 500
    small = chunk_document(_doc(text), "brief", embedder, ChunkLimits(model_max=254))
    large = chunk_document(_doc(text), "brief", embedder, ChunkLimits(model_max=510))
    assert len(small) == 2
    assert len(large) == 1
    assert large[0].token_count == total


# --- deposition ----------------------------------------------------------------------------

VERHOOR = """Proces-verbaal van het getuigenverhoor van de heer K. Jansen, gehouden op 4 mei 2023.

V: Wat is uw functie bij Alpha?
A: Ik ben sinds 2015 hoofd inkoop bij Alpha B.V. en verantwoordelijk voor alle contracten.
V: Wanneer hoorde u voor het eerst van de opzegging?
A: Op 3 maart 2020, tijdens een vergadering met de directie.
Dat was ook de dag waarop de brief binnenkwam.
V: Wie was daarbij aanwezig?
A: De heer Pietersen en mevrouw De Groot.
"""


def test_deposition_question_answer_pairs(embedder: Any, limits: ChunkLimits) -> None:
    chunks = chunk_document(_doc(VERHOOR), "getuigenverklaring", embedder, limits)
    _assert_valid(chunks, embedder, limits.model_max)
    assert _paths(chunks) == ["", "Q 1", "Q 2", "Q 3"]
    q2 = chunks[2].text
    assert q2.endswith(
        "V: Wanneer hoorde u voor het eerst van de opzegging?\n"
        "A: Op 3 maart 2020, tijdens een vergadering met de directie.\n"
        "Dat was ook de dag waarop de brief binnenkwam."
    )
    # preceded by the end of the previous answer as context
    assert "verantwoordelijk voor alle contracten.\nV: Wanneer" in q2
    window = round(limits.deposition_context * limits.scale)
    context = q2[: q2.index("V: Wanneer")]
    assert embedder.count_tokens(context) <= window


def test_deposition_context_is_a_bounded_sliding_window(embedder: Any) -> None:
    answer = "A: " + " ".join(["Ik weet het niet meer precies, het is lang geleden."] * 20)
    text = "\n".join(f"V: Vraag nummer {n}?\n{answer}" for n in range(1, 5))
    limits = ChunkLimits(model_max=512)
    window = round(limits.deposition_context * limits.scale)
    chunks = chunk_document(_doc(text), "deposition", embedder, limits)
    assert _paths(chunks) == ["Q 1", "Q 2", "Q 3", "Q 4"]
    for chunk in chunks[1:]:
        context = chunk.text[: chunk.text.index("V: Vraag nummer")]
        assert context
        assert embedder.count_tokens(context) <= window
        assert chunk.token_count <= limits.model_max


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Vraag 12: Kent u D1?\nAntwoord: Ja.\nVraag 13: Sinds wanneer?\nAntwoord: 2019.",
         ["Q 12", "Q 13"]),
        ("Q: Did you sign the agreement?\nA: Yes.\nQ. When?\nA. In May 2019.", ["Q 1", "Q 2"]),
        ("1. Kent u het octrooi?\nJa, sinds 2019.\n2. Heeft u D1 gelezen?\nNee.",
         ["Q 1", "Q 2"]),
    ],
)  # fmt: skip
def test_deposition_question_styles(
    embedder: Any, limits: ChunkLimits, text: str, expected: list[str]
) -> None:
    assert _paths(chunk_document(_doc(text), "deposition", embedder, limits)) == expected


def test_witness_statement_without_questions_uses_numbered_paragraphs(
    embedder: Any, limits: ChunkLimits
) -> None:
    text = (
        "Schriftelijke getuigenverklaring van mevrouw De Groot\n\n"
        "1. Ik werk sinds 2010 bij Beta N.V. als jurist.\n\n"
        "2. Op 3 maart 2020 heb ik de opzeggingsbrief opgesteld.\n\n"
        "3. Ik verklaar dit naar waarheid."
    )
    chunks = chunk_document(_doc(text), "witness statement", embedder, limits)
    assert _paths(chunks) == ["", "¶ 1", "¶ 2", "¶ 3"]


# --- expert report -------------------------------------------------------------------------

RAPPORT = """Deskundigenrapport van prof. dr. ir. A. Bakker inzake EP 1 234 567

1. Inleiding
1.1 Ik ben door de rechtbank benoemd om te rapporteren over de inventiviteit.
1.2 Mijn achtergrond is werktuigbouwkunde; ik ben sinds 1998 hoogleraar.
2. Analyse
2.1 D1 toont een behuizing met een afdichtring.
2.1.1 De afdichtring van D1 is van rubber, niet van EPDM.
(3) De vakman zou EPDM kiezen vanwege de temperatuurbestendigheid.
[0004] Dit is de conclusie van het rapport.
"""


def test_expert_report_numbered_paragraphs(embedder: Any, limits: ChunkLimits) -> None:
    chunks = chunk_document(_doc(RAPPORT), "deskundigenrapport", embedder, limits)
    _assert_valid(chunks, embedder, limits.model_max)
    assert _paths(chunks) == ["", "¶ 1.1", "¶ 1.2", "¶ 2.1", "¶ 2.1.1", "¶ 3", "¶ 4"]
    assert chunks[1].text.startswith("1. Inleiding\n1.1 Ik ben")


def test_long_expert_paragraph_splits_on_sentences(embedder: Any, limits: ChunkLimits) -> None:
    sentences = [s for s in SENTENCES if "?" not in s] * 6
    text = "4.2 " + " ".join(sentences) + "\n4.3 Kort."
    chunks = chunk_document(_doc(text), "expert report", embedder, limits)
    assert _paths(chunks)[-1] == "¶ 4.3"
    long_parts = [c for c in chunks if c.section_path == "¶ 4.2"]
    assert len(long_parts) >= 2
    for chunk in long_parts[1:]:
        assert any(chunk.text.startswith(s) for s in sentences)


# --- claim chart ---------------------------------------------------------------------------

CLAIM_CHART = """Claim chart EP 1 234 567 B1 tegen D1 (US 2010/0123456)

Deze tabel vergelijkt de kenmerken van de conclusies met D1.

Kenmerk | Conclusie | D1
1[pre] | Een inrichting voor het afdichten van een leiding | D1 toont een afdichting (fig. 1).
1[a] | omvattende een behuizing | D1, par. [0012]: behuizing 2.
1[b] | en een afdichtring van EPDM | D1 noemt rubber, niet EPDM.
7[b] | waarbij de ring elastisch is | D1, p. 4, r. 10-12.
| 8.1 | werkwijze volgens conclusie 7 | niet geopenbaard |

Conclusie 9(c) waarbij de ring is verlijmd
met de behuizing; D1 zwijgt hierover.
"""


def test_claim_chart_rows(embedder: Any, limits: ChunkLimits) -> None:
    chunks = chunk_document(_doc(CLAIM_CHART), "claim chart", embedder, limits)
    _assert_valid(chunks, embedder, limits.model_max)
    assert _paths(chunks) == [
        "",
        "Claim 1 / element [pre]",
        "Claim 1 / element [a]",
        "Claim 1 / element [b]",
        "Claim 7 / element [b]",
        "Claim 8 / element [1]",
        "Claim 9 / element [c]",
    ]
    assert chunks[0].text.endswith("Kenmerk | Conclusie | D1")
    assert chunks[3].text == "1[b] | en een afdichtring van EPDM | D1 noemt rubber, niet EPDM."
    assert chunks[-1].text.endswith("D1 zwijgt hierover.")


def test_claim_chart_with_element_column(embedder: Any, limits: ChunkLimits) -> None:
    text = (
        "Conclusie | Kenmerk | Tekst | D1\n"
        "1 | [a] | een behuizing | behuizing 2\n"
        "1 | b | een afdichtring | ring 3\n"
        "2 | | werkwijze | niet geopenbaard"
    )
    chunks = chunk_document(_doc(text), "claim chart", embedder, limits)
    assert _paths(chunks) == ["", "Claim 1 / element [a]", "Claim 1 / element [b]", "Claim 2"]


def test_long_claim_row_continuations_keep_the_label(embedder: Any, limits: ChunkLimits) -> None:
    analysis = " ".join(SENTENCES[:4] * 5)
    text = f"3[c] | waarbij de afdichtring verlijmd is | {analysis}"
    chunks = chunk_document(_doc(text), "claim_chart", embedder, limits)
    assert len(chunks) >= 2
    assert set(_paths(chunks)) == {"Claim 3 / element [c]"}
    assert all(c.text.startswith("3[c] |") for c in chunks)
    _assert_valid(chunks, embedder, limits.model_max)


# --- case law ------------------------------------------------------------------------------


def test_case_law_sections(embedder: Any, limits: ChunkLimits) -> None:
    long_text = "\n\n".join(_paragraph(n) for n in range(1, 8))
    doc = ExtractedDocument(
        text="",
        mime_type="application/xml",
        sections=[
            Section(title="Procesverloop", text="Bij dagvaarding heeft eiseres gevorderd."),
            Section(title="De beoordeling", text=long_text, path="uitspraak / 4"),
            Section(title="Leeg", text="  "),
            Section(title="Beslissing", text="De Hoge Raad verwerpt het beroep."),
        ],
    )
    chunks = chunk_document(doc, "uitspraak", embedder, limits)
    _assert_valid(chunks, embedder, limits.model_max)
    paths = _paths(chunks)
    assert paths[0] == "Procesverloop"
    assert paths[-1] == "Beslissing"
    assert paths.count("uitspraak / 4") >= 2
    for chunk in chunks:
        if chunk.section_path == "uitspraak / 4":
            # split on paragraph boundaries only
            assert chunk.text.startswith("Alinea ")
            assert chunk.text.endswith("beschrijving.")
        assert chunk.page_from is None


def test_case_law_without_sections_groups_paragraphs(embedder: Any, limits: ChunkLimits) -> None:
    for text in _case_texts(8):
        paragraphs = [normalize_chunk_text(p) for p in text.split("\n\n") if p.strip()]
        chunks = chunk_document(_doc(text), "jurisprudentie", embedder, limits)
        _assert_valid(chunks, embedder, limits.model_max)
        for chunk in chunks:
            if chunk.token_count < limits.model_max // 2:
                continue
            for part in chunk.text.split("\n\n"):
                fits = embedder.count_tokens(part) <= limits.model_max
                # whole paragraphs, unless a paragraph is too long to fit
                assert (
                    part in paragraphs
                    or not fits
                    or any(
                        embedder.count_tokens(p) > limits.model_max and part in p
                        for p in paragraphs
                    )
                )
        joined = " ".join(c.text for c in chunks)
        assert _words(joined) == _words(text)


# --- pages ---------------------------------------------------------------------------------


def test_page_numbers_from_offsets(embedder: Any) -> None:
    pages_text = [
        "1. De eiser stelt dat de levering te laat was. " * 3,
        "2. De gedaagde betwist dat. " * 6 + "\n\n3. De rechtbank oordeelt als volgt.",
        "4. De vordering wordt afgewezen. " * 4,
    ]
    text, spans, offset = "", [], 0
    for number, page in enumerate(pages_text, start=1):
        if number > 1:
            text += "\n\n"
            offset += 2
        text += page
        spans.append(PageSpan(number=number, start=offset, end=offset + len(page)))
        offset += len(page)
    doc = _doc(text, spans)
    limits = ChunkLimits(model_max=40)
    for doc_type in ("memo", "expert_report", "brief", "case_law"):
        chunks = chunk_document(doc, doc_type, embedder, limits)
        for chunk in chunks:
            assert chunk.page_from is not None
            assert chunk.page_to is not None
            assert 1 <= chunk.page_from <= chunk.page_to <= 3
            expected = {n for n, p in enumerate(pages_text, 1) if chunk.text[:25] in p}
            assert chunk.page_from in expected, (doc_type, chunk)
        assert chunks[0].page_from == 1
        assert chunks[-1].page_to == 3
    by_para = chunk_document(doc, "expert_report", embedder, ChunkLimits(model_max=254))
    spanning = [c for c in by_para if c.section_path == "¶ 1"]
    assert spanning
    assert spanning[0].page_from == 1
    assert spanning[0].page_to == 1
    assert [c.page_from for c in by_para if c.section_path == "¶ 3"] == [2]


# --- token cap -----------------------------------------------------------------------------

# fmt: off
VOCAB = [
    "de", "het", "een", "rechtbank", "hof", "eiseres", "gedaagde", "overeenkomst",
    "schadevergoeding", "aansprakelijkheid", "onrechtmatig", "art.", "jo.", "r.o.", "o.a.",
    "nr.", "blz.", "p.", "mr.", "e.d.", "i.c.", "HR", "EHRM", "3.4", "6:162", "BW", "octrooi",
    "conclusie", "inventiviteit", "nieuwheid", "EPDM", "behuizing", "afdichtring",
]
# fmt: on


@pytest.mark.parametrize("doc_type", DOC_TYPES)
def test_3000_word_paragraph_is_capped_and_complete(
    embedder: Any, limits: ChunkLimits, doc_type: str
) -> None:
    words = [VOCAB[(i * 7 + i // 13) % len(VOCAB)] for i in range(3000)]
    text = " ".join(words)
    chunks = chunk_document(_doc(text), doc_type, embedder, limits)
    _assert_valid(chunks, embedder, limits.model_max)
    _assert_encoder_sees_all(chunks, embedder)
    assert len(chunks) >= embedder.count_tokens(text) // limits.model_max
    if doc_type not in {"other", "memo", "email", "statute", "contract"}:
        assert _words(" ".join(c.text for c in chunks)) == words  # nothing lost or repeated


def test_unbreakable_token_runs_are_capped(embedder: Any, limits: ChunkLimits) -> None:
    blob = "x9Qz" * 2500  # a pasted hash or base64 block without spaces
    text = f"1. Bijlage\n{blob}\n2. Einde."
    for doc_type in DOC_TYPES:
        chunks = chunk_document(_doc(text), doc_type, embedder, limits)
        _assert_valid(chunks, embedder, limits.model_max)
        _assert_encoder_sees_all(chunks, embedder)
        assert "".join(c.text for c in chunks).count("x9Qz") >= 2400


# --- properties ----------------------------------------------------------------------------

# fmt: off
TOKENS = st.sampled_from([
    *VOCAB, "V:", "A:", "Vraag", "Antwoord:", "Q.", "1[a]", "7[b]", "|", "#", "##", "II.", "A.",
    "1.", "2.3", "(4)", "[0012]", "?", ".", "!", "CONCLUSIE", "FEITEN", "€ 5.000,-", "é", "ë",
    "\t", "—", "…", "'s-Gravenhage", "x9Qz" * 40,
])
# fmt: on
LINES = st.lists(TOKENS, max_size=25).map(" ".join)
STRUCTURED = st.lists(
    st.tuples(LINES, st.sampled_from(["\n", "\n", "\n\n", " "])), max_size=30
).map(lambda parts: "".join(line + sep for line, sep in parts))
TEXTS = st.one_of(STRUCTURED, st.text(max_size=600))


@st.composite
def documents(draw: st.DrawFn) -> ExtractedDocument:
    text = draw(TEXTS)
    pages: list[PageSpan] = []
    if text and draw(st.booleans()):
        cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=4))))
        bounds = [0, *cuts, len(text)]
        pages = [
            PageSpan(number=n, start=a, end=b)
            for n, (a, b) in enumerate(itertools.pairwise(bounds), start=1)
        ]
    sections = []
    if draw(st.integers(0, 4)) == 0:
        sections = [
            Section(title=draw(LINES), text=draw(TEXTS), path=draw(st.sampled_from(["", "3.1"])))
            for _ in range(draw(st.integers(1, 3)))
        ]
    return ExtractedDocument(text=text, mime_type="text/plain", pages=pages, sections=sections)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    doc=documents(),
    doc_type=st.sampled_from([*DOC_TYPES, "pleitnota", "getuigenverklaring", "onbekend"]),
    model_max=st.sampled_from([16, 40, 254, 510]),
)
def test_chunking_is_deterministic_and_capped(
    embedder: Any, doc: ExtractedDocument, doc_type: str, model_max: int
) -> None:
    limits = ChunkLimits(model_max=model_max)
    first = chunk_document(doc, doc_type, embedder, limits)
    second = chunk_document(doc, doc_type, embedder, limits)
    assert first == second
    _assert_valid(first, embedder, model_max)
    page_numbers = {p.number for p in doc.pages}
    for chunk in first:
        assert re.search(r"\S", chunk.text)
        if chunk.page_from is not None:
            assert chunk.page_to is not None
            assert chunk.page_from <= chunk.page_to
            assert {chunk.page_from, chunk.page_to} <= page_numbers
    if not doc.has_text:
        assert first == []
    if not doc.sections and all(len(word) < 40 for word in doc.text.split()):
        # nothing is lost: every word of the document is in some chunk
        covered = {word for chunk in first for word in chunk.text.split()}
        assert set(normalize_chunk_text(doc.text).split()) <= covered


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    doc=documents(),
    doc_type=st.sampled_from([*DOC_TYPES, "pleitnota", "getuigenverklaring", "onbekend"]),
)
def test_no_chunk_is_truncated_by_the_encoder(
    embedder: Any, limits: ChunkLimits, doc: ExtractedDocument, doc_type: str
) -> None:
    """With the limits production uses for this model, every chunk reaches the encoder whole
    (checked against the model's own tokenizer and max_seq_length)."""
    _assert_encoder_sees_all(chunk_document(doc, doc_type, embedder, limits), embedder)
