"""Sentence splitting for Dutch legal prose (the grounding gate checks one sentence at a time).

A generic splitter cuts "art. 6:162 BW", "r.o. 3.4", "mr. J.A. de Vries" and "vgl. HR ..."
into fragments that each look unsupported; a fragment is a false alarm for the lawyer. So a
full stop ends a sentence only when the next word can start one (capital, digit, opening
quote) and the word before it is not an abbreviation, an initial or a paragraph number.
Citation markers such as "[1]" or "[2, 3]" after the full stop stay with their sentence.
"""

from __future__ import annotations

import re

# lower case, without the final dot
_ABBREVIATIONS = frozenset(
    {
        # references to law and case law
        "art",
        "artt",
        "jo",
        "r.o",
        "rov",
        "ro",
        "o.a",
        "nr",
        "nrs",
        "no",
        "vgl",
        "zie",
        "cf",
        "hr",
        "ehrm",
        "eu",
        "hvj",
        "rvs",
        "abrvs",
        "crvb",
        "cbb",
        "par",
        "lid",
        "sub",
        "bijl",
        "blz",
        "p",
        "pp",
        "jl",
        "t.a.p",
        "a.w",
        "m.nt",
        "nt",
        "aant",
        "r.c",
        "kamerstukken",
        "stb",
        "stcrt",
        "trb",
        "hfdst",
        "afd",
        "ov",
        "rb",
        "ktr",
        "pag",
        "d.d",
        # guilders, as in "fl. 300" and "hfl. 2.500"
        "fl",
        "hfl",
        # titles and names
        "mr",
        "mrs",
        "dr",
        "drs",
        "ir",
        "ing",
        "prof",
        "dhr",
        "mevr",
        "mw",
        "ds",
        "jr",
        "sr",
        # common Dutch abbreviations
        "e.a",
        "i.c",
        "m.i",
        "c.q",
        "d.w.z",
        "m.b.t",
        "t.a.v",
        "i.v.m",
        "e.d",
        "e.v",
        "enz",
        "etc",
        "bijv",
        "bv",
        "o.m",
        "t.z.t",
        "z.g",
        "zgn",
        "resp",
        "ca",
        "inz",
        "ivm",
        "mbt",
        "tav",
        "nl",
        "vs",
        "red",
        "ed",
        "vol",
        "jur",
        # months, as in "12 jan. 2013"
        "jan",
        "feb",
        "febr",
        "mrt",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "okt",
        "nov",
        "dec",
    }
)
# currency marks that end a sentence ("... bedraagt 300 EUR. De ...") unless an amount
# follows them ("EUR. 300")
_BEFORE_AN_AMOUNT = frozenset({"eur", "nlg", "f", "ƒ"})
_COMPANY_FORMS = frozenset({"B.V.", "N.V.", "C.V.", "V.O.F.", "U.A.", "S.A."})
# "J.", "J.A.", "P.Th.", "Chr."
_INITIALS = re.compile(r"(?:[A-Z](?:h|hr)?\.)+")
_NUMBERING = re.compile(r"\d+(?:\.\d+)*")
_MARKER = r"\[\d+(?:\s*[,;–-]\s*\d+)*\]"
# Sentence-final punctuation, closing quotes/brackets, then citation markers. A candidate
# starts only at the first mark of a run and takes the run and its closers whole
# (possessive): a backtracking pattern retried at every mark of a long run ("......x")
# costs time quadratic in the run, and an answer or a document may hold 200,000 of them.
# Only a whole run can ever end a sentence, so the matches are the same.
_CANDIDATE = re.compile(r"(?<![.!?…])[.!?…]++[\"'”’»)\]]*+(?:\s*" + _MARKER + r")*(?=\s|$)")
_OPENERS = "\"'“‘„«([‹"
_LEADING_PUNCT = "([{\"'“‘„«‹"


def _starts_sentence(text: str, pos: int) -> bool:
    while pos < len(text) and text[pos] in _OPENERS:
        pos += 1
    if pos >= len(text):
        return False
    char = text[pos]
    if char.isupper() or char.isdigit():
        return True
    # "’s-Gravenhage", "'s Hofs oordeel"
    return bool(re.match(r"s[- ]", text[pos : pos + 2])) and pos > 0 and text[pos - 1] in "'’"


def _is_boundary(text: str, start: int, match: re.Match[str]) -> bool:
    punct_at = match.start()
    if punct_at > 0 and text[punct_at - 1] in "([":
        return False  # "(...)": an omission inside a quotation
    after = match.end()
    while after < len(text) and text[after].isspace():
        after += 1
    if after >= len(text):
        return True
    if not _starts_sentence(text, after):
        return False
    if text[punct_at] != ".":
        return True
    word_start = text.rfind(" ", start, punct_at) + 1
    word = text[max(word_start, start) : punct_at].lstrip(_LEADING_PUNCT)
    if word.lower() in _ABBREVIATIONS:
        return False
    if word.lower() in _BEFORE_AN_AMOUNT and text[after].isdigit():
        return False
    if _INITIALS.fullmatch(word + ".") and word + "." not in _COMPANY_FORMS:
        return False
    # a paragraph number at the start of the sentence ("3.4. De rechtbank ...")
    return not (_NUMBERING.fullmatch(word) and not text[start:word_start].strip())


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` in order; blank lines always separate."""
    sentences: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        if not flat:
            continue
        start = 0
        for match in _CANDIDATE.finditer(flat):
            if match.start() < start:
                continue
            if not _is_boundary(flat, start, match):
                continue
            sentence = flat[start : match.end()].strip()
            if sentence:
                sentences.append(sentence)
            start = match.end()
        rest = flat[start:].strip()
        if rest:
            sentences.append(rest)
    return sentences
