"""The shipped corpus sets: size, split, types, and every judged id names a corpus document.

No database: these guard the files themselves (a typo in an ECLI would silently count as an
"unavailable" target and make the set easier than it looks).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from app.caselaw.parse import parse_rechtspraak
from app.demo.loader import STATUTE_SOURCE, statute_articles
from app.evaluation.corpus import (
    CORPUS_SET,
    HELDOUT_SET,
    QUESTION_TYPES,
    corpus_set,
    question_type,
)
from app.evaluation.repository import QueryIn
from app.evaluation.starter import starter_queries

CORPUS = Path(os.environ.get("EWALL_CORPUS_DIR", "../shared/corpus"))


def _queries(name: str) -> list[QueryIn]:
    return corpus_set(name)[1]


def test_sizes_split_and_types() -> None:
    dev, held = _queries(CORPUS_SET), _queries(HELDOUT_SET)
    everything = dev + held
    assert len(everything) >= 150
    assert len(held) >= 60  # issue 30: 14 held-out paraphrases were too few to read
    keys = [q.key for q in everything]
    assert len(set(keys)) == len(keys)
    texts = [q.text.casefold() for q in everything]
    assert len(set(texts)) == len(texts), "a held-out question repeats a development one"
    types = Counter(question_type(k) for k in keys)
    assert set(types) == set(QUESTION_TYPES)
    assert types["para"] * 2 >= len(everything), types  # at least half are paraphrases
    held_types = Counter(question_type(q.key) for q in held)
    assert set(held_types) == set(QUESTION_TYPES)  # the held-out split has every type
    assert held_types["para"] >= 30 and held_types["own"] >= 12, held_types


def test_development_set_contains_the_starter_set() -> None:
    dev = {q.key: q for q in _queries(CORPUS_SET)}
    for q in starter_queries():
        assert dev[q.key].text == q.text
        assert {(j.target_id, j.grade) for j in dev[q.key].judgements} == {
            (j.target_id, j.grade) for j in q.judgements
        }


def test_every_question_is_judged_and_multi_questions_have_several_answers() -> None:
    for q in _queries(CORPUS_SET) + _queries(HELDOUT_SET):
        assert any(j.grade == 3 for j in q.judgements), q.key
        assert all(j.target_kind == "document" for j in q.judgements), q.key
        if question_type(q.key) == "multi":
            assert sum(1 for j in q.judgements if j.grade >= 2) >= 2, q.key
        if question_type(q.key) == "stat":
            assert all(j.target_id.startswith(f"{STATUTE_SOURCE}:") for j in q.judgements)


def _decisions_with_a_body() -> set[str]:
    """Decisions search can find: a body, and not withdrawn, set aside or declared lapsed
    (ingestion suppresses those, so a question judged on one is dropped as "unavailable")."""
    out = set()
    for path in (CORPUS / "rechtspraak" / "xml").glob("*.xml"):
        record = parse_rechtspraak(path.read_bytes())
        excluded = record.withdrawn or record.set_aside or record.vervallen or record.replaced
        if record.sections and not excluded:
            out.add(record.ecli)
    return out


@pytest.mark.skipif(
    not (CORPUS / "rechtspraak" / "xml").is_dir(), reason=f"no corpus under {CORPUS}"
)
def test_every_judged_id_resolves_to_a_corpus_document() -> None:
    decisions = _decisions_with_a_body()
    articles = {f"{STATUTE_SOURCE}:{a.external_id}" for a in statute_articles()}
    for q in _queries(CORPUS_SET) + _queries(HELDOUT_SET):
        for j in q.judgements:
            source, _, external = j.target_id.partition(":")
            if source == "rechtspraak":
                assert external in decisions, (q.key, j.target_id)
            else:
                assert j.target_id in articles, (q.key, j.target_id)


def test_question_type_comes_from_the_key() -> None:
    assert question_type("para-h03") == "para"
    assert question_type("OWN-7") == "own"
    assert question_type("rated-12") == "other"


def test_eval_reports_means_per_question_type() -> None:
    from app.evaluation import metrics, runner

    def outcome(key: str, ranking: list[str]) -> runner.QueryOutcome:
        scores = metrics.score_query(ranking, {"d1": 3.0})
        return runner.QueryOutcome(key, key, "p", "document", 0, scores, ranking, "r", "x", 1.0)

    mode = runner.ModeOutcome(
        "sparse",
        {},
        [
            outcome("para-01", ["d1"]),
            outcome("para-h02", ["d2", "d3"]),
            outcome("own-01", ["d1"]),
            outcome("stat-01", ["d2", "d1"]),
        ],
    )
    by_type = mode.by_type()
    assert set(by_type) == {"para", "own", "stat"}
    assert by_type["para"]["queries"] == 2
    assert by_type["para"]["ndcg_10"] == pytest.approx(0.5)
    assert by_type["own"]["ndcg_10"] == pytest.approx(1.0)
    assert 0 < float(by_type["stat"]["ndcg_10"] or 0) < 1
