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
        "coop",
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
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_DOTTED = re.compile(r"\b((?:[a-z]\.){1,3}[a-z]?\.?)(?=\s|$)")


def _strip_accents(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def name_tokens(name: str) -> list[str]:
    """Tokens of a party or client name with legal forms removed.

    "Acme Holding B.V." -> ["acme"]; "Café de Flore N.V." -> ["cafe", "de", "flore"].
    Holding words are kept when they are the whole name.
    """
    value = _strip_accents(name).casefold()
    # "b.v." -> "bv" before other punctuation becomes space
    value = _DOTTED.sub(lambda m: m.group(1).replace(".", ""), value)
    value = _PUNCT.sub(" ", value)
    tokens = [t for t in value.split() if t]
    kept = [t for t in tokens if t not in LEGAL_FORMS]
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
