"""A sentence that only points at a source: "Zie ECLI:NL:HR:2019:1278.", "Vgl. art. 6:162
BW.", "(ECLI:NL:RBOVE:2016:1292, r.o. 4.4)".

Such a line states nothing but where to read, so containment has nothing to measure (its
only words are "zie" or "vgl") and every such line was judged unsupported, however right
the source. It is held by a returned chunk whose passage or document names every decision
and article it cites: the chunk of that decision (its title holds the ECLI, court and date)
or a passage that cites it. What else it writes (a date, a court, a consideration's
number) must be held there too, as for any sentence (judge.py, step 2). A line that cites
a source no returned chunk is or names stays unsupported: the model was never shown it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet

from app.gates.evidence import NEGATIONS, Fact, content_word, stem
from app.gates.referents import outcome_stem

# what a source is cited by: an ECLI or an article of a statute
CITED_KINDS = frozenset({"ecli", "article"})
# the words that lead a reader to a source and say nothing of it, as whole folded words: a
# stem (six letters) would also pass "rechtsmisbruik" for "rechtsoverweging", "vergelding"
# for "vergelijk" and "overwegend" for "overweging", claims no source was checked for
POINTING = frozenset(
    {
        "zie", "vgl", "vergelijk", "ook", "bron", "bronnen", "hierover", "daarover", "onder",
        "meer", "bijvoorbeeld", "bijv", "aldus", "dezelfde", "zin", "rov", "overweging",
        "overwegingen", "rechtsoverweging", "rechtsoverwegingen", "punt", "punten",
        "randnummer", "randnummers",
    }
)  # fmt: skip
# words that say the source holds the opposite or denies it ("Maar zie ...", "Niet ...",
# "Anders: ..."): such a line is judged as a claim, never as a pointer (stop words among
# them would otherwise leave no content word at all)
CONTRARY = NEGATIONS | frozenset({"maar", "echter", "doch", "anders", "contra", "daarentegen"})


def citing_facts(facts: Iterable[Fact]) -> list[Fact]:
    """The facts of a sentence that cite a source."""
    return [f for f in facts if f.kind in CITED_KINDS]


def only_cites(facts: Sequence[Fact], said: Sequence[str], names: AbstractSet[str]) -> bool:
    """Whether a sentence with these ``facts`` and ``said`` words (evidence.said_words: its
    folded words outside its facts; ``names``: the stems of its names, which its sources'
    titles hold) cites a source and says nothing else."""
    if not citing_facts(facts) or any(w in CONTRARY for w in said):
        return False
    content = {
        outcome_stem(w) or stem(w) for w in said if content_word(w) and w not in POINTING
    }
    return not (content - set(names))


def citing_detail(facts: Sequence[Fact]) -> str:
    """The reason's detail for a citing line no returned chunk holds."""
    return "no returned result is or names " + ", ".join(f.text for f in citing_facts(facts))
