"""European Case Law Identifiers found in free text (drafts, relations, answers): one module
that both the citation gate (app.gates) and case-law ingestion (app.caselaw) use, so neither
imports the other for it.

Grammar (Council conclusions 2011/C 127/01): ``ECLI:<country>:<court>:<year>:<ordinal>``
with a two-letter upper-case country code, a court code of 1-7 letters or digits, a
four-digit year and an ordinal of at most 25 letters, digits and dots that does not end in
a dot. Only the literal prefix is matched case-insensitively (drafts say "ecli:"); the rest
must already be well formed, because a "nearly ECLI" that we silently repair would be
checked against the wrong decision. The citation gate, which must fail closed, also lists
what a reader would take for an ECLI but is not one as written, and reads the ordinals
listed after an ECLI ("ECLI:NL:HR:2019:1278, 1279 en 1280") as ECLIs (`find_citations`).
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from app.types import CONTROL

MAX_ORDINAL = 25

# The ordinal is matched greedily including dots, then trailing dots are dropped: a
# sentence-final "." belongs to the prose, not to the identifier.
_GRAMMAR = (
    r"(?i:ecli):"
    r"(?P<country>[A-Z]{2}):"
    r"(?P<court>[A-Z0-9]{1,7}):"
    r"(?P<year>[0-9]{4}):"
    r"(?P<ordinal>[A-Za-z0-9.]+)"
)
# In relations and drafts: the look-behind keeps "XECLI:..." and ":ECLI:..." (part of some
# longer token) out, and any ":" after the ordinal makes it a sixth part.
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9:])" + _GRAMMAR)
# For the citation gate: wherever it stands ("bron:ECLI:...", "(zie ECLI:...)"), and a ":"
# after the ordinal is punctuation before a space or the end, a sixth part otherwise.
_WRITTEN = re.compile(_GRAMMAR)

_EXACT = re.compile(r"ECLI:[A-Z]{2}:[A-Z0-9]{1,7}:[0-9]{4}:[A-Za-z0-9.]{0,24}[A-Za-z0-9]")


def _accepted_matches(
    pattern: re.Pattern[str], text: str, *, colon_ends: bool
) -> Iterator[tuple[re.Match[str], str]]:
    """Each match of ``pattern`` that is an ECLI, with the ECLI (prefix upper-cased), in
    order. A ":" right after the ordinal makes a sixth part ("ECLI:NL:HR:2019:1:2" is
    malformed, not ECLI:NL:HR:2019:1 followed by noise); with ``colon_ends`` not before a
    space or the end."""
    for match in pattern.finditer(text):
        ordinal = match["ordinal"].rstrip(".")
        if not ordinal or len(ordinal) > MAX_ORDINAL:
            continue
        after = text[match.end() : match.end() + 2]
        if after[:1] == ":" and not (colon_ends and not after[1:2].isalnum()):
            continue
        yield match, f"ECLI:{match['country']}:{match['court']}:{match['year']}:{ordinal}"


def _accepted(pattern: re.Pattern[str], text: str, *, colon_ends: bool) -> Iterator[str]:
    """Each ECLI ``pattern`` finds (`_accepted_matches`), in order, once per occurrence."""
    for _, ecli in _accepted_matches(pattern, text, colon_ends=colon_ends):
        yield ecli


def _scan(pattern: re.Pattern[str], text: str, *, colon_ends: bool) -> dict[str, None]:
    """The ECLIs ``pattern`` finds (`_accepted`), first appearance first, each once."""
    return dict.fromkeys(_accepted(pattern, text, colon_ends=colon_ends))


def extract_eclis(text: str) -> list[str]:
    """Every well-formed ECLI in ``text``, prefix upper-cased, first appearance first."""
    return list(_scan(_CANDIDATE, text, colon_ends=False))


def is_ecli(value: str) -> bool:
    """True when ``value`` is exactly one well-formed ECLI (upper-case prefix)."""
    return _EXACT.fullmatch(value) is not None


def normalize_ecli(value: str) -> str | None:
    """``value`` as a canonical ECLI (prefix upper-cased), or None when it is not one."""
    candidate = value.strip()
    if candidate[:5].lower() == "ecli:":
        candidate = "ECLI:" + candidate[5:]
    return candidate if is_ecli(candidate) else None


# --- what a reader of an answer would take for a citation ----------------------------------

# Letters of other scripts that look like the Latin ones of an ECLI, and colon look-alikes
# that NFKC leaves alone: "ECLI:NL:..." written with a Cyrillic E reads as a citation.
_CYRILLIC_GREEK = (
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u0408\u0405"
    "\u0501\u0430\u0435\u043e\u0440\u0441\u0445\u0456\u0458\u0455"
    "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a7\u03a5"
)
_LATIN = "ABEKMHOPCTXIJSdaeopcxijsABEZHIKMNOPTXY"
_LOOKALIKES = str.maketrans(
    {
        **dict(zip(_CYRILLIC_GREEK, _LATIN, strict=True)),
        **dict.fromkeys("\ua789\u02f8\u2236\u0589\u05c3\u16ec", ":"),
    }
)
# A separator as a reader takes one: up to three of ":", "%3A", "-" (and the other dashes),
# ".", "_", "/", "\\", ";", "|", "~", "+", "=", "*" (markdown's "**ECLI**:NL:..."), middle
# dots and bullets, with or without spaces; a comma or a double quote only with no space
# around it ("ECLI,NL,HR,...", CSV); or spaces alone. Not a comma before a space, an
# apostrophe or a bracket: prose about ECLIs ("de ECLI's uit 2019", "onder ECLI, op 12
# maart 2019") is no citation.
_MARKS = "%3a|[:;.\\-_/\\\\|~+=*\u00b7\u2022\u2219\u30fb\u2044\u2215\u2010-\u2015\u2212\u2043]"
_SEP = rf"(?:\s*(?:{_MARKS}){{1,3}}\s*|(?:{_MARKS}|[,\"]){{1,3}}|\s+)"
_COURT = r"(?:[^\W_](?: [^\W_]){1,6}|[^\W_]{1,20}(?:[.\-][^\W_]{1,20})?)"
# "ECLI" spelled out letter by letter: "E C L I", "E.C.L.I.", "E. C. L. I.", "E-C-L-I",
# "E_C_L_I" (before, "E. C. L. I.:NL:HR:2019:1278" was no citation at all, and the draft
# passed unchecked). Only with the parts of an ECLI after it does it count.
_GAP = r"[ \t.\-_*\u00b7\u2010-\u2015]{0,3}"
_SPELLED = rf"e{_GAP}c{_GAP}l{_GAP}"
# Anything that reads as ECLI + country + court + year (+ ordinal), whatever the case, the
# separators or what splits it. Matched on the text as a reader sees it.
_LOOSE = re.compile(
    rf"{_SPELLED}[il1|]{_SEP}[^\W\d_]{{1,4}}{_SEP}{_COURT}{_SEP}\d{{2,6}}"
    rf"(?:{_SEP}(?:[\w.:]*[^\W_])?)?",
    re.IGNORECASE,
)
# Also ECLI, country, court and a four-digit year split by commas with spaces, brackets or
# quotes ("ECLI, NL, HR, 1996, AA1742", "ECLI (NL:HR:1996:AA1742)", "ECLI: NL, HR, 2019,
# 1278"), with country and court in capitals and an ordinal after the year: prose ("een
# ECLI (bv. HR, 2019)", "het ECLI (EU, Raad 2011, ...)") has no such capitals or ordinal.
_PART = r"(?:\s*[,:;./\-\"'\u201c\u201d]){1,3}\s*|\s+"
_CAPITALS = re.compile(
    rf"(?i:ecli)(?:(?:\s*[,:;(\[\"'\u201c\u201d\u2018\u2019]){{1,3}}\s*|\s+)"
    rf"[A-Z]{{2}}(?:{_PART})[A-Z0-9]{{1,7}}(?:{_PART})\d{{4}}"
    rf"(?:{_PART})[A-Za-z0-9.]*[A-Za-z0-9]"
)
_MONTHS = ("januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus",
           "september", "oktober", "november", "december")  # fmt: skip
# A well-formed ECLI whose ordinal a reader sees go on: after a hyphen ("...:2020:1-\n5",
# "...:1278-A") or, on the next line, with a token holding a digit ("...:2020:1\n5", a PDF's
# line break; "...:2011:B\nP8730"). Checked as written, the gate confirmed ECLI:NL:HR:2020:1
# for a text that cites HR:2020:15 (a check of 2026-12-06). Not a compound ("...:1278-arrest"),
# a numbered line ("\n2. De rechtbank") or a date ("\n12 januari 2021").
_BREAK = r"(?:\r\n|[\r\n\u2028\u2029\x0b\x0c\x85])"
_GOES_ON = r"(?>[A-Za-z0-9]*[0-9][A-Za-z0-9]*)"  # atomic: one way to read a token
_CONTINUED = re.compile(
    r"(?i:ecli):[A-Z]{2}:[A-Z0-9]{1,7}:[0-9]{4}:[A-Za-z0-9.]{0,24}[A-Za-z0-9]"
    rf"(?:[-\u2010\u2011\u2012\u2013][ \t]*(?:{_BREAK}[ \t]*)?(?:{_GOES_ON}|[A-Z]{{1,3}}\b)"
    rf"|[ \t]*{_BREAK}[ \t]*{_GOES_ON}"
    rf"(?![0-9A-Za-z]|[.)][ \t]+[A-Z]|[ \t]+(?i:{'|'.join(_MONTHS)})\b))"
)
MAX_SHOWN = 100  # characters of a malformed citation named in the gate's answer
# What is left: "ECLI:" right before a letter or digit, or before a part and a colon ("ECLI:
# NL:..."), that no pattern above read, e.g. a letter in the year ("ECLI:NL:HR:2O19:1278")
# or a part split by a space ("ECLI:N L:HR:2019:1278"). Without it the gate answered such a
# draft ok with no citation at all. Prose says "ECLI" without a colon, or "ECLI: de ...".
# Also spelled out ("E. C. L. I.:NL:..."), and before a part split by spaces ("ECLI: N L:").
_PREFIXED = re.compile(
    rf"(?i:{_SPELLED}i\.?)[ \t]*:"
    r"(?:(?=[^\W_])|[ \t]*(?=(?:[^\W_]+|[^\W_](?:[ \t]+[^\W_])+)[ \t]*:))"
)
_WORDS = re.compile(r"\S*(?:[ \t]+(?:[^\W_][ \t]+)*\S*:[^\W_]\S*)*")
# how far the words of an unread prefix are read: what is shown of them is cut at MAX_SHOWN
# characters anyway (a longer stretch of spaces or marks inside them may be shown shorter)
_WORDS_REACH = 4 * MAX_SHOWN
_TRAILING_MARKS = ".,;:!?)]}>\"'\u201d\u2019\u00bb*"


# --- ordinals that follow an ECLI ----------------------------------------------------------

# Decisions cite more decisions of one court and year by their ordinals alone after the first
# ECLI: "ECLI:NL:CRVB:2015:2551 en 2552", "ECLI:NL:HR:2010:BJ9092 en BJ9120" (both in
# ../shared/corpus), "ECLI:NL:HR:2019:1278, 1279 en 1280". Each is a citation of its own: read
# as the first ECLI only, an invented follow-on number passed the gate unchecked. A list goes
# on right after an ECLI or a follow-on with a comma, "en", "and", "of", "or" or "&" (a comma
# and one of these words together too), then a token with a digit; a token without one (a
# word, "NJ", "r.o.", the next "ECLI:...") ends it, and so does anything else after the ECLI,
# so a number after prose never becomes a citation.
_LIST_WORDS = r"(?:en|and|of|or|&)"
# white space, and the invisible characters a reader does not see between the words
_SPACE = r"[\s\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"
_LINK = re.compile(
    rf"(?P<comma>{_SPACE}*,{_SPACE}*(?:{_LIST_WORDS}{_SPACE}+)?)|{_SPACE}+{_LIST_WORDS}{_SPACE}+",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[^\W_]+(?:\.[^\W_]+)*")  # an ordinal as a reader sees one
_MONTH_NAMES = (*_MONTHS, "jan", "feb", "mrt", "apr", "jun", "jul", "aug", "sep", "sept",
                "okt", "nov", "dec", "january", "february", "march", "may", "june", "july",
                "october")  # fmt: skip
# A date, not a follow-on: "ECLI:NL:HR:2019:1278, 12 maart 2019", "..., 12-03-2019".
_DATE_AFTER = re.compile(rf"\s+(?:{'|'.join(_MONTH_NAMES)})\b", re.IGNORECASE)
_NUMERIC_DATE = re.compile(r"\d{1,2}(?P<mark>[-/.])\d{1,2}(?P=mark)\d{2,4}(?![^\W_])")
# A range ("1278 t/m 1280", "1278 - 1280", "1278/1280"): which ordinals lie in it is
# the reader's guess, so it is malformed, not expanded. A hyphen right after an ECLI is
# `_CONTINUED`'s ("...:1278-1280").
_RANGE = re.compile(
    r"(?:\s*(?:t/m|t\.e\.m\.)|\s+(?:tot\s+en\s+met|tot|to|through|until)(?![^\W_]))"
    r"\s*[^\W_]*\d[^\W_]*|\s*[-/\u2010-\u2015]\s*[A-Z]{0,2}\d[^\W_]*",
    re.IGNORECASE,
)
_CONTINUED_MARKS = "-\u2010\u2011\u2012\u2013"
# What may stand right after a follow-on: anything else glued to it ("1279-A", "11-17",
# "1279_x", a soft hyphen) makes it malformed, as it would make the ordinal of an ECLI.
_ENDS_A_FOLLOW_ON = ".,;!?)]}>\"'\u201d\u2019\u00bb*"
_NUMBERED_LINE = re.compile(r"[.)](?:\s|$)")
_LINE_BREAK = re.compile(_BREAK)
_SECTION = re.compile(r"\d+(?:\.\d+)+")
# A number that counts or measures something, not a follow-on: "ECLI:NL:HR:2019:1278, 2
# verdachten", "..., 3 jaar", "... en 2 andere arresten", "..., 10 %". Before, each such
# number was checked as an ECLI of its own (ECLI:NL:HR:2019:2) and the answer blocked or,
# worse, a decision nobody cited shown as cited. Only a closed list of nouns and units that
# no real follow-on stands before ("1279 van de Hoge Raad", "1279 r.o. 3", "1279 m.nt. X" and
# "1279 zijn" stay follow-ons), and only after a number of digits alone.
_COUNTED_NOUNS = (
    "jaar", "jaren", "jr", "maand", "maanden", "mnd", "week", "weken", "wk", "dag", "dagen",
    "uur", "uren", "minuut", "minuten", "seconde", "seconden", "keer", "maal", "x",
    "verdachte", "verdachten", "persoon", "personen", "mensen", "kinderen", "slachtoffers",
    "partijen", "eisers", "gedaagden", "belanghebbenden", "werknemers", "zaken", "arresten",
    "uitspraken", "vonnissen", "beschikkingen", "gevallen", "andere", "anderen", "overige",
    "euro", "EUR", "gulden", "procent", "km", "kilometer", "meter", "kilo", "kilogram", "gram",
    "liter",
)  # fmt: skip
# In lower case as written: "1279 X B.V./Staat" names a party after a follow-on, "2 x" counts.
# "punt(en)" counts ("2 punten aftrek") unless a pinpoint follows: a number, a roman numeral
# or a letter alone ("1279 punt 3.4", "1279 punt iv", "1279 punt b") points into decision
# 1279, which stays a follow-on (checked: a count misread costs a false alarm, not a pass).
_COUNTED = re.compile(
    rf"{_SPACE}*(?:%|\u00d7)|{_SPACE}+(?:{'|'.join(_COUNTED_NOUNS)})(?![^\W_])"
    rf"|{_SPACE}+punt(?:en)?(?![^\W_])"
    rf"(?!{_SPACE}*(?:[0-9]|(?:[ivxlc]+|[IVXLC]+|[^\W\d_])(?![^\W_])))"
)
# Nouns that name decisions, or "other" ones: "1279 en 3 andere arresten" lists a follow-on
# and a count, so their count is not shared by the numbers before it (`_counts_from`).
_UNSHARED_NOUNS = ("andere", "anderen", "overige", "zaken", "arresten", "uitspraken", "vonnissen",
               "beschikkingen", "gevallen")  # fmt: skip
_UNSHARED = re.compile(rf"{_SPACE}+(?:{'|'.join(_UNSHARED_NOUNS)})(?![^\W_])")
# How numbers that share one count are joined: "2 en 3 verdachten", "2, 3 of 4 jaar", "2 tot
# 3 jaar", "2-3 jaar", "12 à 18 maanden".
_COUNT_JOIN = re.compile(
    rf"{_SPACE}*(?:,{_SPACE}*(?:(?:en|of){_SPACE}+)?|[-\u2010-\u2015]{_SPACE}*|t/m{_SPACE}*)"
    rf"|{_SPACE}+(?:en|of|tot{_SPACE}+en{_SPACE}+met|tot|\u00e0|a){_SPACE}+"
)
_COMMA_ALONE = re.compile(rf"{_SPACE}*,{_SPACE}*")
_DIGITS = re.compile(r"[0-9]+(?![^\W_])")
# "2e alinea", "3de volzin", "1ste aanleg": a Dutch ordinal numeral before a word; no Dutch
# court's ECLI ordinal reads so (digits alone, or an LJN: two letters and four digits). Not
# "1279e" or "2e" alone: a mistyped follow-on stays one, checked and failing closed.
_NUMERAL = re.compile(rf"\d{{1,2}}(?:e|de|ste)(?={_SPACE}+[a-z])")
# "2x bevestigd" (twice), "4°" (an item of a list): no Dutch ordinal reads so either.
_TIMES_OR_ITEM = re.compile(r"[0-9]{1,2}(?:x(?![^\W_])|[\u00b0\u00ba])")
# A case number ("zaaknummer") after an ECLI, not a range of follow-ons: "ECLI:NL:HR:2015:1360,
# 13/04993" (../shared/corpus writes "HR 29 mei 2015, 13/04993, ECLI:NL:HR:2015:1360"),
# "ECLI:NL:CRVB:2014:1663, 11-17 WW-V" (corpus), "..., 18/1234 WW": two digits of a year, a
# slash and four to six digits (after a hyphen only with a leading zero), or either before a
# capital subject code. "1278 - 1280", "1279 t/m 1285", "12-1279", "12-13 en 14" and "12/13"
# stay malformed ranges.
_CASE_NUMBER = re.compile(
    rf"[0-9]{{2}}(?:/[0-9]{{4,6}}|[-/]0[0-9]{{3,5}}|[-/][0-9]{{1,6}}{_SPACE}+"
    r"(?!(?:EN|OF|AND|OR|ECLI)(?![^\W_]))[A-Z]{2,6}[0-9]{0,2}(?:-[A-Z]{1,2})?)(?![^\W_:/-])"
)
# An application number of the European Court of Human Rights after its ECLI: "EHRM 10 januari
# 2012, ECLI:CE:ECHR:2012:0110JUD004613011, 46130/11": one to six digits, a slash and the
# two digits of a year. An ECHR ordinal ("0110JUD004613011") never holds a slash, so this
# ends the list; it read as a malformed range and blocked the answer.
_APPLICATION_NUMBER = re.compile(r"[0-9]{1,6}/[0-9]{2}(?![^\W_]|[/\u2010-\u2015-])")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class _FollowOn:
    ecli: str | None  # the follow-on as a full ECLI (None when malformed)
    malformed: str | None  # what reads as one but is not, shown as read


def _follow_ons(text: str, head: re.Match[str], ecli: str) -> Iterator[_FollowOn]:
    """The ordinals listed after the ECLI of ``head`` (its ECLI ``ecli``), in order: each as
    a full ECLI of the same country, court and year, or as a malformed stretch (a range, a
    token glued to something else, a part not well formed), after which the list ends. Reads
    each character of the list a bounded number of times."""
    stem = ecli[: ecli.rfind(":") + 1]
    start, end = head.start("ordinal"), head.start("ordinal") + len(ecli) - len(stem)
    token: re.Match[str] | None = None  # the current follow-on; None for the head itself
    run = (0, 0)  # `_counts_from` of the run of numbers last read
    while True:
        if token is None and text[end : end + 1] in _CONTINUED_MARKS:
            pass  # "...:1278-1280" is `_CONTINUED`'s
        elif (span := _RANGE.match(text, end)) is not None:
            yield _FollowOn(None, _shown(stem + text[start : span.end()]))
            return
        if token is not None:
            after = text[end : end + 2]
            if after and not (
                after[0].isspace()
                or after[0] in _ENDS_A_FOLLOW_ON
                or (after[0] == ":" and not after[1:].strip())
            ):  # glued: "1279-A", "11-17 WW", "1279_x", a soft hyphen inside
                word = _WORD.match(text, end)
                yield _FollowOn(None, _shown(stem + text[start : word.end() if word else end]))
                return
            follow_on = stem + token.group(0)
            if not is_ecli(follow_on):  # too long, or letters or digits of other scripts
                yield _FollowOn(None, _shown(follow_on))
                return
            yield _FollowOn(follow_on, None)
        link = _LINK.match(text, end)
        token = _TOKEN.match(text, link.end()) if link else None
        if link is None or token is None or not any(ch.isdigit() for ch in token.group(0)):
            return
        if _DATE_AFTER.match(text, token.end()) or _NUMERIC_DATE.match(text, token.start()):
            return
        if _SECTION.fullmatch(token.group(0)) and stem.startswith("ECLI:NL:"):
            return  # "...:1278, 3.4 en 3.5": a section; no Dutch court's ordinal reads so
        if stem.startswith("ECLI:NL:") and _NUMERAL.match(text, token.start(), token.end() + 64):
            return  # "...:1278, 2e alinea": a Dutch ordinal numeral
        if stem.startswith("ECLI:NL:") and _times_item_or_case(text, token):
            return  # "...:1278, 2x bevestigd", "..., 4°", "..., 13/04993": no ordinal
        if stem.startswith("ECLI:CE:ECHR:") and _APPLICATION_NUMBER.match(text, token.start()):
            return  # "...:0110JUD004613011, 46130/11": the application's number
        if token.group(0).isascii() and token.group(0).isdigit():
            if token.start() >= run[0]:
                run = _counts_from(text, token)
            if token.start() >= run[1]:
                return  # "...:1278, 2 verdachten", "..., 2 en 3 jaar": a count
        comma = link["comma"]
        if comma and _LINE_BREAK.search(comma) and _NUMBERED_LINE.match(text, token.end()):
            return  # "ECLI:...:1278,<line break>2. De rechtbank ...": a numbered line
        start, end = token.start(), token.end()


def _times_item_or_case(text: str, token: re.Match[str]) -> bool:
    """``token`` reads as "2x", "4°" (`_TIMES_OR_ITEM`) or a case number's first part
    (`_CASE_NUMBER`), none of which a Dutch ECLI's ordinal reads as."""
    times = _TIMES_OR_ITEM.match(text, token.start())
    if times is not None and times.end() >= token.end():
        return True
    return _CASE_NUMBER.match(text, token.start()) is not None


def _counts_from(text: str, token: re.Match[str]) -> tuple[int, int]:
    """For ``token``, a number of digits alone: where the run of numbers joined to it
    (`_COUNT_JOIN`) ends, and where the numbers in it that count something begin (the run's
    end when none do). A count noun after the last number counts it, and the numbers before
    it that rise to it and have at most three digits share the count ("2 en 3 verdachten",
    "2, 3 of 4 jaar", "12 à 18 maanden"), unless the noun names decisions or others ("1279 en
    3 andere arresten") or a comma alone joins the last number, as it joins follow-ons: "1279
    en 2 verdachten", "9 en 2 jaar", "6, 7 jaar" and "1279 en 1280 jaar" keep 1279, 9 and 6
    as follow-ons, checked (most ordinals of a court's year have four digits)."""
    numbers = [token]
    comma = False  # the last join is a comma alone
    while (join := _COUNT_JOIN.match(text, numbers[-1].end())) is not None and (
        number := _DIGITS.match(text, join.end())
    ) is not None:
        numbers.append(number)
        comma = _COMMA_ALONE.fullmatch(join.group(0)) is not None
    end = numbers[-1].end()
    if not _COUNTED.match(text, end):
        return end, end
    first = len(numbers) - 1
    if not comma and not _UNSHARED.match(text, end):
        while first and _shares(numbers[first - 1].group(0), numbers[first].group(0)):
            first -= 1
    return end, numbers[first].start()


def _shares(before: str, counted: str) -> bool:
    """``before`` (digits) shares the count of ``counted`` (digits): it has at most three
    digits and is smaller (compared as written: int() of a long number is refused)."""
    value, than = before.lstrip("0"), counted.lstrip("0")
    return len(before) <= 3 and (len(value), value) < (len(than), than)


def _shown(read: str) -> str:
    """A malformed follow-on as the gate names it: whitespace as single spaces, cut short."""
    return named(" ".join(read.split()).rstrip(_TRAILING_MARKS))


CUT_MARK = "\u2026"  # ends a malformed citation that was longer than MAX_SHOWN characters


def _escaped(ch: str) -> str:
    if CONTROL.match(ch) or unicodedata.category(ch) in ("Cf", "Co", "Cn"):
        return ascii(ch)[1:-1]  # "\\x1b", "\\u202e", "\\U000f0000" (private use)
    return ch


def named(seen: str) -> str:
    """A malformed citation as the gate names it, in its answer and in the gates chain: a
    control or invisible character written as its escape ("\\x1b", "\\xad", "\\u202e";
    a backslash stays one: "ECLI\\NL\\HR\\..." is a way of writing an ECLI), so what the
    answer held is on record and no terminal or viewer acts on it; at most MAX_SHOWN
    characters, a cut marked with CUT_MARK. Kept verbatim, an answer's
    "ECLI:NL:HR:2019:12\\x1b[2J" went into the chain as an escape sequence, and a
    5,000-digit ordinal was cut to 100 characters with no sign that it went on."""
    head = seen[: MAX_SHOWN + 1]
    if head.isprintable():  # nothing to escape (every escaped character is unprintable):
        # a draft of prefixes alone names hundreds of thousands, each read in C here
        return seen if len(seen) <= MAX_SHOWN else seen[: MAX_SHOWN - len(CUT_MARK)] + CUT_MARK
    pieces = [_escaped(ch) for ch in head]  # each piece one or more
    if len(seen) <= MAX_SHOWN and sum(map(len, pieces)) <= MAX_SHOWN:
        return "".join(pieces)
    kept, size = [], 0
    for piece in pieces:
        if size + len(piece) > MAX_SHOWN - len(CUT_MARK):
            break
        kept.append(piece)
        size += len(piece)
    return "".join(kept) + CUT_MARK


@dataclass(frozen=True)
class Citations:
    eclis: list[str]  # well formed as written: checked against the source
    malformed: list[str]  # read as citations, not well formed as written: shown as read
    # an ECLI of ``eclis`` whose first appearance is an ordinal listed after another ECLI
    # ("ECLI:NL:HR:2019:1278 en 1279"): the ECLI it follows
    follows: dict[str, str] = field(default_factory=dict)


def _as_read(text: str) -> str:
    """``text`` as a reader sees it: compatibility forms folded (full-width letters and
    digits), invisible format characters (soft hyphen, zero-width space) dropped, and
    look-alike letters and colons mapped to the Latin ones."""
    folded = unicodedata.normalize("NFKC", text)
    visible = "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")
    return visible.translate(_LOOKALIKES)


_FILE_SUFFIX = re.compile(r"_[^\W\d_]{3,}[\w.-]*")


def _file_name_of(seen: str, eclis: dict[str, None]) -> bool:
    """A well-formed ECLI that names a file ("ECLI:NL:HR:2019:1234_bijlage_2.pdf"): what
    follows an underscore and a word of three letters or more is no part of its ordinal;
    anything shorter may be ("..:12_78", "..:12_A34" are malformed)."""
    cut = seen.find("_")  # an ordinal holds no underscore: the ECLI ends before the first
    return cut > 0 and seen[:cut] in eclis and _FILE_SUFFIX.fullmatch(seen[cut:]) is not None


def _inside_longer(found: list[re.Match[str]]) -> set[int]:
    """One stretch read two ways ("ECLI:NL:HR:2019:1:2" and its first five parts): the ids of
    the matches that lie inside a longer one. One sweep in order of start (and longest
    first): comparing every pair cost 86 s for 20,000 near-citations (a check of
    2026-12-06)."""
    inside: set[int] = set()
    before = -1  # the furthest end of the matches that start before the current start
    start, same_start = -1, -1  # the current start, and the furthest end of its matches
    for match in sorted(found, key=lambda m: (m.start(), -m.end())):
        if match.start() != start:
            before, start, same_start = max(before, same_start), match.start(), -1
        if before >= match.end() or same_start > match.end():
            inside.add(id(match))
        same_start = max(same_start, match.end())
    return inside


def find_citations(text: str) -> Citations:
    """For the citation gate, which must fail closed: every well-formed ECLI in ``text``
    (as `extract_eclis`, also after a ":" or a letter and before a ":" of punctuation), and
    every other stretch that a reader would take for an ECLI (lower case, spaces or hyphens
    for colons, hidden or look-alike characters, a part too long or missing), as read."""
    eclis: dict[str, None] = {}
    follows: dict[str, str] = {}
    malformed: dict[str, None] = {}
    for ecli, head in _written_and_following(text, malformed):
        if ecli not in eclis and head is not None:
            follows[ecli] = head
        eclis.setdefault(ecli, None)
    read = _as_read(text)
    found = [*_LOOSE.finditer(read), *_CAPITALS.finditer(read)]
    inside = _inside_longer(found)
    continued: dict[str, int] = {}
    dropped: set[str] = set()
    for match in _CONTINUED.finditer(read):
        malformed.setdefault(named(" ".join(match.group(0).split())), None)
        head = next(iter(_scan(_WRITTEN, match.group(0), colon_ends=True)), None)
        if head is not None:
            continued[head] = continued.get(head, 0) + 1
    written = (
        Counter(ecli for ecli, _ in _written_and_following(text, {})) if continued else Counter()
    )
    for ecli, times in continued.items():
        # written only as the beginning of a longer ordinal: not a citation of its own, so
        # not checked and shown as live beside the malformed one (a re-run)
        if written.get(ecli, 0) <= times:
            eclis.pop(ecli, None)
            dropped.add(ecli)
    for match in (m for m in found if id(m) not in inside):
        seen = " ".join(match.group(0).rstrip(".:").split())  # a line break shown as a space
        canonical = "ECLI" + seen[4:] if seen[:5].lower() == "ecli:" else seen
        if canonical in eclis or canonical in dropped or _file_name_of(canonical, eclis):
            continue
        malformed.setdefault(named(seen), None)
    for seen in _unread_prefixes(read, [*found, *_CONTINUED.finditer(read)]):
        malformed.setdefault(named(seen), None)
    return Citations(
        eclis=list(eclis),
        malformed=list(malformed),
        follows={ecli: head for ecli, head in follows.items() if ecli in eclis},
    )


def _written_and_following(
    text: str, malformed: dict[str, None]
) -> Iterator[tuple[str, str | None]]:
    """Each well-formed ECLI as written, and each ordinal listed after one (`_follow_ons`) as
    a full ECLI with the ECLI it follows, in order, once per occurrence; what reads as a
    follow-on but is not one goes into ``malformed``."""
    for match, ecli in _accepted_matches(_WRITTEN, text, colon_ends=True):
        yield ecli, None
        for follow_on in _follow_ons(text, match, ecli):
            if follow_on.ecli is not None:
                yield follow_on.ecli, ecli
            elif follow_on.malformed:
                malformed.setdefault(follow_on.malformed, None)


def _unread_prefixes(read: str, matches: list[re.Match[str]]) -> Iterator[str]:
    """Each "ECLI:" (`_PREFIXED`) that lies in none of ``matches``, as the word it starts."""
    spans = sorted((m.start(), m.end()) for m in matches)
    starts = [start for start, _ in spans]
    ends = list(itertools.accumulate((end for _, end in spans), max))
    for prefix in _PREFIXED.finditer(read):
        before = bisect.bisect_right(starts, prefix.start())
        if before and ends[before - 1] > prefix.start():
            continue  # inside a stretch already read (well formed, or named as malformed)
        # its word and the words after it that go on with a part ("ECLI:N L:HR:2019:1"),
        # within _WORDS_REACH: read to their end from every prefix, a draft of prefixes alone
        # ("ECLI: N L:" repeated, 200,000 characters) kept a request busy for 86 s
        words = _WORDS.match(read, prefix.end(), prefix.end() + _WORDS_REACH)
        shown = prefix.group(0) + (words.group(0) if words else "")
        yield " ".join(shown.split()).rstrip(_TRAILING_MARKS)
