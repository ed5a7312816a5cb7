"""The metric functions against values worked out by hand (linear gain, log2(rank + 1))."""

from __future__ import annotations

import math

import pytest

from app.evaluation import metrics
from app.evaluation.repository import Judgement
from app.evaluation.runner import judgement_level, query_grades


def test_ndcg_recall_mrr_on_a_mixed_ranking() -> None:
    ranking = ["a", "b", "c", "d"]
    grades = {"a": 3.0, "c": 2.0, "e": 1.0}  # e was judged relevant but not retrieved
    # DCG = 3/log2(2) + 2/log2(4) = 3 + 1 = 4; ideal = 3/1 + 2/log2(3) + 1/log2(4)
    assert metrics.ndcg_at(ranking, grades, 10) == pytest.approx(0.8400079830158563)
    assert metrics.ndcg_at(ranking, grades, 10) == pytest.approx(4 / (3 + 2 / math.log2(3) + 0.5))
    assert metrics.recall_at(ranking, grades, 10) == pytest.approx(2 / 3)
    assert metrics.recall_at(ranking, grades, 1) == pytest.approx(1 / 3)
    assert metrics.reciprocal_rank(ranking, grades) == 1.0


def test_cutoff_applies_to_gain_and_ideal() -> None:
    ranking = ["x", "a", "b"]
    grades = {"a": 2.0, "b": 1.0}
    # @1: nothing relevant at rank 1; the ideal at 1 is 2/1
    assert metrics.ndcg_at(ranking, grades, 1) == 0.0
    # @2: 2/log2(3) over the ideal 2/1 + 1/log2(3)
    assert metrics.ndcg_at(ranking, grades, 2) == pytest.approx(
        (2 / math.log2(3)) / (2 + 1 / math.log2(3))
    )
    assert metrics.reciprocal_rank(ranking, grades) == 0.5
    assert metrics.first_relevant_rank(ranking, grades) == 2


def test_a_document_counts_once_at_its_first_rank() -> None:
    # document level: several chunks of "a" in the chunk ranking
    ranking = ["x", "a", "a", "b"]
    grades = {"a": 2.0, "b": 2.0}
    expected = (2 / math.log2(3) + 2 / math.log2(5)) / (2 + 2 / math.log2(3))
    assert metrics.ndcg_at(ranking, grades, 10) == pytest.approx(expected)
    assert metrics.ndcg_at(ranking, grades, 10) == pytest.approx(0.6509209298071326)
    assert metrics.recall_at(ranking, grades, 2) == 0.5
    assert metrics.recall_at(ranking, grades, 3) == 0.5  # the repeat adds nothing
    assert metrics.first_ranks(ranking) == {"x": 1, "a": 2, "b": 4}


def test_perfect_and_empty_rankings() -> None:
    grades = {"a": 3.0, "b": 1.0}
    assert metrics.ndcg_at(["a", "b"], grades, 10) == pytest.approx(1.0)
    assert metrics.ndcg_at([], grades, 10) == 0.0
    assert metrics.recall_at([], grades, 50) == 0.0
    assert metrics.reciprocal_rank([], grades) == 0.0


def test_queries_without_relevant_judgements_have_no_score() -> None:
    for grades in ({}, {"a": 0.0}, {"a": 0.5}):  # 0.5: raters split 0 and 1
        assert metrics.ndcg_at(["a"], grades, 10) is None
        assert metrics.recall_at(["a"], grades, 10) is None
        assert metrics.reciprocal_rank(["a"], grades) is None


def test_fractional_grades_count_as_gain() -> None:
    # mean of raters 3 and 2 = 2.5, a second target 1.0
    grades = {"a": 2.5, "b": 1.0}
    got = metrics.ndcg_at(["b", "a"], grades, 10)
    assert got == pytest.approx((1 + 2.5 / math.log2(3)) / (2.5 + 1 / math.log2(3)))


def test_score_query_and_means_skip_undefined_queries() -> None:
    q1 = metrics.score_query(["a", "b", "c", "d"], {"a": 3.0, "c": 2.0, "e": 1.0})
    q2 = metrics.score_query(["z"], {"y": 2.0})
    q3 = metrics.score_query(["a"], {"a": 0.0})  # no relevant target: no score
    assert q1.relevant == 3 and q1.retrieved == 4
    assert q1.relevant_ranks == {"a": 1, "c": 3, "e": None}
    assert q2.ndcg_10 == 0.0 and q2.mrr == 0.0 and q2.first_relevant_rank is None
    assert q3.ndcg_10 is None
    means = metrics.mean_scores([q1, q2, q3])
    assert means["queries"] == 2
    assert means["ndcg_10"] == pytest.approx((0.8400079830158563 + 0.0) / 2)
    assert means["recall_10"] == pytest.approx((2 / 3 + 0) / 2)
    assert means["recall_50"] == pytest.approx((2 / 3 + 0) / 2)
    assert means["mrr"] == pytest.approx(0.5)
    assert metrics.mean_scores([])["ndcg_10"] is None


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError, match="k must be"):
        metrics.ndcg_at(["a"], {"a": 1.0}, 0)
    with pytest.raises(ValueError, match="k must be"):
        metrics.recall_at(["a"], {"a": 1.0}, 0)


def _j(kind: str, target: str, grade: int, by: str = "r1") -> Judgement:
    return Judgement("q", kind, target, grade, by)  # type: ignore[arg-type]


def test_judgements_become_grades_per_level() -> None:
    chunk = "api:doc-1:0123456789abcdef"
    other = "api:doc-2:fedcba9876543210"
    # chunk judgements only: chunk level, raters averaged
    js = [_j("chunk", chunk, 3, "r1"), _j("chunk", chunk, 2, "r2"), _j("chunk", other, 0)]
    assert judgement_level(js) == "chunk"
    assert query_grades(js, "chunk") == {chunk: 2.5, other: 0.0}
    # any document judgement: document level; a chunk judgement counts for its document and
    # the higher grade wins
    js = [_j("document", "api:doc-1", 1), _j("chunk", chunk, 3), _j("chunk", other, 2)]
    assert judgement_level(js) == "document"
    assert query_grades(js, "document") == {"api:doc-1": 3.0, "api:doc-2": 2.0}
    # ECLIs hold colons: only the last segment of a chunk id is the hash
    ecli_chunk = "rechtspraak:ECLI:NL:HR:1996:AA2015:0123456789abcdef"
    assert query_grades(
        [_j("document", "rechtspraak:ECLI:NL:HR:1996:AA2015", 0), _j("chunk", ecli_chunk, 2)],
        "document",
    ) == {"rechtspraak:ECLI:NL:HR:1996:AA2015": 2.0}
