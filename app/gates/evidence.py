"""What a sentence says that a passage must hold: content words, facts, negation, markers.

The grounding gate (app/gates/grounding.py) asks of each answer sentence whether one passage
of the returned chunks (a sentence of a chunk, or a window of two or three) holds it. An
encoder alone cannot answer that for Dutch legal prose: the bundled English model scores
almost every pair of Dutch sentences alike, and no encoder notices that "€ 50.000" became
"€ 60.000". So this module gives the gate three encoder-free signals:

- ``Lexical``: the sentence's content words, lower-cased, accents folded, Dutch function
  words dropped and cut to their first ``STEM`` characters ("aansprakelijk" and
  "aansprakelijkheid" are one word); containment is the share of them the passage holds;
- ``facts``: numbers, amounts, percentages, dates, years, ECLIs, article references, case
  numbers and names, each normalised ("€ 50.000" = "50.000 euro", "1 januari 2020" =
  "01-01-2020"), which the supporting passage must hold;
- negation and reversal, in app/gates/negation.py (``negation_mismatch``, ``compound_swap``).

Nothing here touches the database or the encoder.
"""

from __future__ import annotations

import calendar
import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from app.gates.referents import outcome_stem

STEM = 6  # characters of a content word kept: light Dutch stemming by truncation

# Dutch function words (folded), negations included: they carry no content of their own, and
# negation is checked apart (``negation_mismatch``)
_STOPWORD_TEXT = """
    aan al alle alleen als alsmede alsook andere ben bent bij bijvoorbeeld binnen dan dat de
    deze der des die dient dit doch door doordat dus echter een eens en enig enige er
    ermee erop ervan evenals gaat geen geworden had hadden heb hebben heeft het hier hierbij
    hierin hierop hierover hij hoe hoewel hun hen ik in indien is je jegens kan kon konden
    kunnen maar mag me meer men met mij mits moest moet moeten mogen na naar namelijk neer
    niet niets niemand nog noch nooit nu of om omdat onder ons ook op over reeds sinds
    slechts sommige tegen te ten ter terwijl toch toe tot tussen u uit van vanaf vanwege
    veel voor voordat waar waarbij waardoor waarin waarmee waarop waaruit waarvan wanneer
    want waren was wat we wel welk welke werd werden wie wij wil willen word worden wordt
    zal ze zelf zich zij zijn zo zoals zodat zonder zou zouden zullen daar daarbij daarin
    daarmee daarom daarop daarvan daarnaast dergelijk dergelijke evenmin geenszins nergens
    allerminst ieder iedere elk elke zulks zulk zulke eerder thans alsnog aldus ingevolge
    krachtens overeenkomstig blijkens gelet omtrent betreffende inzake per via nimmer
    volgens
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

NEGATIONS = frozenset(
    {
        "niet",
        "geen",
        "nooit",
        "noch",
        "niets",
        "niemand",
        "nergens",
        "geenszins",
        "evenmin",
        "allerminst",
        "nimmer",
        "zonder",
    }
)

NUMBER_WORDS = {
    "twee": "2",
    "drie": "3",
    "vier": "4",
    "vijf": "5",
    "zes": "6",
    "zeven": "7",
    "acht": "8",
    "negen": "9",
    "tien": "10",
    "elf": "11",
    "twaalf": "12",
    "dertien": "13",
    "veertien": "14",
    "vijftien": "15",
    "zestien": "16",
    "zeventien": "17",
    "achttien": "18",
    "negentien": "19",
    "twintig": "20",
    "dertig": "30",
    "veertig": "40",
    "vijftig": "50",
    "zestig": "60",
    "zeventig": "70",
    "tachtig": "80",
    "negentig": "90",
    "honderd": "100",
    "duizend": "1000",
}

MONTHS = {
    "januari": 1,
    "jan": 1,
    "februari": 2,
    "feb": 2,
    "febr": 2,
    "maart": 3,
    "mrt": 3,
    "april": 4,
    "apr": 4,
    "mei": 5,
    "juni": 6,
    "jun": 6,
    "juli": 7,
    "jul": 7,
    "augustus": 8,
    "aug": 8,
    "september": 9,
    "sep": 9,
    "sept": 9,
    "oktober": 10,
    "okt": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}

# citation markers that end a sentence: "[2]", "[1, 3]", "[2-4]", possibly several, after
# its full stop (as sentences.py keeps them with their sentence) or before it ("... [2].",
# as language models often write them: the stop is kept with the sentence)
# "[2]", "[1, 3]", "[2-4]", "[ 1 ]", "[+1]"; "[-1]", "[–1]" and "[0]" cite no result (out of
# range). Possessive: every separator between two numbers is optional, so a run of digits
# (or of spaces) could be cut into numbers in exponentially many ways, each tried again when
# the marker does not end the sentence: "[1] 12-13 [9999999999999999999999] r.o. 3.4" kept a
# grounding request (and its database connection) busy for minutes, a longer run for ever.
_MARKER_TEXT = r"\[\s*+([-−–+]?\s*+\d++(?:\s*+[,;]?\s*+[-−–+]?\s*+\d++)*+)\s*+\]"
# (a list item's marker may stand before its ";" or ",": "... verstrijkt [2];"). Not started
# within a run of spaces (the match from the run's first space is the same one, and the
# search retried every later space of the run: quadratic in it)
_MARKERS_AT_END = re.compile(rf"(?<!\s)(?:\s*{_MARKER_TEXT})+\s*([.!?…;:,]*)\s*$")
_RANK_DIGITS = 9  # a longer rank is out of range whatever it is (and int() refuses 4,300+)
_MARKER = re.compile(_MARKER_TEXT)

_WORD = re.compile(r"[a-z]+")
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_ECLI = re.compile(r"\bECLI:[A-Z]{2}:[A-Z0-9]{1,7}:\d{4}:[A-Z0-9.]{1,25}[A-Z0-9]", re.I)
# An article's number; its letter may stand after a space ("artikel 32 d", "art. 3 a" are
# 32d and 3a), when it is one lower-case letter alone: not the word after the number
# ("artikel 3 van", "artikel 6 en 7", "artikel 3 lid 2"), an abbreviation ("art. 3 e.v.",
# "c.q."), "t/m", "j°" (juncto) or "a contrario" (a review).
_LETTER = r"(?:[a-z]|[ \u00a0](?-i:[a-z])(?![\w/’'°-]|\.\w|\s+contrario))?"
_ARTICLE_NUMBER = rf"(\d+{_LETTER}(?:[:.]\d+{_LETTER})*)"
_ARTICLE = re.compile(r"\b(?:artikelen|artikel|artt?\.?)\s*" + _ARTICLE_NUMBER, re.I)
# An article's paragraph and item, as decisions write them: "artikel 15, lid 2, letter b",
# "art. 365 lid 1 aanhef en onder c", "artikel 15, tweede lid, sub b". A check of 2026-12-06
# changed "letter b" to "letter c" and "lid 2" to "lid 3": the article number held, the
# paragraph was a bare number in the window and the letter no fact at all, so both passed.
_ORDINAL_WORDS = "eerste tweede derde vierde vijfde zesde zevende achtste negende tiende"
_ORDINALS = {word: str(n) for n, word in enumerate(_ORDINAL_WORDS.split(), start=1)}
_PART = (
    rf"(?:(?:lid|leden)\s*(?P<lid>\d+)|(?P<ordinal>{'|'.join(_ORDINALS)})\s+lid"
    r"|aanhef(?:\s+en)?|(?:letter|onder|sub|onderdeel)\s*(?P<item>[a-z](?![\w-])|\d+[a-z]?))"
)
_ARTICLE_PARTS = re.compile(
    r"\b(?:artikel|artt?\.?)\s*" + _ARTICLE_NUMBER + r"((?:[\s,]+" + _PART + r")+)", re.I
)
_ONE_PART = re.compile(_PART, re.I)
_DATE_WORDS = re.compile(
    rf"\b(\d{{1,2}})(?:e|ste|de)?\s+({_MONTH_NAMES})\.?(?:\s+(\d{{4}}))?\b", re.I
)
_DATE_DIGITS = re.compile(r"\b(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})\b")
_DATE_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_NUM = r"\d+(?:[.\s]\d{3})*(?:,\d+)?|\d+(?:,\d+)?"
_SCALE = r"(?:\s*(miljoen|mln\.?|miljard|mrd\.?))?"
# Other currencies too: "$ 123.500" was read as a bare number, which a passage stating
# "f 123.500,--" holds, so a swapped currency passed (a check of 2026-12-06). A mark
# written in letters starts a word: "Programma Aanpak Stikstof 2015-2021" is no f 2015 (a
# check of 2026-12-07: the name "Stikstof" lost its "f", and the copied sentence was
# flagged as naming "Stiksto").
_AMOUNT_BEFORE = re.compile(
    r"(€|ƒ|\$|£|¥|(?<![^\W\d_])(?:eur\b|euro\b|hfl\.?|fl\.?|f\s?(?=\d)|us\$|usd\b|gbp\b|chf\b"
    r"|jpy\b|dm\b|dem\b))"
    rf"\s*({_NUM})(?:,[-–]{{1,2}})?{_SCALE}",
    re.I,
)
_AMOUNT_AFTER = re.compile(
    rf"\b({_NUM}){_SCALE}\s*(euro|eur|gulden|dollars?|usd|ponden|pond|gbp|yen|jpy|"
    rf"zwitserse\s+frank|frank|francs?|chf|mark|dem)\b",
    re.I,
)
_CURRENCIES = {
    **dict.fromkeys(("€", "eur", "euro"), "EUR"),
    **dict.fromkeys(("$", "us$", "usd", "dollar", "dollars"), "USD"),
    **dict.fromkeys(("£", "gbp", "pond", "ponden"), "GBP"),
    **dict.fromkeys(("¥", "jpy", "yen"), "JPY"),
    **dict.fromkeys(("chf", "zwitserse frank"), "CHF"),
    **dict.fromkeys(("frank", "franc", "francs"), "FRANK"),
    **dict.fromkeys(("dm", "dem", "mark"), "DEM"),
}
_PERCENT = re.compile(rf"\b({_NUM})\s*(%|procent\b|pct\b)", re.I)
_CASE_NUMBER = re.compile(r"\b(?:[A-Z]{1,4}\s?)?\d+(?:[./]\d+)*/\d+(?:[./-]\d+)*\b")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NAME = re.compile(r"(?<!\w)[A-Z][\w’'-]*")  # a word that starts upper case ("pH" has none)
# "acht" as a verb ("Evenmin acht het College ...", "Het hof acht aannemelijk dat ..."), not 8
_VERB_ACHT = re.compile(
    r"\s+(?:het|de|een|hij|zij|ze|ik|wij|we|men|zich|dit|dat|deze|die|u|hem|haar|niet|geen|"
    r"wel|ook|dan|daarom|derhalve|echter|evenmin|eveneens|aannemelijk|bewezen|voldoende|"
    r"onvoldoende|(?:on)?juist|(?:on)?redelijk|(?:on)?aanvaardbaar|gerechtvaardigd|"
    r"noodzakelijk|(?:on)?gegrond|aanwezig|termen|geraden|door|in|op|voor|met|bij|zulks|"
    r"nodig|geboden|mogelijk|raadzaam|wenselijk)\b",
    re.I,
)
_ANONYMISED = re.compile(r"\[([^\]\d][^\]]{0,60})\]")


def fold(text: str) -> str:
    """Lower case, accents folded ("één" -> "een", "Curaçao" -> "curacao")."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def words(text: str) -> list[str]:
    """The folded words of ``text`` (letters only; numbers are facts)."""
    return _WORD.findall(fold(text))


def stem(word: str) -> str:
    return word[:STEM]


def content_stems(text: str, facts: Sequence[Fact] | None = None) -> set[str]:
    """The distinct content words of ``text``, stemmed (an outcome word as its outcome:
    referents.outcome_stem): what containment counts. With the
    ``facts`` read from it, the words of their spans leave out (a name's word stays): the
    facts are checked for themselves, and "artikel", "euro", a month or the letters of an
    ECLI would otherwise count again, in one spelling of the fact only ("art." or
    "artikel", "EUR" or "€")."""
    return {outcome_stem(w) or stem(w) for w in said_words(text, facts) if content_word(w)}


def said_words(text: str, facts: Sequence[Fact] | None = None) -> list[str]:
    """The folded words of ``text`` outside its facts' spans (a name's word stays), stop
    words included: what `content_stems` reads."""
    if facts:
        text = _blank(text, [f.span for f in facts if f.kind != "name"])
    return words(text)


def content_word(word: str) -> bool:
    """A folded word that containment counts (not a stop word, not a single letter)."""
    return len(word) > 1 and word not in STOPWORDS


# --- markers -------------------------------------------------------------------------------


def split_markers(sentence: str) -> tuple[str, list[int]]:
    """The sentence without its trailing citation markers (its final stop kept), and the
    ranks they cite (in order, without repeats; "[2-4]" cites 2, 3 and 4; a reversed or
    very wide range, "[9-7]", cites its two ends)."""
    found = _MARKERS_AT_END.search(sentence)
    if found is None:
        return sentence, []
    ranks: list[int] = []
    for marker in _MARKER.findall(found.group(0)):
        joined = re.sub(r"\s*([–−+-])\s*", r"\1", marker.strip())  # "1 - 3" is "1-3"
        for written in re.split(r"[,;\s]+", joined):
            part = written.lstrip("+")
            if part[:1] in ("-", "−", "–"):  # a negative rank: no result has it
                ranks.extend(r for r in [0] if r not in ranks)
                continue
            bounds = [
                int(x) if len(x) <= _RANK_DIGITS else 10**_RANK_DIGITS
                for x in re.split(r"[–−+-]", part)
                if x
            ]
            low, high = bounds[0], bounds[-1]
            span = range(low, high + 1) if 0 <= high - low <= 100 else [low, high]
            ranks.extend(r for r in span if r not in ranks)
    return sentence[: found.start()].rstrip() + found.group(2), ranks


# --- facts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """One checkable fact: ``kind`` and normalised ``value``; ``text`` as written."""

    kind: str  # ecli, article, date, day, amount, percent, case_number, number, name
    value: str
    text: str
    span: tuple[int, int] = field(default=(0, 0), compare=False)  # where, in what was read


def _number(raw: str, scale: str | None = None) -> str:
    """Dutch notation to a plain decimal: "50.000" -> "50000", "1,5" -> "1.5"."""
    digits = re.sub(r"[.\s]", "", raw).replace(",", ".")
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    digits = digits.lstrip("0") or "0"
    if scale:
        factor = 1_000_000_000 if scale.lower().startswith(("miljard", "mrd")) else 1_000_000
        value = float(digits) * factor
        return str(int(value)) if value.is_integer() else str(value)
    return digits


def _currency(mark: str) -> str:
    """The currency a mark names; guilders (ƒ, f, fl., hfl., gulden) otherwise."""
    return _CURRENCIES.get(" ".join(mark.lower().strip(". ").split()), "NLG")


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def extract_facts(text: str, *, skip_first_word: bool = True) -> list[Fact]:
    """The facts ``text`` states. Each span is read once, most specific kind first (an ECLI
    before its year, an amount before its number). A capitalised word counts as a name
    except the text's first word (any sentence starts with a capital)."""
    facts: list[Fact] = []
    taken: list[tuple[int, int]] = []

    def take(pattern: re.Pattern[str], source: str, build: object) -> str:
        for m in pattern.finditer(source):
            fact = build(m)  # type: ignore[operator]
            if fact is not None:
                facts.append(replace(fact, span=m.span()))
                taken.append(m.span())
        out = _blank(source, taken)
        taken.clear()
        return out

    rest = take(_ECLI, text, lambda m: Fact("ecli", m.group(0).upper(), m.group(0)))
    rest = take(_DATE_ISO, rest, lambda m: _date(m.group(3), m.group(2), m.group(1), m.group(0)))
    rest = take(_DATE_DIGITS, rest, lambda m: _date(m.group(1), m.group(2), m.group(3), m.group(0)))
    rest = take(
        _DATE_WORDS,
        rest,
        lambda m: _named_date(m.group(1), str(MONTHS[m.group(2).lower()]), m.group(3), m.group(0)),
    )
    rest = take(
        _AMOUNT_BEFORE, rest, lambda m: _amount(m.group(1), m.group(2), m.group(3), m.group(0))
    )
    rest = take(
        _AMOUNT_AFTER, rest, lambda m: _amount(m.group(3), m.group(1), m.group(2), m.group(0))
    )
    rest = take(_PERCENT, rest, lambda m: Fact("percent", _number(m.group(1)), m.group(0)))
    parts = _article_parts(rest)
    facts.extend(parts)
    rest = take(_ARTICLE, rest, lambda m: Fact("article", _article_number(m.group(1)), m.group(0)))
    # the numbers of an article's paragraph and item are the article_part's, not bare
    # numbers: "art. 7:268 lid 3 sub b" against "artikel 7:268, derde lid, sub b" was
    # flagged for a "3" the passage writes as a word (a check of 2026-12-07)
    rest = _blank(rest, [f.span for f in parts])
    rest = take(
        _CASE_NUMBER,
        rest,
        lambda m: Fact("case_number", re.sub(r"\s", "", m.group(0)).upper(), m.group(0)),
    )
    rest = take(_NUMBER, rest, lambda m: Fact("number", _number(m.group(0)), m.group(0)))
    facts.extend(
        Fact("name", fold(m.group(1)).strip(), m.group(0), m.span())
        for m in _ANONYMISED.finditer(rest)
    )
    rest = _ANONYMISED.sub(lambda m: " " * len(m.group(0)), rest)
    for m in re.finditer(r"[A-Za-zÀ-ÿ]+", rest):
        word = m.group(0)
        folded = fold(word)
        if folded == "acht" and _VERB_ACHT.match(rest, m.end()):
            continue  # "acht het College", "acht de rechtbank aannemelijk": the verb
        # "een achttal overtredingen": a collective numeral is its number (a check of
        # 2026-12-06 wrote "een tiental" for it, and it passed)
        value = NUMBER_WORDS.get(folded) or (
            NUMBER_WORDS.get(folded[:-3]) if folded.endswith("tal") else None
        )
        if value is not None:
            facts.append(Fact("number", value, word, m.span()))
    first = re.search(r"[^\W\d_]", text)
    for m in _NAME.finditer(rest):
        if skip_first_word and first is not None and m.start() == first.start():
            continue
        name = fold(m.group(0)).strip("’'-")
        if name and name not in STOPWORDS and fold(m.group(0)) not in NUMBER_WORDS:
            facts.append(Fact("name", name, m.group(0), m.span()))
    return facts


def _article_number(written: str) -> str:
    """An article's number as a fact: "6:162", "32d" for "32 d", "3:2" for "3.2"."""
    return re.sub(r"\s", "", written).lower().replace(".", ":")


def _article_parts(text: str) -> list[Fact]:
    """An "article_part" fact per article cited with its paragraph or item: "15|2|b" for
    "artikel 15, lid 2, letter b" (an empty field for a part not named)."""
    out = []
    for m in _ARTICLE_PARTS.finditer(text):
        lid = item = ""
        for part in _ONE_PART.finditer(m.group(2)):
            if part["lid"] or part["ordinal"]:
                lid = lid or part["lid"] or _ORDINALS[part["ordinal"].lower()]
            elif part["item"]:
                item = item or part["item"].lower()
        if lid or item:
            article = _article_number(m.group(1))
            out.append(Fact("article_part", f"{article}|{lid}|{item}", m.group(0), m.span()))
    return out


_WORD_AS_WRITTEN = re.compile(r"[^\W\d_][\w’'-]*")


def proper_names(sentences: Sequence[str]) -> frozenset[str]:
    """The words that ``sentences`` write capitalised inside a sentence and never in lower
    case (folded): "Helderglas" in "... leverde Helderglas ...", not "Gelet" (only ever at a
    sentence's start) nor "Hof" if "hof" occurs too."""
    capitalised: set[str] = set()
    lower: set[str] = set()
    for sentence in sentences:
        for i, m in enumerate(_WORD_AS_WRITTEN.finditer(sentence)):
            word = m.group(0)
            folded = fold(word).strip("’'-")
            if word[0].islower():
                lower.add(folded)
            elif i > 0 and word[0].isupper():
                capitalised.add(folded)
    return frozenset(
        n
        for n in capitalised - lower
        if len(n) > 1 and n not in STOPWORDS and n not in NUMBER_WORDS
    )


def leading_name(sentence: str, names: frozenset[str]) -> Fact | None:
    """The first word of ``sentence`` as a name fact, when the returned chunks use it as a
    proper name (``proper_names``): "Glastech sluit ..." for "Helderglas sluit ..." then needs
    a passage that names Glastech. Other capitalised first words are sentence openers."""
    m = _WORD_AS_WRITTEN.search(sentence)
    if m is None or not m.group(0)[0].isupper():
        return None
    folded = fold(m.group(0)).strip("’'-")
    return Fact("name", folded, m.group(0)) if folded in names else None


def _amount(currency: str, number: str, scale: str | None, text: str) -> Fact:
    return Fact("amount", f"{_currency(currency)} {_number(number, scale)}", text.strip())


def _date(day: str, month: str, year: str | None, text: str) -> Fact | None:
    d, mo = int(day), int(month)
    if not 1 <= mo <= 12:
        return None
    # 29 February without a year may be a leap year's
    last = calendar.monthrange(int(year) if year and int(year) > 0 else 2000, mo)[1]
    if not 1 <= d <= last:
        return None
    if year is None:
        return Fact("day", f"{mo:02d}-{d:02d}", text)
    return Fact("date", f"{int(year):04d}-{mo:02d}-{d:02d}", text)


def _named_date(day: str, month: str, year: str | None, text: str) -> Fact:
    """A day and a month's name are a date, a possible one or not: "34 februari 1990" is a
    date no passage can hold (its "34" is no number to be found elsewhere)."""
    impossible = f"impossible: {year or ''}-{int(month):02d}-{int(day):02d}"
    return _date(day, month, year, text) or Fact("date", impossible, text)


# --- what a fact is bound to ---------------------------------------------------------------

BOUND_KINDS = frozenset({"amount", "date", "percent", "number"})
_BIND = 4  # content words either side of an amount, date or percentage: what it is said of
_SITE_REACH = 500  # characters either side of a value in which its clause's words are read
# a clause ends at "; " or at ". ", "! ", "? " before a capital (not "ca. 8%", "d.d. 1 mei")
_CLAUSE_END = re.compile(r";\s|[.!?]\s+(?=[\[(A-ZÀ-ÖØ-Þ])")
# words by which a clause refers back to what an earlier one said ("Per 1 januari 2024 is
# deze verhoogd tot € 1.200"): what its value is said of stands in that earlier clause
_REFERS_BACK_TEXT = """
    deze dit hij zij ze hiervan daarvan hierop daarop hiermee daarmee hierdoor daardoor
    hiervoor daarvoor hierbij daarbij hiertoe daartoe
"""
REFERS_BACK = frozenset(_REFERS_BACK_TEXT.split())


@dataclass(frozen=True)
class FactSite:
    """An amount, date or percentage as a text states it: the content stems around it in its
    own clause (``_BIND`` either side, other numeric facts left out), and whether that clause
    refers back to an earlier one (``REFERS_BACK``)."""

    fact: Fact
    around: frozenset[str]
    refers_back: bool


def fact_sites(text: str, facts: Sequence[Fact]) -> list[FactSite]:
    """The sites of the amounts, dates and percentages of ``facts`` (read from ``text``):
    "de huurachterstand van € 36.250" binds € 36.250 to "huurac"."""
    bound = [f for f in facts if f.kind in BOUND_KINDS]
    if not bound:
        return []
    blanked = _blank(text, [f.span for f in facts if f.kind != "name"])
    # only _SITE_REACH characters either side of a value are read, folded once (folding
    # acts on each character alone): a text of thousands of values in one clause would
    # otherwise cost time quadratic in its length (an answer of 200,000 characters ran for
    # many minutes)
    pieces = [fold(c) for c in blanked]
    folded = "".join(pieces)
    at = [0, *itertools.accumulate(len(p) for p in pieces)]  # blanked index -> folded index
    out = []
    for fact in bound:
        start, end = fact.span
        reach = max(0, start - _SITE_REACH)
        left_start, right_end = reach, min(len(blanked), end + _SITE_REACH)
        ends = list(_CLAUSE_END.finditer(blanked, reach, start))
        if ends:
            left_start = ends[-1].end()
        cut = _CLAUSE_END.search(blanked, end, right_end)
        if cut is not None:
            right_end = cut.start()
        left = blanked[left_start:start]
        left_words = _WORD.findall(folded, at[left_start], at[start])
        right_words = _WORD.findall(folded, at[end], at[right_end])
        # a clause whose opening lies beyond the reach is not known to open with the number:
        # its site is kept (judged, never passed over unseen)
        opens = not (reach and not ends) and not re.search(r"[^\W_]", left)
        if fact.kind == "number" and opens:
            continue  # a number that opens a clause numbers it ("4.5. De inspecteur ...")
        before = [stem(w) for w in left_words if len(w) > 1 and w not in STOPWORDS]
        after = [stem(w) for w in right_words if len(w) > 1 and w not in STOPWORDS]
        back = any(w in REFERS_BACK for w in (*left_words, *right_words))
        out.append(FactSite(fact, frozenset(before[-_BIND:] + after[:_BIND]), back))
    return out


@dataclass(frozen=True)
class FactIndex:
    """What a passage holds, for ``missing_facts``: every fact with the forms it implies (a
    date holds its year and day, an amount its number), and its folded words; for
    ``misbound_facts``, each amount, date and percentage with what it is said of."""

    values: frozenset[tuple[str, str]]
    words: frozenset[str]
    currencies: dict[str, frozenset[str]] = field(default_factory=dict)
    sites: tuple[FactSite, ...] = ()


def index_facts(text: str, facts: list[Fact] | None = None) -> FactIndex:
    """``facts``: ``extract_facts(text, skip_first_word=False)`` when the caller has it."""
    values: set[tuple[str, str]] = set()
    currencies: dict[str, set[str]] = {}
    if facts is None:
        facts = extract_facts(text, skip_first_word=False)
    for fact in facts:
        values.add((fact.kind, fact.value))
        if fact.kind == "date":
            year, month, day = fact.value.split("-")
            values.add(("day", f"{month}-{day}"))
            values.add(("number", year.lstrip("0")))
            values.add(("number", str(int(day))))
        elif fact.kind == "amount":
            currency, number = fact.value.split(" ")
            values.add(("number", number))
            currencies.setdefault(number, set()).add(currency)
        elif fact.kind == "percent":
            values.add(("number", fact.value))
        elif fact.kind in ("article", "case_number", "ecli"):
            for part in re.findall(r"\d+", fact.value):
                values.add(("number", part.lstrip("0") or "0"))
        elif fact.kind == "article_part":
            # a passage that names the paragraph and the item holds a sentence naming less
            article, lid, item = fact.value.split("|")
            values.update(
                ("article_part", f"{article}|{a}|{b}") for a in {lid, ""} for b in {item, ""}
            )
            values.add(("article", article))
            # "lid 3 van artikel 7:268" reads the paragraph as a bare number
            values.update(("number", n) for n in (lid, item) if n.isdigit())
    return FactIndex(
        frozenset(values),
        frozenset(words(text)),
        {k: frozenset(v) for k, v in currencies.items()},
        tuple(fact_sites(text, facts)),
    )


def document_facts(title: str) -> FactIndex | None:
    """What a chunk's document title states (the ECLI, court, date and parties of a
    decision: "ECLI:NL:HR:1994:AA3004 (Hoge Raad, 1994-11-09)"): every passage of the chunk
    holds it too, as the search result showed it beside the chunk. None for no title."""
    return index_facts(title) if title.strip() else None


def title_stems(document: FactIndex | None) -> set[str]:
    """The content words of a document's title, stemmed (``document_facts``)."""
    if document is None:
        return set()
    return {stem(w) for w in document.words if w not in STOPWORDS}


def with_document(held: FactIndex, document: FactIndex | None) -> FactIndex:
    """``held`` and the facts and words of its document's title (``document_facts``); what
    each value is said of stays the passage's own."""
    if document is None:
        return held
    currencies = dict(held.currencies)
    for number, marks in document.currencies.items():
        currencies[number] = currencies.get(number, frozenset()) | marks
    return FactIndex(
        held.values | document.values, held.words | document.words, currencies, held.sites
    )


def missing_facts(facts: Iterable[Fact], held: FactIndex) -> list[Fact]:
    """The facts of a sentence that the passage does not hold."""
    out: list[Fact] = []
    for fact in facts:
        if fact.kind == "name":
            ok = all(
                w in held.words or w + "s" in held.words or w.removesuffix("s") in held.words
                for w in words(fact.value)
            )
        elif fact.kind == "amount":
            currency, number = fact.value.split(" ")
            ok = (fact.kind, fact.value) in held.values or (
                ("number", number) in held.values
                and currency in held.currencies.get(number, frozenset({currency}))
            )
        elif fact.kind == "percent":
            ok = ("percent", fact.value) in held.values or ("number", fact.value) in held.values
        elif fact.kind == "number":
            ok = ("number", fact.value) in held.values
        else:
            ok = (fact.kind, fact.value) in held.values
        if not ok:
            out.append(fact)
    return out


def misbound_facts(sites: Iterable[FactSite], held: FactIndex) -> list[Fact]:
    """The amounts, dates and percentages of a sentence (its ``sites``) that the passage
    holds, but said of something else: no word around the value in the sentence is around it
    where the passage states it, and at least two are around another value of its kind. "De
    huur is per 15 april 2024 opgezegd" against "De huur is per 1 maart 2024 opgezegd; de
    woning moet op 15 april 2024 zijn ontruimd". Not judged: a value stated in a clause that
    refers back ("... is deze verhoogd tot € 1.200": what it is said of stands earlier), and
    one swapped within a clause (two values of one clause share their words, and a sentence
    may word the clause the other way round). A value the passage holds only in another form
    (a year, a bare number) is left to ``missing_facts``."""
    out: list[Fact] = []
    for site in sites:
        fact = site.fact
        own = [h for h in held.sites if (h.fact.kind, h.fact.value) == (fact.kind, fact.value)]
        if not own or any(h.refers_back or site.around & h.around for h in own):
            continue
        others = (h for h in held.sites if h.fact.kind == fact.kind and h.fact.value != fact.value)
        if any(len(site.around & h.around) >= 2 for h in others):
            out.append(fact)
    return out
