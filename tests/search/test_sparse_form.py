"""Which form the sparse leg takes (app/search/service.py sparse_form): decided from the
counts over the rows the person may see and the request alone. The forms' answers are held
to brute force in test_sparse_recall.py and to non-interference in test_non_interference.py;
here, which one a question gets."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from app.search.repository import HybridParams, QueryAnalysis
from app.search.service import (
    SPARSE_FILTER_FIRST_MAX,
    SPARSE_IMPACT_MAX_LEXEMES,
    SPARSE_ROW_TEST_MAX_ROWS,
    SPARSE_ROW_TEST_MIN_SHARE,
    SPARSE_SUM_MAX_DF,
    sparse_form,
)
from tests.search.statement_params import hybrid_explain_params


def _params(**override: Any) -> HybridParams:
    raw = hybrid_explain_params(hnsw=False, **override)
    del raw["dense_hnsw"]
    return HybridParams(**raw)


def _analysis(rank_df: int, lexemes: int = 3) -> QueryAnalysis:
    rank = [chr(ord("a") + i) for i in range(lexemes)]
    return QueryAnalysis(
        match_tsq="'a' | 'b'",
        headline_tsq="'a' | 'b'",
        rank_lexemes=rank,
        rank_weights=[1.0] * lexemes,
        rank_idf_weights=[2.0] * lexemes,
        rank_tsq=" | ".join(f"'{x}'" for x in rank),
        rank_df=rank_df,
        lexeme_count=lexemes,
        matched_lexeme_count=2,
    )


def _form(
    rank_df: int, allowed_rows: int, websearch: bool = False, lexemes: int = 3, **override: Any
) -> str:
    analysis = _analysis(rank_df, lexemes)
    p = sparse_form(_params(**override), analysis, websearch=websearch, allowed_rows=allowed_rows)
    if p.sparse_impact:
        return "postings summed" if p.sparse_sum else "impact order"
    match = "ranking lexemes" if p.match_tsq == analysis.rank_tsq else "budgeted"
    return f"filter first, {'GIN' if p.sparse_gin else 'per row'}, {match}"


# twice the rare share of allowed rows hold a ranking lexeme, among more rows than the
# per-row test takes
COMMON_AMONG_MANY = (
    SPARSE_FILTER_FIRST_MAX,
    SPARSE_FILTER_FIRST_MAX * SPARSE_ROW_TEST_MIN_SHARE // 2,
)


@pytest.mark.parametrize(
    ("rank_df", "allowed_rows", "expected"),
    [
        # a rare match (under one allowed row in SPARSE_ROW_TEST_MIN_SHARE): the GIN index
        # finds its few chunks
        (10, 100_000, "filter first, GIN, ranking lexemes"),
        # few rows allowed, a common match among them: each allowed row tested
        (500, SPARSE_ROW_TEST_MAX_ROWS, "filter first, per row, ranking lexemes"),
        # a common match among many rows: the postings summed (the GIN lists are the
        # firm's, whatever the person may see)
        (*COMMON_AMONG_MANY, "postings summed"),
        (SPARSE_SUM_MAX_DF, 1_000_000, "postings summed"),
        # more visible postings than that, three lexemes: impact order, which stops early
        # (many lexemes: test_impact_order_takes_few_lexemes_held_by_many_visible_chunks)
        (SPARSE_SUM_MAX_DF + 1, 1_000_000, "impact order"),
    ],
)
def test_a_plain_question_takes_the_form_its_visible_counts_call_for(
    rank_df: int, allowed_rows: int, expected: str
) -> None:
    assert _form(rank_df, allowed_rows) == expected


@pytest.mark.parametrize(
    ("lexemes", "expected"),
    [
        (1, "impact order"),
        (SPARSE_IMPACT_MAX_LEXEMES, "impact order"),
        (SPARSE_IMPACT_MAX_LEXEMES + 1, "postings summed"),
    ],
)
def test_impact_order_takes_few_lexemes_held_by_many_visible_chunks(
    lexemes: int, expected: str
) -> None:
    """The threshold algorithm stops early when it merges few lists; with up to three it
    matched or beat the sum past SPARSE_SUM_MAX_DF visible chunks, with more it did not."""
    assert _form(SPARSE_SUM_MAX_DF + 1, 1_000_000, lexemes=lexemes) == expected
    assert _form(SPARSE_SUM_MAX_DF, 1_000_000, lexemes=lexemes) == "postings summed"


@pytest.mark.parametrize(
    "narrowing",
    [
        {"doc_types": ["brief"]},
        {"sources": ["imanage"]},
        {"matter_ids": ["M-1"]},
        {"session_matter_id": "M-1"},
    ],
)
def test_a_narrowing_filter_keeps_the_chunks_in_the_match(narrowing: dict[str, Any]) -> None:
    """The postings know nothing of document types, sources or dates: a narrowing filter
    keeps the sparse leg on the chunks (the ranking lexemes while few match, past that the
    budgeted match)."""
    assert _form(*COMMON_AMONG_MANY, **narrowing) == "filter first, GIN, ranking lexemes"
    assert _form(SPARSE_SUM_MAX_DF, 1_000_000, **narrowing) == "filter first, GIN, budgeted"


def test_search_operators_keep_the_budgeted_match() -> None:
    assert _form(*COMMON_AMONG_MANY, websearch=True) == "filter first, GIN, budgeted"


def test_without_the_sparse_leg_nothing_is_chosen() -> None:
    p = sparse_form(
        replace(_params(), use_sparse=False),
        _analysis(SPARSE_SUM_MAX_DF),
        websearch=False,
        allowed_rows=1_000_000,
    )
    assert not p.sparse_impact
