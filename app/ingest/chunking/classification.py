"""Which document type a source's spelling means ("pleitnota", "Expert opinion", ...)."""

from __future__ import annotations

import re
import unicodedata

from app.ingest.types import DOC_TYPES

# First match wins. The order settles the ambiguous spellings: "conclusie van antwoord" is a
# party's brief, a bare "conclusie" (of the advocaat-generaal) is case law; "expert opinion"
# is an expert report, "legal opinion" a memo; "EPO opposition decision" is case law.
_DOC_TYPE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "claim_chart",
        re.compile(
            r"\bclaim ?charts?\b|\b(?:infringement|invalidity|validity) charts?\b"
            r"|\bfeature analys[ie]s\b|\bkenmerkenanalyse\b|\bmerkmalsgliederung\b"
        ),
    ),
    (
        "deposition",
        re.compile(
            r"\bdepositions?\b|\bwitness|\bgetuige|\bverhoor\b|\baffidavits?\b"
            r"|\btranscripts?\b|\bproces ?verbaa?l"
        ),
    ),
    ("expert_report", re.compile(r"\bexpert|\bdeskundig|\bpartijdeskundig")),
    ("case_law", re.compile(r"\bconclusie\b.*\b(?:a ?g|p ?g|advocaat|procureur)\b")),
    ("brief", re.compile(r"\bconclusie (?:van|na|tot|houdende|in|ter)\b")),
    (
        "case_law",
        re.compile(
            r"\buitspraa?k|\bvonnis|\barresten\b|\barrest\b|\bbeschikking|\bjurisprudentie"
            r"|\bcase ?law\b|\bjudge?ments?\b|\brulings?\b|\bdecisions?\b|\brechtspraak"
            r"|\becli\b|\bconclusie\b"
        ),
    ),
    (
        "brief",
        re.compile(
            r"\bpleit|\bpleading|\bbriefs?\b|\bdagvaarding|\bmemorie\b|\bverzoekschrift"
            r"|\bverweerschrift|\bberoepschrift|\bbezwaarschrift|\bprocesstuk|\bakte\b"
            r"|\boppositions?\b|\boppositie|\beov\b|\bstatement of (?:claim|defen[cs]e)\b"
            r"|\bsubmissions?\b|\bskeleton argument|\bgrounds of appeal\b|\breply\b"
            r"|\brejoinder\b|\bmotions?\b|\bpetitions?\b|\bcomplaint\b|\bnotice of\b"
            r"|\bschriftelijke toelichting\b|\brepliek\b|\bdupliek\b|\bincident"
        ),
    ),
    (
        "statute",
        re.compile(
            r"\bwet\b|\bwetten\b|\bwetgeving|\bwetboek|\bstatutes?\b|\blegislation\b"
            r"|\bregulations?\b|\bverordening|\brichtlijn|\bdirectives?\b|\btreat(?:y|ies)\b"
            r"|\bverdrag|\bregeling\b|\bact\b"
        ),
    ),
    ("email", re.compile(r"\be ?mails?\b|\bmail\b|\beml\b|\bmessages?\b|\bbericht\b")),
    (
        "memo",
        re.compile(
            r"\bmemos?\b|\bmemo s\b|\bmemoranda\b|\bmemorandum\b|\bnotitie|\bnota\b|\badvies\b"
            r"|\bopinion\b|\bnotes?\b|\baantekening|\bresearch\b"
        ),
    ),
    (
        "contract",
        re.compile(
            r"\bcontract|overeenkomst|\bagreements?\b|\blicen[cs]e|\bnda\b|\bvoorwaarden\b"
            r"|\bterms\b|\bconvenant\b"
        ),
    ),
)
_DOC_TYPE_PUNCT_RE = re.compile(r"[\s_\-/.,;:()'’\"&+]+")


def normalize_doc_type(value: str | None) -> str:
    """Map a source's document-type spelling (Dutch or English) to one of ``DOC_TYPES``."""
    if not value:
        return "other"
    folded = unicodedata.normalize("NFKD", value.casefold())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    words = _DOC_TYPE_PUNCT_RE.sub(" ", folded).strip()
    if not words:
        return "other"
    canonical = words.replace(" ", "_")
    if canonical in DOC_TYPES:
        return canonical
    for doc_type, pattern in _DOC_TYPE_RULES:
        if pattern.search(words):
            return doc_type
    return "other"
