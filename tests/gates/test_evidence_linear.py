"""Reading what each value of a sentence is said of costs time linear in the sentence.

``fact_sites`` used to fold and read the whole clause on both sides of every amount, date,
percentage or number, so an answer of thousands of values in one clause ("[1[1[1...", within
the gate's 200,000 characters) kept a request busy for many minutes. Each value's words are
now read within a bounded reach of a text folded once; for sentences shorter than that reach
the sites are those of the former whole-clause reading (compared on random sentences).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app.gates.evidence import (
    _BIND,
    _CLAUSE_END,
    BOUND_KINDS,
    REFERS_BACK,
    STOPWORDS,
    Fact,
    FactSite,
    _blank,
    extract_facts,
    fact_sites,
    stem,
    words,
)
from tests.bounded_child import run_bounded


def whole_clause_sites(text: str, facts: list[Fact]) -> list[FactSite]:
    """The former reading: the whole clause either side of each value."""
    blanked = _blank(text, [f.span for f in facts if f.kind != "name"])
    out = []
    for fact in (f for f in facts if f.kind in BOUND_KINDS):
        start, end = fact.span
        left, right = blanked[:start], blanked[end:]
        ends = list(_CLAUSE_END.finditer(left))
        if ends:
            left = left[ends[-1].end() :]
        cut = _CLAUSE_END.search(right)
        if cut is not None:
            right = right[: cut.start()]
        left_words, right_words = words(left), words(right)
        if fact.kind == "number" and not re.search(r"[^\W_]", left):
            continue
        before = [stem(w) for w in left_words if len(w) > 1 and w not in STOPWORDS]
        after = [stem(w) for w in right_words if len(w) > 1 and w not in STOPWORDS]
        back = any(w in REFERS_BACK for w in (*left_words, *right_words))
        out.append(FactSite(fact, frozenset(before[-_BIND:] + after[:_BIND]), back))
    return out


PIECES = [
    "De huurder", " betaalde", " € 1.200", " op 1 mei 2020", " 5%", " 12 ", "; ", ". ",
    " Daarna", " is deze", " verhoogd tot", " 4.5. ", " artikel 6:162 BW", " Één", " [2]",
    " de koopprijs", " van", " 36.250", ", ", " Curaçao",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_short_sentences_keep_their_sites(sentence: str) -> None:
    facts = extract_facts(sentence)
    assert fact_sites(sentence, facts) == whole_clause_sites(sentence, facts)


def test_thousands_of_values_in_one_clause_are_read_in_linear_time() -> None:
    # 100,000 values in one clause: hours when each reads its whole clause, seconds now
    out = run_bounded(
        "from app.gates.evidence import extract_facts, fact_sites\n"
        "for text in ('[1' * 100_000, '1 ' * 100_000, 'huur € 1, ' * 20_000):\n"
        "    facts = extract_facts(text)\n"
        "    assert len(facts) >= 20_000, len(facts)\n"
        "    fact_sites(text, facts)\n"
        "print('done')\n",
        "reading the sites of 100,000 values",
    )
    assert out.strip() == "done"


def test_a_clause_that_opens_beyond_the_reach_keeps_its_number() -> None:
    # "4.5. De inspecteur": a number that opens its clause numbers it and is passed over;
    # one whose clause opens further back than the reach is judged, never passed over
    assert fact_sites("4.5. De inspecteur", extract_facts("4.5. De inspecteur")) == []
    text = "De huurder " + "  " * 1_000 + " 12 maanden"
    sites = fact_sites(text, extract_facts(text))
    assert [s.fact.text for s in sites] == ["12"]
