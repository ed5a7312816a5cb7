"""The sparse leg's match budget holds for every form of question (issue 31, point 7):
websearch syntax (quotes, OR, -term) used to hand the user's tsquery to the leg as it was, so
`"common" OR rare` matched every chunk with the common word, past the budget that a plain
question of the same words keeps to."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import Connection

from app.search.repository import QueryAnalysis
from app.search.service import analyze_query as service_analyze_query
from tests.conftest import DbHandle

RARE, MID, COMMON, COMMON2 = "octrooi", "aansprakelijkheid", "huurovereenkomst", "opgezegd"
KEY = ("open", "public")  # the access key (wall group, source ACL) of the statistics


def _lexeme(conn: psycopg.Connection, word: str) -> str:
    row = conn.execute("SELECT (ewall_query_lexemes(%s))[1]", (word,)).fetchone()
    assert row is not None and row[0]
    return str(row[0])


@pytest.fixture
def stats(db: DbHandle) -> None:
    """A corpus of 100,000 chunks in which each common word's lexeme is in half of them, the
    middle one's in 2,000 and the rare one's in ten (the statistics the analysis reads, as
    the triggers write them, under the one access key the questions below are asked with).
    Rarest first, a budget of 1,000 takes the rare and the middle lexeme (the sum before
    each is under it) and stops before the common one."""
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute(
            "INSERT INTO search_key_stats (wall_group_id, source_acl_id, n_chunks) "
            "VALUES (%s, %s, 100000)",
            KEY,
        )
        for word, n in ((RARE, 10), (MID, 2000), (COMMON, 50000), (COMMON2, 50000)):
            conn.execute(
                "INSERT INTO search_key_lexeme_stats "
                "(lexeme, wall_group_id, source_acl_id, n_chunks) VALUES (%s, %s, %s, %s)",
                (_lexeme(conn, word), *KEY, n),
            )


def analyze_query(
    conn: Connection, query: str, common_df: float, match_budget: int
) -> QueryAnalysis:
    """The analysis for a person who may see the key the statistics above are under."""
    return service_analyze_query(
        conn,
        query,
        common_df,
        match_budget,
        wall_groups=[KEY[0]],
        source_acl_ids=[KEY[1]],
    )


def _matches(db: DbHandle, match_tsq: str, words: str) -> bool:
    with psycopg.connect(db.superuser_url) as conn:
        row = conn.execute(
            "SELECT ewall_nl_tsvector(%s) @@ CAST(%s AS tsquery)",
            (words, match_tsq),
        ).fetchone()
    assert row is not None
    return bool(row[0])


@pytest.mark.parametrize(
    ("question", "websearch"),
    [
        (f"{RARE} {MID} {COMMON}", False),
        (f"{RARE} OR {MID} OR {COMMON}", True),
        (f'"{COMMON}" OR {RARE} OR {MID}', True),
        (f'"{COMMON} {COMMON2}" OR {RARE} OR {MID} -fiets', True),
    ],
)
def test_the_match_budget_bounds_every_query_form(
    db: DbHandle, stats: None, question: str, websearch: bool
) -> None:
    with db.database.engine.connect() as conn:
        out = analyze_query(conn, question, 1.0, 1000)
    tsq = out.match_tsq
    # the rare word's chunks still match; a chunk with only the common word (50,000 of
    # them, past the budget of 1,000) is not a match candidate
    assert _matches(db, tsq, f"het {RARE} is verleend"), tsq
    assert not _matches(db, tsq, f"de {COMMON} {COMMON2}"), tsq
    # lifted budget (a sparse search that came back short): the common word matches again
    with db.database.engine.connect() as conn:
        full = analyze_query(conn, question, 1.0, 1 << 62)
    assert _matches(db, full.match_tsq, f"de {COMMON} {COMMON2}"), full.match_tsq


def test_the_user_s_operators_still_apply_within_the_budget(db: DbHandle, stats: None) -> None:
    with db.database.engine.connect() as conn:
        negated = analyze_query(conn, f"{RARE} -{COMMON}", 1.0, 1000).match_tsq
        only_negative = analyze_query(conn, f"-{RARE}", 1.0, 1000).match_tsq
    assert _matches(db, negated, f"het {RARE} is verleend")
    assert not _matches(db, negated, f"het {RARE} en de {COMMON}")
    # no positive word: nothing to match (not every chunk without the word)
    assert only_negative == ""


def test_a_negated_word_does_not_garble_the_lexemes_after_it(db: DbHandle, stats: None) -> None:
    # the closing quote of !'fiet' was once read as the opening quote of ' | ', so the
    # question gained lexemes made of operators and lost the words after the negation
    with db.database.engine.connect() as conn:
        out = analyze_query(conn, f'{RARE} -fiets OR "{COMMON} {MID}"', 1.0, 1 << 62)
    with psycopg.connect(db.superuser_url) as conn:
        expected = {_lexeme(conn, w) for w in (RARE, COMMON, MID)}
    assert set(out.rank_lexemes) == expected
    assert out.lexeme_count == 3
