"""Legal referents that an answer names and nothing returned names: the grounding gate's
check that a sentence does not bring in a court, a role, a procedure or an outcome that
none of the retrieval's chunks speaks of ("de kantonrechter" where the chunks know only the
tax chamber of the Hoge Raad; "een dwangsom" in an answer about a tax assessment).

Containment lets about one content word in five be anything (the calibrated threshold is
0.8), and a paraphrase needs that: "vindt" for "oordeelt" is no new fact. A word that says
which court, which role, which procedure or which outcome is one: the sentence then says
something of the case that the retrieval does not hold, as an invented date or name does.
So a sentence word of one of the families below, when no word of any returned chunk belongs
to that family, makes the sentence unsupported (``fact_mismatch``, the word). Only the
whole retrieval is asked, not the supporting passage: an answer may name the court that
another returned chunk names.

A family is one referent with the forms that speak of it (prefixes of folded words, so
inflections and compounds that begin with it count: "faillissement", "failliet",
"gefailleerd"). Kinds that nest or stand for each other in practice are one family or none
("octrooi" and "patent"; "verzekeraar" and "verzekering"; "testament" and "uiterste
wilsbeschikking"), and a chunk names a referent inside a compound too ("derdenbeslag"
holds "beslag"); verbs that Dutch splits
("trekt ... in", "scheldt ... kwijt") are left out, because the chunk's split form would
hold no word of the family. Tax compounds are not families: Dutch writes "loon- en
inkomstenbelasting", so a chunk may speak of "loonbelasting" without the word
(``compound_swap`` in app/gates/negation.py compares them within a passage).

Nothing here touches the database or the encoder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_FAMILIES_TEXT = """
    kantonrecht kantongerecht kantonzak
    strafrecht strafkamer strafzak strafvervolg politierechter
    kinderrechter
    ondernemingskamer
    pacht verpacht
    gemeenteraad
    ondernemingsraad
    notari
    deurwaarder
    officier
    curator
    bewindvoer
    aandeelhouder
    pandhouder pandrecht
    verzekeraar verzekering
    executeur
    vereffenaar vereffening
    aannemer
    faillis faillie gefaille
    surseance
    schuldsaner
    onteigen
    dwangsom
    gijzel gegijzeld lijfsdwang
    beslag
    wraking wraken wraakt gewraakt
    cassatie
    ontbind ontbond
    schorsing schorst schorsen geschorst
    verjaring verjaard verjaart verjaren
    ontslag ontslaan ontslaat
    ontruim
    hypothee hypothec
    testament wilsbeschikking
    nalatenschap erfgena erflat
    echtschei
    alimentat
    octrooi patent
"""
# one line per family: its prefixes
FAMILIES: tuple[tuple[str, ...], ...] = tuple(
    tuple(line.split()) for line in _FAMILIES_TEXT.strip().splitlines()
)
# ordinary words that begin like a family: "goed beslagen ten ijs"
_NOT_OF_A_FAMILY = frozenset({"beslagen"})
_FAMILY_OF = {prefix: index for index, members in enumerate(FAMILIES) for prefix in members}
# every prefix, longest first, anywhere in a word: a chunk's compound names its head's
# referent ("derdenbeslag", "minderheidsaandeelhouder", "onderaannemer")
_ANYWHERE = re.compile("|".join(sorted(_FAMILY_OF, key=lambda p: (-len(p), p))))


def family(word: str) -> int | None:
    """The family a folded word of an answer belongs to (it begins with one of its
    prefixes; the index in ``FAMILIES``), or None."""
    if word in _NOT_OF_A_FAMILY:
        return None
    found = _ANYWHERE.match(word)
    return None if found is None else _FAMILY_OF[found.group()]


def families_in(word: str) -> set[int]:
    """The families a folded word of a chunk names, at its start or inside a compound."""
    if word in _NOT_OF_A_FAMILY:
        return set()
    return {_FAMILY_OF[m.group()] for m in _ANYWHERE.finditer(word)}


class RetrievalReferents:
    """The families that the returned chunks speak of."""

    def __init__(self, chunk_words: Iterable[Sequence[str]]) -> None:
        distinct = {word for words in chunk_words for word in words}  # windows repeat words
        self.families = frozenset(found for word in distinct for found in families_in(word))

    def unheld(self, sentence_words: Sequence[str]) -> str | None:
        """The first word of the sentence that names a referent no returned chunk names."""
        for word in sentence_words:
            found = family(word)
            if found is not None and found not in self.families:
                return word
        return None
