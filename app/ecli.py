"""European Case Law Identifiers found in free text (drafts, relations, answers): one module
that both the citation gate (app.gates) and case-law ingestion (app.caselaw) use, so neither
imports the other for it.

Grammar (Council conclusions 2011/C 127/01): ``ECLI:<country>:<court>:<year>:<ordinal>``
with a two-letter upper-case country code, a court code of 1-7 letters or digits, a
four-digit year and an ordinal of at most 25 letters, digits and dots that does not end in
a dot. Only the literal prefix is matched case-insensitively (drafts say "ecli:"); the rest
must already be well formed, because a "nearly ECLI" that we silently repair would be
checked against the wrong decision.
"""

from __future__ import annotations

import re

MAX_ORDINAL = 25

# The ordinal is matched greedily including dots, then trailing dots are dropped: a
# sentence-final "." belongs to the prose, not to the identifier. The look-behind keeps
# "XECLI:..." and ":ECLI:..." (part of some longer token) out.
_CANDIDATE = re.compile(
    r"(?<![A-Za-z0-9:])(?i:ecli):"
    r"(?P<country>[A-Z]{2}):"
    r"(?P<court>[A-Z0-9]{1,7}):"
    r"(?P<year>[0-9]{4}):"
    r"(?P<ordinal>[A-Za-z0-9.]+)"
)

_EXACT = re.compile(r"ECLI:[A-Z]{2}:[A-Z0-9]{1,7}:[0-9]{4}:[A-Za-z0-9.]{0,24}[A-Za-z0-9]")


def extract_eclis(text: str) -> list[str]:
    """Every well-formed ECLI in ``text``, prefix upper-cased, first appearance first."""
    found: dict[str, None] = {}
    for match in _CANDIDATE.finditer(text):
        ordinal = match["ordinal"].rstrip(".")
        if not ordinal or len(ordinal) > MAX_ORDINAL:
            continue
        # "ECLI:NL:HR:2019:1:2" is not ECLI:NL:HR:2019:1 followed by noise: it is malformed.
        if text[match.end() : match.end() + 1] == ":":
            continue
        ecli = f"ECLI:{match['country']}:{match['court']}:{match['year']}:{ordinal}"
        found.setdefault(ecli, None)
    return list(found)


def is_ecli(value: str) -> bool:
    """True when ``value`` is exactly one well-formed ECLI (upper-case prefix)."""
    return _EXACT.fullmatch(value) is not None


def normalize_ecli(value: str) -> str | None:
    """``value`` as a canonical ECLI (prefix upper-cased), or None when it is not one."""
    candidate = value.strip()
    if candidate[:5].lower() == "ecli:":
        candidate = "ECLI:" + candidate[5:]
    return candidate if is_ecli(candidate) else None
