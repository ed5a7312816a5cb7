"""Name normalisation for conflict checks: case, accents, punctuation, legal forms."""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata

# Legal forms, written without dots/spaces after punctuation is removed ("B.V." -> "bv").
LEGAL_FORMS = frozenset(
    {
        "bv",
        "nv",
        "vof",
        "cv",
        "bva",
        "holding",
        "holdings",
        "stichting",
        "vereniging",
        "cooperatie",
        "cooperatieve",
        "coop",
        "cooeperatie",  # "coöperatie" with its diaeresis read as an umlaut
        "cooeperatieve",
        "cooep",
        "ua",
        "wa",
        "ba",
        "eenmanszaak",
        "maatschap",
        "ltd",
        "limited",
        "plc",
        "llc",
        "llp",
        "lp",
        "inc",
        "incorporated",
        "corp",
        "corporation",
        "co",
        "company",
        "gmbh",
        "ag",
        "kg",
        "sa",
        "sas",
        "sarl",
        "srl",
        "spa",
        "se",
        "oy",
        "ab",
        "as",
        "aps",
        "nv/sa",
    }
)
_HOLDING_WORDS = frozenset({"holding", "holdings"})
# Said of a party, not part of its name: "c.s." (cum suis), "i.o." (in oprichting), "St."
# (Stichting, or Sint), and the words that join names ("&" is punctuation, "en" its word).
_NOT_THE_NAME = frozenset({"cs", "io", "qq", "st", "en", "and"})
_DROPPED = LEGAL_FORMS | _NOT_THE_NAME
# Legal forms and states written out, removed before the name is cut into tokens.
_SPELLED_OUT = re.compile(
    r"\b(?:(?:besloten|naamloze|commanditaire) vennootschap"
    r"|vennootschap onder firma|cooperatieve vereniging"
    r"|met (?:beperkte|uitgesloten) aansprakelijkheid"
    r"|in (?:liquidatie|oprichting)|in staat van faillissement|cum suis)\b"
)
# Letters that Unicode decomposition leaves whole ("Ørsted" is "Orsted").
_LETTERS = str.maketrans({"ø": "o", "ł": "l", "đ": "d", "ð": "d", "ħ": "h", "ı": "i",
                          "ŀ": "l", "æ": "ae", "œ": "oe", "þ": "th"})  # fmt: skip
# Abbreviations written with their dot: a name holds both ("Gem. Zuiderveen" is "gem" and
# "gemeente"), so that it meets "Gemeente Zuiderveen" and "Gem Zuiderveen" alike; without a
# dot a word is only itself ("Ned Kelly" is no "Nederlandse Kelly").
_ABBREVIATED = {
    "gem": "gemeente",
    "kon": "koninklijke",
    "mij": "maatschappij",
    "mpij": "maatschappij",
    "maats": "maatschappij",
    "prov": "provincie",
    "ned": "nederlandse",
    "bros": "brothers",
    "gebr": "gebroeders",
    "zn": "zonen",
}
_ABBREVIATION = re.compile(r"(?<![\w.])(" + "|".join(_ABBREVIATED) + r")\.")
# "'t" may be "het" ("Brouwerij 't Kuipje"), and so may a lower-case "t" standing alone
# (its apostrophe lost); a name holds both readings, as "T-Mobile" or "M. t Jansen" need "t"
_HET = re.compile(r"(?<![\w.])(?:['\u2018\u2019`][tT]|t)(?=\s)")
_VVE = re.compile(r"\bvereniging van eigena(?:ars|ren)\b")
_VVE_WORDS = {"vve": ("vve", "eigenaars")}
# Surname particles: "van den Berg" is also written "Vandenberg", "de Vries" "DeVries".
_PARTICLES = frozenset(
    {"van", "de", "der", "den", "het", "ten", "ter", "te", "op", "in", "von", "la", "le", "du",
     "di", "da", "del", "della", "d", "l", "vd"}
)  # fmt: skip
# German umlauts are also written out ("Müller" is "Mueller"): a name with one holds both
# readings. Dutch writes the diaeresis on the same letters ("coöperatie"); its written-out
# reading is a token nobody asks for, so it costs nothing but its size.
_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"})
# "v.d.", "v/d" and "vd" before a surname: "van de", "van den" or "van der", which one the
# abbreviation does not say; read out, a name holds all three (and a question is any one)
_VD = "vd"
_VD_READ_OUT = (("van", "de"), ("van", "den"), ("van", "der"))
_PUNCT = re.compile(r"[^\w\s]|_", re.UNICODE)
GLUED = "="  # marks words a stored name holds written together: matched whole, never by prefix
_DOTTED = re.compile(r"\b((?:[a-z]\.){1,3}[a-z]?\.?)(?=\s|$)")


def _strip_accents(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(
        ch
        for ch in decomposed
        # marks, and invisible format characters (a soft hyphen, a zero-width space)
        if not unicodedata.combining(ch) and unicodedata.category(ch) != "Cf"
    )


def _undot(match: re.Match[str]) -> str:
    letters = match.group(1).replace(".", "")
    if letters in _DROPPED:
        return letters
    return " ".join(letters)  # initials: joined below, as spaced ones are


def _join_initials(tokens: list[str], letters: bool) -> list[str]:
    """Single letters in a row are one token: "M. J. de Nijs" and "M.J. de Nijs" are both
    "mj de nijs"; "N. V." and "b.v." are "nv" and "bv", legal forms. With ``letters`` the
    letters are kept too ("mj m j de nijs"): a stored name holds them, so that "M. de Nijs"
    finds it; a question does not need them, so that "J.P. Morgan" still finds "JP Morgan"."""
    out: list[str] = []
    run: list[str] = []
    for token in [*tokens, ""]:
        if len(token) == 1:
            run.append(token)
            continue
        if run:
            out.extend(_initials(run, letters))
            run = []
        if token:
            out.append(token)
    return out


def _initials(run: list[str], letters: bool) -> list[str]:
    """A run of single letters as tokens. A spaced legal form at its end is its own token
    ("V&D B. V." is "vd" and "bv", not "vdbv"; "K.P.N. N. V." is "kpn" and "nv")."""
    joined = "".join(run)
    for size in (4, 3, 2):
        if len(run) > size and "".join(run[-size:]) in _DROPPED and joined not in _DROPPED:
            return [*_initials(run[:-size], letters), "".join(run[-size:])]
    if letters and len(run) > 1 and joined not in _DROPPED:
        return [joined, *run]
    return [joined]


@functools.lru_cache(maxsize=65_536)  # a matrix read normalises every party's name again
def name_tokens(
    name: str,
    letters: bool = False,
    expanded: bool = False,
    het: bool = False,
    umlaut: bool = False,
) -> tuple[str, ...]:
    """Tokens of a party or client name with legal forms removed, as a question needs them
    (``letters``: as a stored name holds them, with the letters of its initials;
    ``expanded``: abbreviations written with their dot read out; ``het``: "'t" as "het";
    ``umlaut``: "ü" as "ue").

    "Acme Holding B.V." -> ["acme"]; "Café de Flore N.V." -> ["cafe", "de", "flore"];
    "Zeeburg Holding N.V. c.s." -> ["zeeburg"]; "C&A" and "C en A" -> ["ca"].
    Holding words are kept when they are the whole name.
    """
    if umlaut:
        name = unicodedata.normalize("NFC", name).translate(_UMLAUTS)
    value = _strip_accents(_HET.sub(" het", name) if het else name)
    value = " ".join(value.casefold().translate(_LETTERS).split())  # one space between words
    value = _ABBREVIATION.sub(
        lambda m: (_ABBREVIATED[m.group(1)] if expanded else m.group(1)) + " ", value
    )
    # "b.v." -> "bv" and "m.j." -> "m j" before other punctuation becomes space
    value = _DOTTED.sub(_undot, value)
    value = _SPELLED_OUT.sub(" ", _VVE.sub("vve", value))
    words = [t for t in _PUNCT.sub(" ", value).split() if t not in _NOT_THE_NAME]
    # "VvE", "V.v.E." and "Vereniging van Eigenaars" (or "Eigenaren") are one association
    tokens = [w for t in _join_initials(words, letters) for w in _VVE_WORDS.get(t, (t,))]
    kept = [t for t in tokens if t not in _DROPPED]
    if not kept:
        kept = [t for t in tokens if t in _HOLDING_WORDS] or tokens
    return tuple(kept)


def _readings(name: str, letters: bool) -> list[tuple[str, ...]]:
    """The name's tokens as written, then with dotted abbreviations read out, with a lone
    "t" as "het", and both; a name with an umlaut each of these again with it written out."""
    umlauts = (False, True) if _has_umlaut(name) else (False,)
    return [
        name_tokens(name, letters=letters, expanded=expanded, het=het, umlaut=umlaut)
        for umlaut in umlauts
        for expanded, het in ((False, False), (True, False), (False, True), (True, True))
    ]


def _has_umlaut(name: str) -> bool:
    return any(ch in "äöüÄÖÜ" for ch in unicodedata.normalize("NFC", name))


def _vd_read_out(readings: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The readings in which "vd" stands before a word, with it read as "van de", "van den"
    and "van der" in turn (one choice for the whole name). "V&D" alone stays itself."""
    return [
        tuple(part for token in tokens for part in (spelled if token == _VD else (token,)))
        for tokens in readings
        if _VD in tokens[:-1]
        for spelled in _VD_READ_OUT
    ]


def _glued(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Surname particles glued to the word they precede, marked ``GLUED``: ("van", "den",
    "berg", "bv") -> ("=vandenberg", "bv"). A run of particles at the end stays as it is."""
    out: list[str] = []
    run: list[str] = []
    for token in tokens:
        if token in _PARTICLES:
            run.append(token)
            continue
        out.append(GLUED + "".join(run) + token if run else token)
        run = []
    return (*out, *run)


def normalize_name(name: str) -> str:
    """A name as stored and matched against: its tokens with the letters of its initials
    (and its other readings: dotted abbreviations read out, "'t" as "het", umlauts written
    out), and, marked ``GLUED``, its surname particles glued to their word ("van den berg
    =vandenberg"; "v.d. berg" also as "=vandeberg", "=vandenberg" and "=vanderberg") and
    each two neighbouring words written together ("ahold delhaize =aholddelhaize")."""
    readings = _readings(name, letters=True)
    tokens, *read_out = readings
    # "vd" read out only glued ("=vandenberg"; read without the letters of initials, which
    # would stand between): loose, its particles would meet every question that is only
    # "de" or "van der"
    spelled = _vd_read_out(_readings(name, letters=False)) if _VD in tokens else []
    glued = [t for reading in (*readings, *spelled) for t in _glued(reading) if t.startswith(GLUED)]
    joined = [  # two particles are no word ("Vander" is not every "Van der ...")
        GLUED + a + b
        for a, b in itertools.pairwise(tokens)
        if not (a in _PARTICLES and b in _PARTICLES)
    ]
    more = [t for reading in read_out for t in reading]
    return " ".join(dict.fromkeys((*tokens, *more, *glued, *joined)))


@functools.lru_cache(maxsize=65_536)
def query_forms(query: str) -> tuple[tuple[str, ...], ...]:
    """The ways a question's name may be written in a stored one: its tokens (with dotted
    abbreviations as written, or read out), with its surname particles glued ("van den
    Berg" also as "=vandenberg"), and with any two neighbouring words written together
    ("Akzo Nobel" also as "=akzonobel": whole, never a prefix)."""
    forms = _readings(query, letters=False)
    tokens = forms[0]
    # "vd" read out glued only, as a stored name holds it: loose, "V&D Amsterdam" met
    # "Gemeente Amsterdam van de Kamer"
    forms += [_glued(reading) for reading in (*forms, *_vd_read_out(forms))]
    forms += [(*tokens[:i], GLUED + tokens[i] + tokens[i + 1], *tokens[i + 2 :])
              for i in range(len(tokens) - 1)]  # fmt: skip
    return tuple(dict.fromkeys(forms))


def name_matches(query: str, candidate_norm: str) -> bool:
    """Every token of the query (in one of its forms) appears in the candidate, as a token
    or a token prefix of at least five characters ("Acme" matches "Acme Holding B.V.",
    "Phil" does not match "Philips" but "Phili" does). Particles glued to their word are
    one whole word either side ("=vandenberg" is "vandenberg"), never a prefix: "Intel" is
    not "Investeringen in Telecom", "Van Dam" not "Van Damme"."""
    have = candidate_norm.split()
    return bool(have) and any(_all_in(wanted, have) for wanted in query_forms(query))


def _all_in(wanted: tuple[str, ...], have: list[str]) -> bool:
    if not wanted:
        return False
    for token in wanted:
        if token in have:
            continue
        if token.startswith(GLUED):
            if token[1:] in have:
                continue
            return False
        if GLUED + token in have:
            continue
        if len(token) >= 5 and any(h.startswith(token) for h in have):
            continue
        return False
    return True
