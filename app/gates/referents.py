"""Legal referents that an answer names and nothing returned names: the grounding gate's
check that a sentence does not bring in a court, a role, a procedure or an outcome that
none of the retrieval's chunks speaks of ("de kantonrechter" where the chunks know only the
tax chamber of the Hoge Raad; "een dwangsom" in an answer about a tax assessment).

Containment lets about three content words in ten be anything (the calibrated threshold is
0.7; at most judge.UNHELD_MAX of them), and a paraphrase needs that: "vindt" for "oordeelt"
is no new fact. A word that says which court, which role, which procedure or which outcome
is one: the sentence then says something of the case that the retrieval does not hold, as
an invented date or name does.
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

What the court decided is held closer: a word that states an outcome ("slaagt",
"afgewezen", "wijst ... af", "vernietigt", "bekrachtigd", "niet-ontvankelijk") must find
its outcome in the passage that supports the sentence (``unheld_outcome``), stated in an
outcome word or in a decision's own phrases ("kan niet tot cassatie leiden", "kan niet in
stand blijven", "dit betoog is juist"). A copied sentence with ", zodat het beroep slaagt"
added kept the copy's containment (0.875) and passed whenever any returned chunk spoke of
success; the outcome is the claim a lawyer acts on. The passage, not its chunk: a chunk
that awards one claim and refuses another would hold both for either.

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


_SUCCESS, _FAILURE, _AFFIRMED, _QUASHED = 0, 1, 2, 3
# the verb Dutch splits: "wijst de vordering af" (failure), "wees het verzoek toe" (success)
_SPLIT_VERB = frozenset({"wijst", "wees", "wezen", "wijzen", "wijs"})
_PARTICLE = {"af": _FAILURE, "toe": _SUCCESS}
# "bevestigt het vonnis" affirms it as a passage says it; an answer's "bevestigt" often means
# "confirms that", so it is no outcome there (whole words: "bevestigende" is neither)
_AFFIRMS = frozenset({"bevestigt", "bevestigd", "bevestigde", "bevestigden", "bevestigen"})
# the stop words a clause's outcome phrase may carry ("kan niet in stand blijven")
_CLAUSE_ENDS = frozenset({"|", "."})  # negation.BREAK, negation.END


# Outcome words, whole, one line per outcome (success, failure, affirmed, quashed,
# admissibility, convicted, acquitted): a prefix would take the party
# "de veroordeelde", the refusal "de afwijzing van zijn aanvraag" or "slaagkans" for a claim
# of what a court decided
_STATED_WORDS: tuple[str, ...] = (
    "slaagt slagen slaagde slaagden geslaagd gegrond toegewezen toewijst toewees toewezen",
    "faalt falen faalde faalden gefaald ongegrond afgewezen afwijst afwees afwezen verworpen "
    "verwerpt verwierp verwierpen verwerpen",
    "bekrachtigt bekrachtigd bekrachtigde bekrachtigden bekrachtigen",
    "vernietigt vernietigd vernietigde vernietigden vernietigen casseert casseerde gecasseerd "
    "casseren",
    "ontvankelijk",
    "veroordeelt veroordeeld veroordelen",
    "vrijgesproken vrijspreekt",
)
_STATED = {word: index for index, line in enumerate(_STATED_WORDS) for word in line.split()}
_ADMISSIBLE = _STATED["ontvankelijk"]
# what a decision also writes for an outcome, never read as an answer's claim: inflected
# adjectives ("een gegronde grief") and the admissibility nouns ("de
# niet-ontvankelijkverklaring", "de ontvankelijkheid van het beroep")
_ALSO = {
    "gegronde": _STATED["gegrond"],
    "ongegronde": _STATED["ongegrond"],
    "ontvankelijke": _ADMISSIBLE,
    "ontvankelijkheid": _ADMISSIBLE,
    "ontvankelijkverklaring": _ADMISSIBLE,
}


def outcome(word: str) -> int | None:
    """The outcome a folded word states, whole words only (an index: 0 success, 1 failure,
    2 affirmed, 3 quashed, 4 admissibility, ...), or None."""
    if word in _AFFIRMS:
        return _AFFIRMED
    found = _STATED.get(word)
    return _ALSO.get(word) if found is None else found


def outcome_stem(word: str) -> str | None:
    """What containment counts for a folded outcome word: its outcome, so "slaagt" meets
    "gegrond" and "ongegrond" meets "verworpen" (one token per outcome, "~0" for success);
    None for any other word. Whole words only: a noun ("slaagkans", "de afwijzing van het
    verzoek", "vrijspraak") keeps its own stem (a review: "Het beroep slaagt" held against
    "De slaagkans van het beroep is klein"). The same on both sides, so a copied sentence
    holds its own; whether the passage states the outcome, or negates it, is
    ``held_outcomes``'s to say."""
    found = outcome(word)
    return None if found is None else f"~{found}"


def _clauses(words: Sequence[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for word in words:
        if word in _CLAUSE_ENDS:
            if out[-1]:
                out.append([])
        else:
            out[-1].append(word)
    return [c for c in out if c]


def _negated_before(clause: Sequence[str], i: int) -> bool:
    """Whether "niet" or "geen" stands in the three words before word ``i``."""
    return bool({"niet", "geen"} & set(clause[max(0, i - 3) : i]))


def _based_on(clause: Sequence[str], i: int) -> bool:
    """Whether word ``i`` is "gegrond op" (based on), no outcome: "Het hof heeft dit
    oordeel gegrond op ..." (a check of 2026-12-06: it held "het middel werd gegrond
    verklaard")."""
    return clause[i] == "gegrond" and clause[i + 1 : i + 2] == ["op"]


def _particle(clause: Sequence[str], i: int) -> int | None:
    """The outcome the particle after the split verb at ``i`` gives it ("af", "toe")."""
    return next((_PARTICLE[w] for w in clause[i + 1 :] if w in _PARTICLE), None)


def stated_outcomes(words: Sequence[str]) -> list[tuple[str, int]]:
    """The outcome words of an answer sentence's folded words and what each states; a split
    verb with its particle ("wijst ... af") counts as its verb."""
    stated: list[tuple[str, int]] = []
    for clause in _clauses(words):
        for i, word in enumerate(clause):
            # an answer's "gegrond op" states success all the same: read as "based on" it
            # let "verklaart het beroep gegrond op alle punten" pass (a review)
            found = _STATED.get(word)
            if word == "gegrond" and _negated_before(clause, i):
                found = _FAILURE  # "zijn niet gegrond"
            if found is not None:
                stated.append((word, found))
            elif word in _SPLIT_VERB and (particle := _particle(clause, i)) is not None:
                stated.append((word, particle))
    return stated


def held_outcomes(words: Sequence[str]) -> set[int]:
    """The outcomes a chunk's folded words state: its outcome words (whole words, as an
    answer's: a noun such as "vrijspraak" in "het verzoek om vrijspraak wordt verworpen"
    states no acquittal), the split verb with its particle, and a decision's own phrases:
    "niet gegrond" and "kan niet tot cassatie leiden" (failure), "kan niet in stand
    blijven" (success, quashed), "met vernietiging van" (quashed), "het betoog is juist"
    (success), "tevergeefs" (failure). An outcome word with "niet" or "geen" just before it
    states nothing ("is niet geslaagd"), "niet gegrond" (failure) and "niet-ontvankelijk"
    (admissibility, whose "niet" the negation check compares) apart."""
    held: set[int] = set()
    for clause in _clauses(words):
        negated = "niet" in clause or "geen" in clause
        for i, word in enumerate(clause):
            found = None if _based_on(clause, i) else outcome(word)
            # "niet-ontvankelijk" stays: its "niet" is the negation check's
            if found not in (None, _ADMISSIBLE) and _negated_before(clause, i):
                found = _FAILURE if word.startswith("gegrond") else None
            if found is not None:
                held.add(found)
            elif word in _SPLIT_VERB and (particle := _particle(clause, i)) is not None:
                held.add(particle)
            elif word == "tevergeefs":
                held.add(_FAILURE)
            elif word == "vernietiging" and i and clause[i - 1] == "met":
                held.add(_QUASHED)
        if negated and "cassatie" in clause and "leiden" in clause:
            held.add(_FAILURE)
        if negated and "stand" in clause and "blijven" in clause:
            held.update((_SUCCESS, _QUASHED))
        if (
            not negated
            and ("juist" in clause or "terecht" in clause)
            and ({"betoog", "klacht", "middel", "grief", "beroep"} & set(clause))
        ):
            held.add(_SUCCESS)
    return held


def unheld_outcome(sentence_words: Sequence[str], held: set[int]) -> str | None:
    """The first word of the sentence that states an outcome ``held`` (the supporting
    passage's ``held_outcomes``) does not hold."""
    return next(
        (word for word, found in stated_outcomes(sentence_words) if found not in held), None
    )


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
