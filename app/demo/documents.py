"""The demo firm's own documents, generated deterministically in Dutch.

Every matter has a dossier (facts, question, analysis, articles) written for it in
``app/demo/data/firm/dossiers.toml``, next to the contacts, expert reports, hearings, draft
agreements, claim charts and productions. Templates per document kind turn a dossier into
the memo, the court or objection brief, the e-mail to the client and, where the matter calls
for them, a claim chart, an expert report, a witness statement or a draft agreement.
The templates follow the shapes the chunkers
recognise (``app.ingest.chunking``): claim-chart rows ``1[a] | ...`` and ``1 | [a] | ...``,
Markdown and numbered brief headings, ``V:``/``A:`` and ``Vraag 1:`` transcripts, numbered
expert paragraphs, RFC 822 e-mails, so one demo load runs every chunker path.

Nothing here is random: the same code yields byte-identical documents, so a second load
finds every chunk already stored (content-addressed ids) and changes nothing.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from importlib.resources import files
from typing import Any, TypeVar

from app.demo.firm import (
    CONFLICTS_PARTNER,
    FIRM_NAME,
    MATTERS,
    DemoMatter,
    client,
    person,
)
from connectors.base import SourceAcl, SourceDocument

SOURCE = "imanage"
LIBRARY = "ACTIVE"
# Documents are dated relative to this day, so their texts ("vóór 15 december 2026") and
# their dates agree. Fixed, not today: the documents must not change between loads.
DEMO_TODAY = date(2026, 11, 23)

_R = TypeVar("_R")


@dataclass(frozen=True)
class Contact:
    name: str
    salutation: str  # "Geachte mevrouw Koster,"
    function: str
    email: str


@dataclass(frozen=True)
class Dossier:
    facts: tuple[str, ...]  # sentences
    question: str
    analysis: tuple[str, ...]  # paragraphs; the first words up to the period are a label
    articles: tuple[str, ...]
    amount: str
    next_step: str
    counsel: str = ""  # the other side's lawyer
    forum: str = ""  # court or authority
    brief: str = ""  # the DMS document type of the main brief, "" when there is none
    markdown_brief: bool = False  # Markdown headings (as exported from Word) vs numbered


@dataclass(frozen=True)
class ExpertReport:
    expert: str
    discipline: str
    assignment: str
    investigation: tuple[str, ...]
    findings: tuple[str, ...]
    conclusions: tuple[str, ...]


@dataclass(frozen=True)
class Hearing:
    witness: str
    capacity: str
    place: str
    pairs: tuple[tuple[str, str], ...]  # (question, answer)
    numbered: bool = False  # "Vraag 1:" / "Antwoord:" instead of "V:" / "A:"


@dataclass(frozen=True)
class Agreement:
    title: str
    parties: tuple[str, str]
    recitals: tuple[str, ...]
    clauses: tuple[tuple[str, str], ...]  # (heading, text)


# --- the prose, from app/demo/data/firm/*.toml ---------------------------------------------


def _data(name: str) -> dict[str, Any]:
    raw = files("app.demo").joinpath("data", "firm", name).read_text(encoding="utf-8")
    return tomllib.loads(raw)


def _tuples(value: Any) -> Any:
    """TOML arrays as the tuples the records hold (nested for pairs and chart rows)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _records(name: str, record: Callable[..., _R]) -> dict[str, _R]:
    return {
        key: record(**{k: _tuples(v) for k, v in fields.items()})
        for key, fields in _data(name).items()
    }


CONTACTS: dict[str, Contact] = _records("contacts.toml", Contact)
DOSSIERS: dict[str, Dossier] = _records("dossiers.toml", Dossier)
EXPERT_REPORTS: dict[str, ExpertReport] = _records("expert_reports.toml", ExpertReport)
HEARINGS: dict[str, Hearing] = _records("hearings.toml", Hearing)
AGREEMENTS: dict[str, Agreement] = _records("agreements.toml", Agreement)
_CHARTS = _data("claim_charts.toml")
# infringement chart: element, claim language, the accused product, our assessment
MEDIVERS_CHART: tuple[tuple[str, str, str, str], ...] = _tuples(_CHARTS["medivers"])
# invalidity chart with the element in its own column: claim, element, feature, D1, D2
HELDERGLAS_CHART: tuple[tuple[str, str, str, str, str], ...] = _tuples(_CHARTS["helderglas"])
# case law filed into matters as productions: (matter, ECLI, title)
EXHIBITS: tuple[tuple[str, str, str], ...] = tuple(
    (e["matter_id"], e["ecli"], e["title"]) for e in _data("exhibits.toml")["exhibit"]
)

# --- helpers ------------------------------------------------------------------------------


def short_name(person_id: str) -> str:
    """'Lotte Dekker' -> 'mr. L. Dekker' (the paralegal carries no title)."""
    who = person(person_id)
    first, _, rest = who.name.partition(" ")
    title = "" if who.role == "paralegal" else "mr. "
    return f"{title}{first[0]}. {rest}"


def _at(day: date, hour: int = 10) -> datetime:
    return datetime(day.year, day.month, day.day, hour, 0, tzinfo=UTC)


def _document_day(m: DemoMatter, days_before_today: int) -> date:
    """A date between the matter's opening and DEMO_TODAY (closed matters: soon after opening)."""
    if m.status == "closed":
        return m.opened + timedelta(days=30 + (60 - days_before_today) // 2)
    day = DEMO_TODAY - timedelta(days=days_before_today)
    return max(day, m.opened + timedelta(days=1))


def _external_id(matter_id: str, number: int) -> str:
    return f"{LIBRARY}!{matter_id}.{number:02d}"


def _sentences_as_paragraphs(prefix: str, sentences: tuple[str, ...]) -> list[str]:
    return [f"{prefix}.{i} {s}" for i, s in enumerate(sentences, start=1)]


def _label_and_body(paragraph: str) -> tuple[str, str]:
    """'Tekortkoming. Thermtec ...' -> ('Tekortkoming', 'Thermtec ...')."""
    label, _, body = paragraph.partition(". ")
    return label, body


def _adverse_names(m: DemoMatter) -> list[str]:
    return [p.name for p in m.parties if p.role == "adverse"]


def _articles_sentence(d: Dossier) -> str:
    if not d.articles:
        return ""
    if len(d.articles) == 1:
        return f"Het juridisch kader wordt bepaald door {d.articles[0]}."
    return (
        "Het juridisch kader wordt bepaald door "
        + ", ".join(d.articles[:-1])
        + f" en {d.articles[-1]}."
    )


# --- templates ----------------------------------------------------------------------------


def _addressees(m: DemoMatter) -> str:
    others = [short_name(p) for p in m.team[1:]]
    return f"dossierteam {m.matter_id} ({', '.join(others)})" if others else "dossier"


def _memo(m: DemoMatter, d: Dossier) -> str:
    client_name = client(m.client_id).name
    lines = [
        "MEMO – VERTROUWELIJK, GEHEIMHOUDINGSPLICHT ADVOCAAT",
        "",
        f"Aan: {_addressees(m)}",
        f"Van: {short_name(m.team[0])}",
        f"Cliënt: {client_name}",
        f"Dossier: {m.matter_id} – {m.title}",
        f"Rechtsgebied: {m.practice_area}",
        "",
        "1. Feiten",
        "",
        " ".join(d.facts),
        "",
        "2. Vraagstelling",
        "",
        d.question,
        "",
        "3. Juridisch kader",
        "",
        _articles_sentence(d),
        "",
        "4. Analyse",
        "",
    ]
    for paragraph in d.analysis:
        lines += [paragraph, ""]
    lines += ["5. Conclusie en vervolg", ""]
    conclusion = d.next_step
    if d.amount:
        conclusion = f"Financieel belang: {d.amount}. {conclusion}"
    lines.append(conclusion)
    return "\n".join(lines).strip() + "\n"


# Sentences of a dossier's analysis that speak to the client ("wij adviseren", "het risico
# is") belong in the memo, not in a pleading; _pleading_text leaves them out of the brief.
_ADVICE_RE = re.compile(r"\b(?:wij|ons|onze|risico|adviseren|achten)\b", re.IGNORECASE)
# Where ". " does not end a sentence: titles and legal abbreviations before a capital.
_NO_SPLIT_RE = re.compile(r"(?:\b(?:ir|prof|mr|dr|art|jo|nr|mw|A-G)\.)$")


def _sentences(paragraph: str) -> list[str]:
    out: list[str] = []
    start = 0
    for match in re.finditer(r"[.?!] (?=[A-Z'\"(])", paragraph):
        candidate = paragraph[start : match.start() + 1]
        if _NO_SPLIT_RE.search(candidate):
            continue
        out.append(candidate.strip())
        start = match.end()
    out.append(paragraph[start:].strip())
    return [s for s in out if s]


def _pleading_text(paragraph: str) -> str:
    return " ".join(s for s in _sentences(paragraph) if not _ADVICE_RE.search(s))


def _request(m: DemoMatter, d: Dossier) -> str:
    forum = d.forum or "de bevoegde instantie"
    if m.practice_area == "bestuursrecht":
        return (
            f"Op grond van het voorgaande verzoekt cliënte {forum} te beslissen "
            "overeenkomstig haar standpunt."
        )
    return (
        f"Cliënte biedt bewijs aan van al haar stellingen, in het bijzonder met de "
        f"producties en door het horen van getuigen. Op grond van het voorgaande verzoekt "
        f"cliënte {forum} te beslissen overeenkomstig haar standpunt, met veroordeling "
        f"van de wederpartij in de proceskosten."
    )


def _brief(m: DemoMatter, d: Dossier) -> str:
    client_name = client(m.client_id).name
    adverse = _adverse_names(m) or ["de wederpartij"]
    counsel = d.counsel or "nog onbekend"
    parties = [
        f"inzake: {client_name}, advocaat {short_name(m.team[0])} ({FIRM_NAME})",
        "",
        f"tegen: {', '.join(adverse)}, advocaat {counsel}",
        "",
    ]
    if d.forum:
        parties += [f"Gericht aan {d.forum}.", ""]
    sections: list[tuple[str, list[str]]] = [
        (
            "Inleiding",
            [
                f"{client_name} (hierna: cliënte) legt in dit processtuk haar standpunt voor. "
                f"Kern van het geschil: {d.question[0].lower()}{d.question[1:]}",
            ],
        ),
        ("Feiten", list(d.facts)),
        ("Juridisch kader", [_articles_sentence(d)] if d.articles else []),
    ]
    grounds = [
        (label, body)
        for label, body in (_label_and_body(p) for p in d.analysis)
        if _pleading_text(body)
    ]
    grounds = [(label, _pleading_text(body)) for label, body in grounds]
    closing = _request(m, d)
    if d.markdown_brief:
        # A pleading exported from Word with heading styles: Markdown headings.
        out = [f"# {d.brief}", "", *parties]
        for number, (title, paragraphs) in enumerate(sections, start=1):
            out += [f"## {number}. {title}", ""]
            out += [p + "\n" for p in paragraphs]
        out += [f"## {len(sections) + 1}. Beoordeling", ""]
        for sub, (label, body) in enumerate(grounds, start=1):
            out += [f"### {len(sections) + 1}.{sub} {label}", "", body, ""]
        out += [f"## {len(sections) + 2}. Conclusie", "", closing, ""]
        return "\n".join(out).strip() + "\n"
    # A typed pleading: numbered headings over numbered paragraphs (1., 2.1, ...).
    out = [d.brief.upper(), "", *parties]
    for number, (title, paragraphs) in enumerate(sections, start=1):
        out += [f"{number}. {title}", ""]
        out += [f"{number}.{i} {p}" for i, p in enumerate(paragraphs, start=1)]
        out.append("")
    base = len(sections) + 1
    out += [f"{base}. Standpunt van cliënte", ""]
    for sub, (label, body) in enumerate(grounds, start=1):
        out += [f"{base}.{sub} {label}", "", body, ""]
    out += [f"{base + 1}. Conclusie", "", f"{base + 1}.1 {closing}", ""]
    return "\n".join(out).strip() + "\n"


def _email(m: DemoMatter, d: Dossier, sent: datetime, number: int) -> bytes:
    contact = CONTACTS[m.client_id]
    author = m.team[0]
    msg = EmailMessage()
    msg["From"] = f"{person(author).name} <{author}>"
    msg["To"] = f"{contact.name} <{contact.email}>"
    if len(m.team) > 1:
        msg["Cc"] = ", ".join(f"{person(p).name} <{p}>" for p in m.team[1:])
    msg["Subject"] = f"{m.matter_id} – {m.title}: stand van zaken"
    msg["Date"] = format_datetime(sent)
    # Fixed Message-ID: the default one carries the host name and a random part.
    msg["Message-ID"] = f"<{m.matter_id.lower()}.{number}@firm.nl>"
    body = [
        contact.salutation,
        "",
        f"Hierbij praat ik u kort bij over het dossier {m.title}.",
        "",
        " ".join(d.facts[:2]),
        "",
        f"De vraag die nu voorligt: {d.question[0].lower()}{d.question[1:]}",
        "",
        "Onze voorlopige inschatting is als volgt. " + _label_and_body(d.analysis[0])[1],
        "",
        d.next_step,
    ]
    if d.amount:
        body += ["", f"Financieel belang: {d.amount}."]
    body += [
        "",
        "Uiteraard bespreek ik dit graag telefonisch met u.",
        "",
        "Met vriendelijke groet,",
        "",
        short_name(author),
        FIRM_NAME,
        "",
        "Dit bericht is uitsluitend bestemd voor de geadresseerde en kan vertrouwelijke of "
        "door het verschoningsrecht beschermde informatie bevatten.",
    ]
    msg.set_content("\n".join(body))
    return bytes(msg)


def _deal_email(m: DemoMatter, sent: datetime) -> bytes:
    """Project Tulp: an internal deal e-mail with the draft SPA attached."""
    msg = EmailMessage()
    msg["From"] = "Thijs Visser <tvisser@firm.nl>"
    msg["To"] = "Sander Jansen <sjansen@firm.nl>"
    msg["Subject"] = "Project Tulp – koopprijs, earn-out en concept SPA v3"
    msg["Date"] = format_datetime(sent)
    msg["Message-ID"] = f"<{m.matter_id.lower()}.tulp-spa-v3@firm.nl>"
    msg.set_content(
        "Sander,\n\n"
        "Bijgaand versie 3 van de concept SPA voor Project Tulp. De belangrijkste wijzigingen:\n\n"
        "- koopprijs € 63 miljoen cash-free/debt-free, met locked box per 30 juni 2026 als "
        "alternatief voor closing accounts;\n"
        "- earn-out tot € 7 miljoen bij 2.500 aansluitingen in Zuiderhaven vóór eind 2029;\n"
        "- specifieke vrijwaring voor de kritieke transportleidingen uit de technische due "
        "diligence, gemaximeerd op € 6 miljoen;\n"
        "- toestemming van de gemeente als concessieverlener als opschortende voorwaarde.\n\n"
        "De gemeente wil de earn-out liever vervangen door een hogere vaste koopprijs. Ik stel "
        "voor dat we daar pas op ingaan als de banken akkoord zijn; de financiering gaat uit van "
        "€ 63 miljoen.\n\n"
        "Let op: alleen het dealteam heeft toegang tot dit dossier (informatiebarrière).\n\n"
        "Groet,\nThijs\n"
    )
    msg.add_attachment(
        b"Concept SPA v3 (zie DMS)",
        maintype="application",
        subtype="octet-stream",
        filename="Concept SPA Project Tulp v3.docx",
    )
    # Fixed MIME boundary: the default is random and would change the bytes on every load.
    msg.set_boundary("==ewall-demo-tulp-spa-v3==")
    return bytes(msg)


def _claim_chart_medivers() -> str:
    lines = [
        "CLAIM CHART – EP 2 471 839 tegen Medivastine Genova 20 mg retard",
        "",
        "Vertrouwelijk – opgesteld ten behoeve van de procedure Medivers / Genova. Kolommen: "
        "kenmerk | conclusietekst | Genova-product | beoordeling.",
        "",
    ]
    lines += [" | ".join(row) for row in MEDIVERS_CHART]
    lines += [
        "",
        "Toelichting: kenmerk 1[c] wordt in de pleitnota onder de equivalentieleer besproken; "
        "de overige kenmerken zijn letterlijk aanwezig. Bron van de productgegevens: SmPC en "
        "bijsluiter van het Genova-product en eigen metingen van Medivers.",
    ]
    return "\n".join(lines) + "\n"


def _claim_chart_helderglas() -> str:
    lines = [
        "KENMERKENANALYSE (INVALIDITY CHART) – EP 3 118 207 tegen D1 en D2",
        "",
        "Conclusie | kenmerk | tekst | D1 (JP 2008-155402) | D2 (congrespublicatie 2010)",
        "",
    ]
    lines += [" | ".join(row) for row in HELDERGLAS_CHART]
    lines += [
        "",
        "Samenvatting: geen van beide documenten openbaart kenmerken [c] en [d] van conclusie "
        "1; de combinatie D1 met D2 leidt niet tot de werkwijze van conclusie 1 (art. 56 EOV).",
    ]
    return "\n".join(lines) + "\n"


def _expert_report(m: DemoMatter, report: ExpertReport) -> str:
    lines = [
        f"DESKUNDIGENRAPPORT {report.expert.upper()}",
        "",
        f"Opgesteld door {report.expert}, {report.discipline}, op verzoek van "
        f"{client(m.client_id).name} in de zaak {m.title}.",
        "",
        "1. Opdracht",
        f"1.1 {report.assignment}",
        "1.2 Ik ben onafhankelijk van partijen en heb geen eerdere opdrachten voor hen verricht.",
        "",
        "2. Onderzoek",
    ]
    lines += _sentences_as_paragraphs("2", report.investigation)
    lines += ["", "3. Bevindingen"]
    lines += _sentences_as_paragraphs("3", report.findings)
    lines += ["", "4. Conclusies"]
    lines += _sentences_as_paragraphs("4", report.conclusions)
    lines += [
        "",
        "5. Verklaring",
        "5.1 Ik verklaar dat ik dit rapport naar waarheid, onpartijdig en naar beste weten heb "
        "opgesteld.",
        "",
        report.expert,
    ]
    return "\n".join(lines) + "\n"


def _hearing(m: DemoMatter, hearing: Hearing, day: date) -> str:
    lines = [
        "PROCES-VERBAAL VAN GETUIGENVERHOOR",
        "",
        f"Zaak: {m.title}",
        f"Getuige: {hearing.witness}, {hearing.capacity}",
        f"Plaats: {hearing.place}",
        f"Datum: {day.day} {_MONTHS[day.month - 1]} {day.year}",
        "",
        f"De getuige heeft de belofte afgelegd de gehele waarheid en niets dan de waarheid te "
        f"zeggen. Vragen gesteld door {short_name(m.team[0])}.",
        "",
    ]
    for number, (question, answer) in enumerate(hearing.pairs, start=1):
        if hearing.numbered:
            lines += [f"Vraag {number}: {question}", f"Antwoord: {answer}", ""]
        else:
            lines += [f"V: {question}", f"A: {answer}", ""]
    lines.append("Na voorlezing volhardt de getuige bij zijn verklaring en ondertekent deze.")
    return "\n".join(lines) + "\n"


def _agreement(agreement: Agreement) -> str:
    lines = [
        f"{agreement.title.upper()}",
        "CONCEPT – onder voorbehoud van instemming van cliënt; vertrouwelijk",
        "",
        "DE ONDERGETEKENDEN:",
        f"1. {agreement.parties[0]};",
        f"2. {agreement.parties[1]};",
        "",
        "OVERWEGENDE DAT:",
    ]
    lines += [f"{chr(ord('A') + i)}. {r}" for i, r in enumerate(agreement.recitals)]
    lines += ["", "KOMEN OVEREEN ALS VOLGT:", ""]
    for number, (heading, text) in enumerate(agreement.clauses, start=1):
        lines += [f"Artikel {number} {heading}", f"{number}.1 {text}", ""]
    lines.append("Aldus overeengekomen en in tweevoud ondertekend.")
    return "\n".join(lines) + "\n"


_MONTHS = (
    "januari",
    "februari",
    "maart",
    "april",
    "mei",
    "juni",
    "juli",
    "augustus",
    "september",
    "oktober",
    "november",
    "december",
)


def _selection_note() -> str:
    rows = [
        ("productiemedewerker float", "15-25", "3", "1"),
        ("productiemedewerker float", "25-35", "9", "4"),
        ("productiemedewerker float", "35-45", "14", "6"),
        ("productiemedewerker float", "45-55", "17", "7"),
        ("productiemedewerker float", "55+", "11", "5"),
        ("operator snijlijn", "35-45", "6", "3"),
        ("ploegleider", "45-55", "4", "2"),
    ]
    lines = [
        "VERTROUWELIJKE NOTITIE – SELECTIE BOVENTALLIGE FUNCTIES VESTIGING DORDRECHT",
        "",
        "Alleen voor het arbeidsrechtteam. Niet doorsturen. Bevat personeelsgegevens.",
        "",
        "De afspiegeling is toegepast per uitwisselbare functie en per leeftijdscategorie "
        "binnen de bedrijfsvestiging Dordrecht. Per categorie is het aantal werknemers en het "
        "aantal voor ontslag voorgedragen werknemers vermeld; de namen staan in de bijlage bij "
        "de UWV-aanvraag.",
        "",
        "functie | leeftijdscategorie | werknemers | boventallig",
    ]
    lines += [" | ".join(r) for r in rows]
    lines += [
        "",
        "Drie werknemers met een arbeidsbeperking vallen buiten de afspiegeling (art. 7:669 "
        "BW en de Ontslagregeling). Over de positie van twee ondernemingsraadsleden wordt "
        "afzonderlijk geadviseerd.",
    ]
    return "\n".join(lines) + "\n"


def _unfiled_letter() -> str:
    return (
        "Aangetekend\n\n"
        "Aan: Dekker Meijer Advocaten, t.a.v. de postkamer\n"
        "Betreft: uw kenmerk onleesbaar – ingebrekestelling\n\n"
        "Geachte heer, mevrouw,\n\n"
        "Namens onze cliënte stellen wij uw cliënte hierbij in gebreke wegens het uitblijven van "
        "betaling van de facturen 2026-118 tot en met 2026-131. Wij verzoeken u binnen veertien "
        "dagen te betalen, bij gebreke waarvan wij zonder nadere aankondiging tot dagvaarding "
        "overgaan.\n\n"
        "Hoogachtend,\n\nIncassobureau Noord (kenmerk ontbreekt op de scan)\n"
    )


# --- assembly -----------------------------------------------------------------------------


def _matter_documents(m: DemoMatter, d: Dossier) -> list[tuple[SourceDocument, str]]:
    """The matter's documents, each with the canonical type its DMS spelling must
    normalise to."""
    docs: list[tuple[SourceDocument, str]] = []

    def add(
        title: str,
        doc_type: str,
        kind: str,
        author: str,
        days: int,
        *,
        text: str | None = None,
        content: bytes | None = None,
        mime_type: str | None = None,
        acl_allow: tuple[str, ...] | None = None,
    ) -> None:
        acl = None if acl_allow is None else SourceAcl("private", frozenset(acl_allow))
        docs.append(
            (
                SourceDocument(
                    source=SOURCE,
                    external_id=_external_id(m.matter_id, len(docs) + 1),
                    title=title,
                    doc_type=doc_type,
                    client_id=m.client_id,
                    matter_id=m.matter_id,
                    author=person(author).name,
                    modified_at=_at(_document_day(m, days)),
                    acl=acl,
                    text=text,
                    content=content,
                    mime_type=mime_type,
                ),
                kind,
            )
        )

    lead = m.team[0]
    add(f"Memo {m.title}", "Memo", "memo", lead, 40, text=_memo(m, d))
    if d.brief:
        add(f"{d.brief} – {m.title}", d.brief, "brief", lead, 14, text=_brief(m, d))
    chart_author = m.team[-1]
    if m.matter_id == "MEDIVERS-001":
        add(
            "Claim chart EP 2 471 839 – Medivastine Genova 20 mg retard",
            "Claim chart",
            "claim_chart",
            chart_author,
            21,
            text=_claim_chart_medivers(),
        )
    if m.matter_id == "HELDERGLAS-003":
        add(
            "Kenmerkenanalyse EP 3 118 207 tegen D1 en D2",
            "Kenmerkenanalyse",
            "claim_chart",
            chart_author,
            18,
            text=_claim_chart_helderglas(),
        )
    report = EXPERT_REPORTS.get(m.matter_id)
    if report is not None:
        add(
            f"Deskundigenrapport {report.expert} – {m.title}",
            "Deskundigenrapport",
            "expert_report",
            lead,
            25,
            text=_expert_report(m, report),
        )
    hearing = HEARINGS.get(m.matter_id)
    if hearing is not None:
        doc_type = "Getuigenverklaring" if hearing.numbered else "Proces-verbaal getuigenverhoor"
        add(
            f"{doc_type} {hearing.witness}",
            doc_type,
            "deposition",
            lead,
            30,
            text=_hearing(m, hearing, _document_day(m, 30)),
        )
    agreement = AGREEMENTS.get(m.matter_id)
    if agreement is not None:
        add(
            agreement.title, "Conceptovereenkomst", "contract", lead, 10, text=_agreement(agreement)
        )
    if m.matter_id == "HELDERGLAS-002":
        # Private in the DMS: only the employment team; no wall is involved, the source
        # ACL alone keeps it from the rest of the firm.
        allowed = tuple(person(p).alias for p in ("evandenberg@firm.nl", "nsmit@firm.nl"))
        add(
            "Vertrouwelijke notitie selectie boventallige functies",
            "Notitie",
            "memo",
            "nsmit@firm.nl",
            8,
            text=_selection_note(),
            acl_allow=allowed,
        )
    sent = _at(_document_day(m, 3), 16)
    add(
        f"E-mail aan cliënt: {m.title}",
        "E-mail",
        "email",
        lead,
        3,
        content=_email(m, d, sent, len(docs) + 1),
        mime_type="message/rfc822",
    )
    if m.matter_id == "NOORDZEE-001":
        deal_sent = _at(_document_day(m, 6), 9)
        add(
            "E-mail Project Tulp – koopprijs, earn-out en concept SPA v3",
            "E-mail",
            "email",
            "tvisser@firm.nl",
            6,
            content=_deal_email(m, deal_sent),
            mime_type="message/rfc822",
        )
    return docs


def unfiled_document() -> SourceDocument:
    """A scan the post room filed without client or matter: present but EMPTY fields, which
    must quarantine it (visible to no one) rather than make it public."""
    return SourceDocument(
        source=SOURCE,
        external_id=f"{LIBRARY}!POSTKAMER-2026-1187.01",
        title="Scan inkomende post 20-11-2026 (niet gekoppeld)",
        doc_type="Correspondentie",
        client_id="",
        matter_id="",
        author=person(CONFLICTS_PARTNER).name,
        modified_at=_at(date(2026, 11, 20), 9),
        text=_unfiled_letter(),
    )


UNFILED_KIND = "other"


def _with_kinds(opened_after_walls: bool | None) -> list[tuple[SourceDocument, str]]:
    out: list[tuple[SourceDocument, str]] = []
    for m in MATTERS:
        if opened_after_walls is not None and m.opened_after_walls != opened_after_walls:
            continue
        out += _matter_documents(m, DOSSIERS[m.matter_id])
    if opened_after_walls is None:
        out.append((unfiled_document(), UNFILED_KIND))
    return out


def firm_documents(*, opened_after_walls: bool | None = None) -> list[SourceDocument]:
    """Every generated firm document, in a stable order.

    ``opened_after_walls`` selects the documents of matters opened before (False) or after
    (True) the walls; None returns all of them plus the unfiled scan.
    """
    return [doc for doc, _ in _with_kinds(opened_after_walls)]


def document_kinds() -> dict[str, str]:
    """external id -> the canonical type that each document's DMS spelling must normalise
    to (the tests check the pipeline's normalisation against it)."""
    return {doc.external_id: kind for doc, kind in _with_kinds(None)}


__all__ = [
    "DOSSIERS",
    "EXHIBITS",
    "SOURCE",
    "document_kinds",
    "firm_documents",
    "short_name",
    "unfiled_document",
]
