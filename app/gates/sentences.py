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
from itertools import pairwise

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
        "jhr",
        "jkvr",
        "jr",
        "sr",
        # common Dutch abbreviations
        "incl",
        "excl",
        "t.o.v",
        "zaaknr",
        "rolnr",
        "kenmerk",
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
# statutes and courts, written as acronyms: their stop before a word that opens a sentence
# ends one ("... van de Awb. Indien ...", "... artikel 359a Sv. Het hof ...", "... 81 RO. Dit
# ..."; real decisions in ../shared/corpus end sentences so), before a name or a number not
# ("HR. 12 maart"); "Rv." and "Sv." before lower case stay abbreviations
_ACRONYMS = frozenset(
    {"awb", "sv", "sr", "rv", "ro", "hr", "eu", "ehrm", "hvj", "rvs", "abrvs", "crvb", "cbb"}
)
# abbreviations that end a list and so, before a capital, a sentence of an answer ("etc. Het")
_SENTENCE_FINAL = frozenset({"etc", "enz", "e.d", "e.a", "e.v", "c.s", "lid", "vol"})
# currency marks that end a sentence ("... bedraagt 300 EUR. De ...") unless an amount
# follows them ("EUR. 300")
_BEFORE_AN_AMOUNT = frozenset({"eur", "nlg", "f", "ƒ"})
_COMPANY_FORMS = frozenset({"B.V.", "N.V.", "C.V.", "V.O.F.", "U.A.", "S.A."})
# the advocate- and procurator-general before their names ("de A.-G. Wattel concludeert")
_TITLES = frozenset({"A.-G.", "P.-G."})
# After a company form or one of those titles a capitalised word is as often a name or a
# place ("Jansen B.V. Amsterdam", "Acme B.V. (Acme) stelt", "de A.-G. Wattel") as the start
# of a sentence ("... aan Acme B.V. Het hof ..."). A wrong split judges two stumps, each a
# false alarm (and a name at a stump's start no longer counts as a name fact); a wrong
# non-split joins two sentences, and an invented one joined to a copied one may pass with
# it (see _answer_blocks), though the joined sentence's facts must all still be held. So
# neither always: a sentence ends there only before a word that typically opens a Dutch
# sentence (below), a number or "'s"; before any other capitalised word it goes on. After
# a title a surname's particles before a capital are the name ("A.-G. De Bock", "P.-G.
# Van den Berge"), so "... van de A.-G. De Hoge Raad ..." stays one sentence too.
_SENTENCE_STARTERS = frozenset((
    "de", "het", "een", "dit", "dat", "deze", "die", "dergelijke", "zo'n", "zulke", "elk",
    "elke", "ieder", "iedere", "alle", "beide", "geen", "veel", "vele", "sommige", "enkele",
    "andere", "ik", "je", "jij", "u", "hij", "zij", "ze", "wij", "we", "men", "mijn", "uw",
    "zijn", "haar", "ons", "onze", "hun", "iemand", "niemand", "niets", "iets", "alles", "wie",
    "wat", "welk", "welke", "waar", "waarom", "hoe", "wanneer", "er", "daar", "hier",
    "daarom", "daardoor", "daarbij", "daarnaast", "daarmee", "daarin", "daarvan", "daarop",
    "daartoe", "daaruit", "daarentegen", "daarover", "daarna", "daarvoor", "hierbij",
    "hierdoor", "hiermee", "hierin", "hiervan", "hierop", "hiertoe", "hieruit", "hierover",
    "hiervoor", "hierna", "dan", "toen", "nu", "thans", "ook", "wel", "niet", "nog", "al",
    "reeds", "echter", "bovendien", "verder", "vervolgens", "tevens", "evenmin", "eveneens",
    "kortom", "aldus", "zo", "dus", "derhalve", "immers", "voorts", "overigens", "tenslotte",
    "sindsdien", "inmiddels", "uiteindelijk", "eerst", "eerder", "later", "alleen", "pas",
    "zowel", "mede", "blijkens", "anders", "uiteraard", "primair", "subsidiair", "in", "op",
    "bij", "met", "voor", "na", "naar", "door", "uit", "over", "onder", "tegen", "om", "aan",
    "van", "volgens", "tussen", "binnen", "buiten", "zonder", "namens", "ingevolge",
    "krachtens", "overeenkomstig", "conform", "ondanks", "sinds", "tijdens", "wegens", "per",
    "vanaf", "vanwege", "gelet", "gezien", "omtrent", "inzake", "ten", "ter", "tot", "als",
    "indien", "nadat", "omdat", "hoewel", "terwijl", "doordat", "zodat", "mits", "tenzij",
    "zodra", "voordat", "aangezien", "maar", "en", "of", "want", "noch", "zoals", "ja", "nee",
    "eiser", "eiseres", "eisers", "gedaagde", "gedaagden", "verweerder", "verweerster",
    "appellant", "appellante", "appellanten", "geïntimeerde", "verzoeker", "verzoekster",
    "belanghebbende", "verdachte", "klager", "klaagster", "betrokkene", "partijen",
    "the", "this", "these", "it", "they", "he", "she", "however", "therefore", "according",
))  # fmt: skip
_SURNAME_PARTICLES = frozenset({"de", "den", "der", "van", "ten", "ter"})
# after a particle they open a sentence ("... de A.-G. De Hoge Raad verwerpt ...": a review)
_COURTS = frozenset({"Hoge", "Raad", "Rechtbank", "Hof", "Centrale", "College", "Staat"})
_NEXT_WORD = re.compile(r"[^\W\d_][\w’'-]*")
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


def _opens_a_sentence(text: str, pos: int, *, title: bool) -> bool:
    """Whether the capitalised word, number or quote at ``pos`` starts a sentence after a
    company form or a title (see _SENTENCE_STARTERS), not a name that goes on with it."""
    while pos < len(text) and text[pos] in _OPENERS:
        pos += 1
    word = _NEXT_WORD.match(text, pos)
    if word is None or not word.group()[0].isupper():
        return True  # a number, "'s Hofs oordeel"
    if word.group().lower() not in _SENTENCE_STARTERS:
        return False  # a name or a place: "Jansen B.V. Amsterdam", "de A.-G. Wattel"
    if title and word.group().lower() in _SURNAME_PARTICLES:
        # a surname's particles before a capital: "A.-G. De Bock", "P.-G. Van den Berge"
        while word is not None and word.group().lower() in _SURNAME_PARTICLES:
            pos = word.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
            word = _NEXT_WORD.match(text, pos)
        return word is None or not word.group()[0].isupper() or word.group() in _COURTS
    return True


def _starter_follows(text: str, pos: int) -> bool:
    """Whether a capitalised word that typically opens a Dutch sentence stands at ``pos``."""
    while pos < len(text) and text[pos] in _OPENERS:
        pos += 1
    word = _NEXT_WORD.match(text, pos)
    return word is not None and word.group()[0].isupper() and (
        word.group().lower() in _SENTENCE_STARTERS
    )


def _past_symbols(text: str, pos: int, most: int = 12) -> int:
    """The position of the first letter or digit after the dashes, arrows, emoji, bars and
    brackets (and spaces) that an answer may set between two sentences ("— Het", "(…) Het");
    ``pos`` when none comes within ``most`` characters."""
    end = min(len(text), pos + most)
    at = pos
    while at < end and not text[at].isalnum():
        at += 1
    return at if at < len(text) and text[at].isalnum() else pos


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
    if lower_case:  # an answer's "... stop. — Het", "... stop. ✅ Het", "... (…) Het"
        after = _past_symbols(text, after)
    if not _starts_sentence(text, after):
        # an answer's next sentence may start in lower case: after a whole word that is no
        # abbreviation ("slaagt. het hof"), not after "o.i.d." or "3.4."
        return lower_case and text[after].islower() and _ends_a_word(text[punct_at], word)
    if text[punct_at] != ".":
        return True
    if lower_case and word.lower() in _SENTENCE_FINAL:
        return True  # an answer's "... enz. Het hof ..."
    if word.lower() in _ABBREVIATIONS:
        return word.lower() in _ACRONYMS and _starter_follows(text, after)
    if word.lower() in _BEFORE_AN_AMOUNT and text[after].isdigit():
        return False
    form = word.upper() + "."
    if form in _COMPANY_FORMS or form in _TITLES:
        # An answer splits after a company form as before: its stumps are each held by the
        # passage that reads the whole sentence, and gluing would let an invented sentence
        # ("... met Acme B.V. Jansen heeft nooit betaald.") pass on the copied one before it
        # (a review of 2026-12-06). A title is followed by a name: "De A.-G." alone is held
        # by nothing.
        if lower_case and form in _COMPANY_FORMS:
            return True
        return _opens_a_sentence(text, after, title=form in _TITLES)
    if _INITIALS.fullmatch(word + "."):
        # an initial, unless an answer's bracket closes after it ("(bijlage B.) Het ...")
        return lower_case and match.group().rstrip().endswith((")", "]"))
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
    r"</?(?:p|div|li|ul|ol|br|h[1-6]|tr|td|th|table|blockquote|pre|section|article|dd|dt|hr"
    r"|details|summary|figure|figcaption|caption|header|footer|aside|main|nav)"
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
_LABEL_WORDS = 6  # a heading or lead-in of more words is never a label (see _is_label)
_WRAP_WIDTH = 60  # a line this long that stops mid-sentence was cut by a hard wrap
# the invisible characters that documents lose at ingestion (and questions at search)
_INVISIBLE = re.compile(f"[{INVISIBLE}\u034f]")
_FOOTNOTE = re.compile(
    r"(?<=[.!?…])(?:[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]+|\[\^[^\]\s]{1,20}\]|\(\d{1,3}\)"
    r"|[†‡]+|\([a-z]\)|\[[a-z]\]|\u207d[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]{1,3}\u207e|\^\d{1,3})"
    r"|\[\^[^\]\s]{1,20}\]"
    # a chat assistant's source marker, wherever it stands ("【4:0†source】")
    r"|【[^】\n]{0,40}】"
)
_RULE = re.compile(r"(?:[-=_*][ \t]*){3,}")
# an escaped line break after a sentence's mark or before what starts a line (a capital, a
# digit, a bullet, a heading, another break), not inside "C:\\new"
_ESCAPED_BREAK = re.compile(r"(?<=[.!?…])(?:\\r)?\\n|(?:\\r)?\\n(?=[A-Z0-9*#>•-]|(?:\\r)?\\n|$)")
_CLOSING_QUOTE = re.compile(r"(?<=[.!?…])“")  # the „…“ quote closed right after a stop
_GLUED = re.compile(r"(?<=[a-zà-ÿ]{2}[.!?])(?=[A-Z])|(?<=\])(?=[A-Z])")
_BOLD_LEAD = re.compile(
    r"(?m)^([ \t]*(?:[-*+•][ \t]+|\d{1,3}[.)][ \t]+)?)(\*\*|__)([^*_\n]{1,200}?)(:?)\2"
    r"[ \t]*(:?)[ \t]*(?:[–—-][ \t]*)?"
)


def _bold_lead(match: re.Match[str]) -> str:
    """A bold phrase that opens a line is a lead-in on a line of its own when a colon ends it
    ("**Kern:** een ...") or a sentence follows it ("**Het beroep slaagt** De ..."), not
    when the sentence goes on in lower case ("**De huurder** moet betalen.")."""
    follows = match.string[match.end() : match.end() + 1]
    if (
        match.group(4)
        or match.group(5)
        or not follows
        or follows in "\"'„“("
        or (follows.isupper() or follows.isdigit())
    ):
        return f"{match.group(1)}{match.group(3)}:\n"
    return match.group(0)


_IMAGE = re.compile(r"!\[([^\[\]\n]{0,500})\]\([^()\s]{0,2000}\)")
# the full stops of other scripts
_STOPS = str.maketrans({"．": ".", "。": ".", "｡": "."})
_INLINE_BULLET = re.compile(r"[ \t]+([•▪◦‣●])[ \t]+")
# What a heading or lead-in may say and still be a label, which is dropped ("## Conclusie",
# "De rechtbank oordeelt:"); one that says more ("### Het beroep slaagt", "De Hoge Raad
# vernietigt het arrest:") is a claim, judged on its own.
_LABEL_VOCABULARY = frozenset((
    "r", "o", "ro", "rov", "art", "lid", "bw", "sv", "sr", "awb", "rv", "nr", "memo",
    "notitie", "dossier", "stukken", "vergelijk", "vgl", "zie", "ook", "let", "kortom",
    "samengevat", "daarnaast", "bovendien", "nb", "belangrijk", "waarschuwing", "tip",
    "praktisch", "praktische", "gevolgen", "gevolg", "risico", "s", "de", "het", "een",
    "en", "of", "van", "in", "op", "voor", "met", "als", "bij", "naar", "over", "tot",
    "uit", "aan", "om", "door", "volgens", "onder", "kort", "korte", "antwoord",
    "conclusie", "conclusies", "samenvatting", "gronden", "grond", "feiten", "overwegingen",
    "overweging", "beoordeling", "advies", "vraag", "vragen", "kern", "inleiding",
    "achtergrond", "toelichting", "bronnen", "bron", "analyse", "uitkomst", "oordeel",
    "beslissing", "slotsom", "uitspraak", "uitspraken", "relevante", "rechtspraak",
    "jurisprudentie", "wetgeving", "artikelen", "citaten", "punten", "stappen",
    "aanbeveling", "aanbevelingen", "opmerkingen", "noot", "noten", "vindplaatsen",
    "standpunten", "partijen", "procesverloop", "context", "overzicht", "resultaat",
    "resultaten", "toepassing", "regel", "regels", "criteria", "juridisch", "juridische",
    "kader", "feitelijk", "feitelijke", "oordeelt", "overweegt", "stelt", "concludeert",
    "beslist", "volgt", "volgende", "geldt", "luidt", "zegt", "bepaalt", "schrijft",
    "merkt", "rechtbank", "hof", "raad", "hoge", "kantonrechter", "rechter", "college",
    "gerechtshof", "afdeling", "arrest", "vonnis", "beschikking", "zaak", "belangrijkste",
    "eerste", "tweede", "derde", "slot", "dit", "dat", "deze", "die", "wat", "waarom", "hoe"
))  # fmt: skip


_PARENTHESES = re.compile(r"\([^()]{0,200}\)")
_OUTCOMES = frozenset((
    "afgewezen", "toegewezen", "gegrond", "ongegrond", "vernietigd", "bekrachtigd", "bevestigd",
    "vernietigt", "bekrachtigt", "bevestigt", "slaagt", "faalt", "verworpen", "ontvankelijk",
    "niet-ontvankelijk", "ja", "nee", "aansprakelijk", "ontbonden", "nietig", "vernietigbaar",
))  # fmt: skip


def _is_label(line: str, heading: bool) -> bool:
    """A heading or lead-in that states nothing: only a label's words ("Conclusie", "De
    rechtbank oordeelt:"), or one topic word with what it refers to ("Verjaring:",
    "Hoofdregel (art. 6:82 lid 1 BW):"), unless that word is an outcome ("Afgewezen:")."""
    if not (heading or line.endswith(":")) or len(line.split()) > _LABEL_WORDS:
        return False
    words = re.findall(r"[^\W\d_]+", line.lower())
    topic = re.findall(r"[^\W\d_]+", _PARENTHESES.sub(" ", line.lower()))
    if len(topic) == 1 and topic[0] not in _OUTCOMES:
        return True
    return all(w in _LABEL_VOCABULARY for w in words)


def _line_ends_sentence(line: str) -> bool:
    end = _LINE_ENDS_SENTENCE.search(line)
    if end is None:
        return False
    before = line[: end.start()].rsplit(None, 1)
    word = before[-1].lstrip(_LEADING_PUNCT) if before else ""
    return not word or _ends_a_word(line[end.start()], word)


def _cut_at_wrap(line: str) -> bool:
    """A line long enough to have been cut by a hard wrap, cut after a word."""
    return len(line) >= _WRAP_WIDTH and line[-1].isalnum()


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
    """``text`` with its markup and labels taken out and a blank line wherever a block ends:
    a list item, heading, lead-in, quote, table cell, HTML block, a line that starts or ends
    a sentence. An invented sentence set as the next bullet, in the next <p> or after "**"
    was read as one sentence with the copied one before it, and passed with it (a check of
    2026-12-06; docs/grounding.md lists the layouts since)."""
    if "<" in text:
        text = _HTML_TAG.sub(" ", _HTML_BLOCK.sub("\n\n", _without_comments(text)))
    if "&" in text:
        text = html.unescape(text)
    if "\n" not in text and "\\n" in text:  # sent escaped twice: "zijn.\\nHet" is a line break
        text = _ESCAPED_BREAK.sub("\n", text)
    text = _INVISIBLE.sub("", text).translate(_STOPS)
    text = _IMAGE.sub(r"\n\n\1\n\n", text)  # an image's alt text says what it says
    text = _BOLD_LEAD.sub(_bold_lead, text)  # "**Let op:** ...", "**Kern** - ..."
    text = _EMPHASIS.sub("", _LINK.sub(r"\1", text))
    # a re-run's layouts (2026-12-06): a footnote after a sentence's mark, a sentence glued
    # to the one before it ("gehandhaafd.Het", "[1]Het"), a bullet sign inside a line
    text = _CLOSING_QUOTE.sub("”", _FOOTNOTE.sub("", text))
    text = _GLUED.sub(" ", text)
    text = _INLINE_BULLET.sub(r"\n\1 ", text)
    blocks: list[str] = []
    current: list[str] = []

    def close() -> None:
        nonlocal current
        if current:
            blocks.append(" ".join(current))
            current = []

    abbreviated = False  # the line before ended in an abbreviation ("art.", "mr.")
    lines = text.splitlines()
    # an answer hard-wrapped at 72-80 characters shows it where a long line is cut before a
    # lower-case word; only there does a long line cut mid-sentence go on after a capital
    # ("... de vordering van<break>Jansen ..."): elsewhere a sentence that starts a line
    # is judged on its own, as an invented one set after a copied line without its stop
    hard_wrapped = any(
        _cut_at_wrap(a.strip()) and b.strip()[:1].islower() and not _LIST_ITEM.match(b)
        for a, b in pairwise(lines)
    )
    wrapped = False  # the line before was cut mid-sentence at a hard wrap
    for raw in lines:
        line = raw.strip()
        if _RULE.fullmatch(line):  # "---", "===": a rule, or a setext heading's underline
            close()
            continue
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
        if (text_of_line[:1].isupper() or text_of_line[:1].isdigit()) and not (
            abbreviated or wrapped
        ):
            close()  # a line that starts a sentence, not one after "art." or "mr." at the
            # end of the line before, nor one after a long line cut mid-sentence (an answer
            # hard-wrapped at 72-80 characters: "... de vordering van<break>Jansen ...")
        heading = item is not None and item.group().strip().startswith("#")
        if _is_label(text_of_line, heading):
            close()  # "## Conclusie", "De rechtbank oordeelt:": states nothing, not judged
            continue
        current.append(text_of_line)
        ends = _line_ends_sentence(line)
        abbreviated = not ends and text_of_line.endswith(".")
        wrapped = hard_wrapped and not heading and not ends and _cut_at_wrap(line)
        if heading or text_of_line.endswith(":") or ends:
            close()  # a heading is one line, a lead-in ends at its colon: their own blocks
    close()
    return "\n\n".join(b for b in blocks if b.strip())


# A paragraph's number standing alone ("6.", "4.2", "(3)"): an answer copied up to the next
# paragraph of a decision ends in it ("... dient te worden vernietigd. 6."). It states
# nothing, so it is neither judged nor shipped (a check of 2026-12-07: such copies were
# flagged for the "6." alone).
_BARE_NUMBER = re.compile(r"[(\[]?\d{1,3}(?:\.\d{1,3})*[.)\]]?")


def answer_sentences(text: str) -> list[str]:
    """The sentences of an answer, each judged on its own: markup is layout (HTML,
    Markdown), each block is read alone, and a sentence may start in lower case."""
    return [
        s
        for s in split_sentences(_answer_blocks(text), lower_case=True)
        if not _BARE_NUMBER.fullmatch(s.strip())
    ]
