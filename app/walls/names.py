"""Name normalisation for conflict checks: case, accents, punctuation, legal forms."""

from __future__ import annotations

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
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_DOTTED = re.compile(r"\b((?:[a-z]\.){1,3}[a-z]?\.?)(?=\s|$)")


def _strip_accents(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(
        ch
        for ch in decomposed
        # marks, and invisible format characters (a soft hyphen, a zero-width space)
        if not unicodedata.combining(ch) and unicodedata.category(ch) != "Cf"
    )


def _join_initials(tokens: list[str]) -> list[str]:
    """Single letters in a row are one token: "M. J. de Nijs" is "mj de nijs", as "M.J." is,
    and "N. V." is "nv"."""
    out: list[str] = []
    run = ""
    for token in [*tokens, ""]:
        if len(token) == 1:
            run += token
            continue
        if run:
            out.append(run)
            run = ""
        if token:
            out.append(token)
    return out


def name_tokens(name: str) -> list[str]:
    """Tokens of a party or client name with legal forms removed.

    "Acme Holding B.V." -> ["acme"]; "Café de Flore N.V." -> ["cafe", "de", "flore"];
    "Zeeburg Holding N.V. c.s." -> ["zeeburg"]. Holding words are kept when they are the
    whole name.
    """
    value = _strip_accents(name).casefold().translate(_LETTERS)
    # "b.v." -> "bv" before other punctuation becomes space
    value = _DOTTED.sub(lambda m: m.group(1).replace(".", ""), value)
    value = _SPELLED_OUT.sub(" ", value)
    value = _PUNCT.sub(" ", value)
    tokens = _join_initials([t for t in value.split() if t])
    kept = [t for t in tokens if t not in LEGAL_FORMS and t not in _NOT_THE_NAME]
    if not kept:
        kept = [t for t in tokens if t in _HOLDING_WORDS] or tokens
    return kept


def normalize_name(name: str) -> str:
    return " ".join(name_tokens(name))


def name_matches(query: str, candidate_norm: str) -> bool:
    """Every token of the query appears in the candidate, as a token or a token prefix of
    at least four characters ("Acme" matches "Acme Holding B.V.", "Phil" does not match
    "Philips" but "Phili" does)."""
    wanted = name_tokens(query)
    have = candidate_norm.split()
    if not wanted or not have:
        return False
    for token in wanted:
        if token in have:
            continue
        if len(token) >= 5 and any(h.startswith(token) for h in have):
            continue
        return False
    return True
