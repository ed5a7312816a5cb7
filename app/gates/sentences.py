"""Sentence splitting for Dutch legal prose (the grounding gate checks one sentence at a time).

A generic splitter cuts "art. 6:162 BW", "r.o. 3.4", "mr. J.A. de Vries" and "vgl. HR ..."
into fragments that each look unsupported; a fragment is a false alarm for the lawyer. So a
full stop ends a sentence only when the next word can start one (capital, digit, opening
quote) and the word before it is not an abbreviation, an initial or a paragraph number.
Citation markers such as "[1]" or "[2, 3]" after the full stop stay with their sentence.
"""

from __future__ import annotations

import html
import re

from app.ingest.extract.text import INVISIBLE

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
        "incl",
        "excl",
        "evt",
        "max",
        "min",
        "ong",
        "mln",
        "mrd",
        "gem",
        "conv",
        "reconv",
        "vnl",
        "overw",
        "ibid",
        "prod",
        "vlg",
        "cass",
        "rv",
        "sv",
        "awb",
        "aanv",
        "alg",
        "betr",
        "bijz",
        "gew",
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
# abbreviations that end a list and so, before a capital, a sentence of an answer ("etc. Het")
_SENTENCE_FINAL = frozenset({"etc", "enz", "e.d", "e.a", "e.v", "c.s", "lid"})
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


def _is_boundary(text: str, start: int, match: re.Match[str], *, lower_case: bool) -> bool:
    punct_at = match.start()
    if punct_at > 0 and text[punct_at - 1] in "([":
        return False  # "(...)": an omission inside a quotation
    after = match.end()
    while after < len(text) and text[after].isspace():
        after += 1
    if after >= len(text):
        return True
    word_start = text.rfind(" ", start, punct_at) + 1
    word = text[max(word_start, start) : punct_at].lstrip(_LEADING_PUNCT)
    if not _starts_sentence(text, after):
        # an answer's next sentence may start in lower case: after a whole word that is no
        # abbreviation ("slaagt. het hof"), not after "o.i.d." or "3.4."
        return lower_case and text[after].islower() and _ends_a_word(text[punct_at], word)
    if text[punct_at] != ".":
        return True
    if lower_case and word.lower() in _SENTENCE_FINAL:
        return True  # an answer's "... enz. Het hof ..."
    if word.lower() in _ABBREVIATIONS:
        return False
    if word.lower() in _BEFORE_AN_AMOUNT and text[after].isdigit():
        return False
    if _INITIALS.fullmatch(word + ".") and word + "." not in _COMPANY_FORMS:
        return False
    # a paragraph number at the start of the sentence ("3.4. De rechtbank ...")
    return not (_NUMBERING.fullmatch(word) and not text[start:word_start].strip())


def _ends_a_word(mark: str, word: str) -> bool:
    """Whether ``mark`` after ``word`` ends a sentence whatever follows: "!", "?" and "…"
    always; a full stop after a whole word ("slaagt.", "2020.", "Noord-Holland."), not after
    an abbreviation, an initial or a number with dots ("o.i.d.", "J.", "3.4.")."""
    if mark != ".":
        return True
    bare = word.replace("-", "").replace("'", "").replace("’", "")
    return (
        len(bare) > 1
        and bare.isalnum()
        and word.lower() not in _ABBREVIATIONS
        and not _INITIALS.fullmatch(word + ".")
    )


def split_sentences(text: str, *, lower_case: bool = False) -> list[str]:
    """Sentences of ``text`` in order; blank lines always separate. ``lower_case``: a full
    stop after a whole word ends a sentence before a lower-case word too (answers)."""
    sentences: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        if not flat:
            continue
        start = 0
        for match in _CANDIDATE.finditer(flat):
            if match.start() < start:
                continue
            if not _is_boundary(flat, start, match, lower_case=lower_case):
                continue
            sentence = flat[start : match.end()].strip()
            if sentence:
                sentences.append(sentence)
            start = match.end()
        rest = flat[start:].strip()
        if rest:
            sentences.append(rest)
    return sentences


# --- answers: what an assistant writes is marked up ----------------------------------------

# Block-level HTML: where a block starts or ends, a sentence ends. Tags are matched by name so
# that "a < b en c > d" stays text; the rest of a tag's markup is bounded.
_HTML_BLOCK = re.compile(
    r"</?(?:p|div|li|ul|ol|br|h[1-6]|tr|td|th|table|blockquote|pre|section|article|dd|dt|hr)"
    r"\b[^<>]{0,2000}>",
    re.IGNORECASE,
)
# A tag's name ends at white space, "/" or ">": "<jansen@firm.nl>" is text.
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]{0,40}(?:[\s/][^<>]{0,2000})?>")
# Markdown: a list item, a heading, a quote or a table row starts a block; emphasis, code
# and a link's address are markup. A bullet sign or a quote mark needs no space after it.
_LIST_ITEM = re.compile(
    r"^[ \t]*(?:[•·▪◦‣●○■□➢➤►✓✔]|>(?:[ \t]*>)*|(?:[-*+–—]|\d{1,3}[.)]|[a-zA-Z][.)]"
    r"|\(\w{1,4}\)|[ivxlcIVXLC]{1,6}[.)]|#{1,6})(?=[ \t]))[ \t]*"
)
_LINK = re.compile(r"\[([^\[\]\n]{1,500})\]\([^()\s]{0,2000}\)")
_EMPHASIS = re.compile(
    r"\*\*|__|~~|`+|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|(?<![\w_])_(?=\S)|(?<=\S)_(?![\w_])"
)
# A line that ends a sentence (closers and markers may follow its mark) ends its block,
# unless its last word is an abbreviation or an initial ("naar art.<line break>6:162 BW").
_LINE_ENDS_SENTENCE = re.compile(r"[.!?…][\"'”’»)\]]*(?:\s*" + _MARKER + r")*\s*$")
_LABEL_WORDS = 6  # a heading or lead-in of at most this many words is read with what follows
# the invisible characters that documents lose at ingestion (and questions at search)
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
_FOOTNOTE = re.compile(
    r"(?<=[.!?…])(?:[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]+|\[\^[^\]\s]{1,20}\]|\(\d{1,3}\))"
    r"|\[\^[^\]\s]{1,20}\]"
)
_GLUED = re.compile(r"(?<=[a-zà-ÿ]{2}[.!?])(?=[A-Z])|(?<=\])(?=[A-Z])")
_BOLD_LEAD = re.compile(
    r"(?m)^([ \t]*(?:[-*+•][ \t]+|\d{1,3}[.)][ \t]+)?)(\*\*|__)([^*_\n]{1,200}?:)\2[ \t]*"
)
_INLINE_BULLET = re.compile(r"[ \t]+([•▪◦‣●])[ \t]+")
# What a heading or lead-in may say and still be a label read with the block after it
# ("## Conclusie", "De rechtbank oordeelt:"); one that says more ("### Het beroep slaagt",
# "De Hoge Raad vernietigt het arrest:") is a claim, judged on its own.
_LABEL_VOCABULARY = frozenset((
    "let", "kortom", "samengevat", "daarnaast", "bovendien", "ook", "nb", "belangrijk",
    "waarschuwing", "tip", "praktisch", "praktische", "gevolgen", "gevolg", "risico", "s",
    "de", "het", "een", "en", "of", "van", "in", "op", "voor", "met", "als", "bij", "naar",
    "over", "tot", "uit", "aan", "om", "door", "volgens", "onder", "zie", "kort", "korte",
    "antwoord", "conclusie", "conclusies", "samenvatting", "gronden", "grond", "feiten",
    "overwegingen", "overweging", "beoordeling", "advies", "vraag", "vragen", "kern",
    "inleiding", "achtergrond", "toelichting", "bronnen", "bron", "analyse", "uitkomst",
    "oordeel", "beslissing", "slotsom", "uitspraak", "uitspraken", "relevante",
    "rechtspraak", "jurisprudentie", "wetgeving", "artikelen", "citaten", "punten",
    "stappen", "aanbeveling", "aanbevelingen", "opmerkingen", "noot", "noten",
    "vindplaatsen", "standpunten", "partijen", "procesverloop", "context", "overzicht",
    "resultaat", "resultaten", "toepassing", "regel", "regels", "criteria", "juridisch",
    "juridische", "kader", "feitelijk", "feitelijke", "oordeelt", "overweegt", "stelt",
    "concludeert", "beslist", "volgt", "volgende", "geldt", "luidt", "zegt", "bepaalt",
    "schrijft", "merkt", "rechtbank", "hof", "raad", "hoge", "kantonrechter", "rechter",
    "college", "gerechtshof", "afdeling", "arrest", "vonnis", "beschikking", "zaak",
    "belangrijkste", "eerste", "tweede", "derde", "slot", "dit", "dat", "deze", "die",
    "wat", "waarom", "hoe"
))  # fmt: skip


def _is_label(line: str, heading: bool) -> bool:
    words = re.findall(r"[^\W\d_]+", line.lower())
    return (
        (heading or line.endswith(":"))
        and len(line.split()) <= _LABEL_WORDS
        and all(w in _LABEL_VOCABULARY for w in words)
    )


def _line_ends_sentence(line: str) -> bool:
    end = _LINE_ENDS_SENTENCE.search(line)
    if end is None:
        return False
    before = line[: end.start()].rsplit(None, 1)
    word = before[-1].lstrip(_LEADING_PUNCT) if before else ""
    return not word or _ends_a_word(line[end.start()], word)


def _without_comments(text: str) -> str:
    """HTML comments taken out, in one pass (an unclosed one runs to the end)."""
    out: list[str] = []
    at = 0
    while (start := text.find("<!--", at)) >= 0:
        out.append(text[at:start])
        end = text.find("-->", start + 4)
        at = len(text) if end < 0 else end + 3
    out.append(text[at:])
    return " ".join(out) if len(out) > 1 else text


def _answer_blocks(text: str) -> str:
    """``text`` with its markup taken out and a blank line wherever a block ends: a list
    item, heading, quote, table cell, HTML block, or a line that ends a sentence. An invented
    sentence set as the next bullet, in the next <p> or after "**" was read as one sentence
    with the copied one before it, and passed with it (a check of 2026-12-06)."""
    if "<" in text:
        text = _HTML_TAG.sub(" ", _HTML_BLOCK.sub("\n\n", _without_comments(text)))
    if "&" in text:
        text = html.unescape(text)
    text = _BOLD_LEAD.sub(r"\1\3\n", _INVISIBLE.sub("", text))  # "**Let op:** ..."
    text = _EMPHASIS.sub("", _LINK.sub(r"\1", text))
    # a re-run's layouts (2026-12-06): a footnote after a sentence's mark, a sentence glued
    # to the one before it ("gehandhaafd.Het", "[1]Het"), a bullet sign inside a line
    text = _FOOTNOTE.sub("", text)
    text = _GLUED.sub(" ", text)
    text = _INLINE_BULLET.sub(r"\n\1 ", text)
    blocks: list[str] = []
    current: list[str] = []
    label = False  # the block so far is a heading or a short lead-in ending in ":"

    def close() -> None:
        nonlocal current, label
        if current and not label:
            blocks.append(" ".join(current))
            current = []

    for raw in text.splitlines():
        line = raw.strip()
        cells = [c.strip() for c in line.strip("|").split("|")] if line.startswith("|") else None
        item = _LIST_ITEM.match(raw)
        if not line or item or cells is not None:
            close()
        if cells is not None:  # a table row: each cell on its own; a |---| rule is nothing
            blocks.extend(c for c in cells if c.strip("-: "))
            continue
        if not line:
            continue
        text_of_line = raw[item.end() :].strip() if item else line
        current.append(text_of_line)
        # A heading ("## Conclusie") or a lead-in ("De rechtbank oordeelt:") says nothing on
        # its own: it is read with the block after it, as before, not judged as a claim.
        heading = item is not None and item.group().strip().startswith("#")
        label = _is_label(text_of_line, heading)
        if heading or text_of_line.endswith(":") or _line_ends_sentence(line):
            close()  # a heading is one line, a lead-in ends at its colon: their own blocks
    label = False
    close()
    return "\n\n".join(b for b in blocks if b.strip())


def answer_sentences(text: str) -> list[str]:
    """The sentences of an answer, each judged on its own: markup is layout (HTML,
    Markdown), each block is read alone, and a sentence may start in lower case."""
    return split_sentences(_answer_blocks(text), lower_case=True)
