"""A search's regular expressions stay compiled (issue 27).

PostgreSQL keeps the 32 regular expressions a connection compiled last (MAX_CACHED_RES in
src/backend/utils/adt/regexp.c, least recently used out). The question's analysis
(sql/search.sql, analyze_query) runs about 30: ewall_legal_normalize's, the names', the
lexeme reader's and the cut's. Two more of its own made the cycle overflow the cache, and
then every search compiled every one of them again: about 30 ms an analysis instead of 2 on
two cores. The analysis now tests "a-z only" and "one letter" without patterns of their
own, and runs the citation's pattern only for a lexeme that starts as a citation token; the
normaliser (legal_normalize.v3.sql) runs a pass only on a text that can hold its match.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import psycopg
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.auth.service import Principal
from app.db.engine import Database, DatabaseUrls
from app.search.schemas import SearchIn
from app.search.service import embed_query, run_search
from tests import pg
from tests.conftest import DbHandle, Tokens
from tests.helpers import one_matter_firm

MAX_CACHED_RES = 32  # PostgreSQL's regexp.c

LAWYER = "alice@firm.nl"
QUESTIONS = [
    "Een werknemer rijdt elke dag collega's in het busje van de baas naar de bouwplaats",
    "vakantiehuis verhuur toeristenbelasting gemeente huis",
    "ontbinding van de huurovereenkomst wegens huurachterstand",
]


DOCUMENTS = {
    "D-1": "De werkgever stelde een bestelbusje ter beschikking voor het vervoer van "
    "collega's naar de bouwplaats; de bijtelling voor de auto van de zaak bleef uit.",
    "D-2": "De gemeente hief toeristenbelasting over de verhuur van het vakantiehuis.",
    "D-3": "De verhuurder vorderde ontbinding van de huurovereenkomst wegens een "
    "huurachterstand van vier maanden.",
    "D-4": "De aannemer is op grond van art. 6:162 BW aansprakelijk voor de schade; de "
    "schadevergoeding wegens onrechtmatige daad omvat ook de kosten van herstel.",
}
# a statute citation and typed syntax (a phrase, OR, a left-out term): the websearch
# pattern and the citation's prefix beside ewall_legal_normalize's own
TYPED_CITATION = '"art. 6:162 BW" schadevergoeding OR onrechtmatige -huurachterstand'


def _patterns_after_searches(
    client: TestClient, auth: Tokens, db: DbHandle, embedder: Any, questions: list[str]
) -> list[str]:
    """The regular expressions a connection holds after the searches of ``questions``, each
    sparse and hybrid, in that order."""
    one_matter_firm(client, auth, LAWYER, DOCUMENTS)
    resources = client.app.state.resources  # type: ignore[attr-defined]
    # the app's statements on a connection of their own, whose login (a superuser, switched
    # to the app role as the app's is) may read the connection's memory afterwards
    urls = DatabaseUrls(app=db.superuser_url, migrations=db.superuser_url)
    database = Database(urls, app_role=pg.APP_ROLE, pool_size=2, max_overflow=0)
    try:
        searching = dataclasses.replace(resources, database=database)
        alice = Principal(LAWYER, frozenset({"lawyer"}))
        with database.transaction() as conn:
            for question in questions:
                for mode in ("sparse", "hybrid"):
                    qvec = embed_query(embedder, question) if mode == "hybrid" else None
                    request = SearchIn(query=question, mode=mode)
                    assert run_search(conn, searching, alice, request, qvec=qvec).rows
            conn.execute(text("RESET ROLE"))
            return list(
                conn.execute(
                    text(
                        "SELECT ident FROM pg_backend_memory_contexts"
                        " WHERE name = 'RegexpMemoryContext'"
                    )
                ).scalars()
            )
    finally:
        database.dispose()


def test_a_search_compiles_fewer_regular_expressions_than_a_connection_keeps(
    client: TestClient, auth: Tokens, db: DbHandle, embedder: Any
) -> None:
    patterns = _patterns_after_searches(client, auth, db, embedder, QUESTIONS)
    # fewer than the cache holds: none was pushed out, so none is compiled twice
    assert patterns and len(patterns) < MAX_CACHED_RES, patterns


def test_a_question_with_a_citation_and_typed_syntax_stays_inside_the_cache(
    client: TestClient, auth: Tokens, db: DbHandle, embedder: Any
) -> None:
    """Version 2 of ewall_legal_normalize ran its 25 patterns on every text: with the
    websearch pattern and the citation's, 33, and every such search compiled them all again.
    Version 3 (migration 20261217_0074) runs a pass only where it can match. The plain
    questions run with it, as a connection serves both kinds in turn."""
    patterns = _patterns_after_searches(client, auth, db, embedder, [*QUESTIONS, TYPED_CITATION])
    assert patterns and len(patterns) < MAX_CACHED_RES, (len(patterns), patterns)


WORDS = [
    *("", "a", "z", "g", "ab", "awb", "bw", "A", "Awb", "é", "éa", "ß", "a1", "1", "6x18", "æ"),
    *("art", "art6", "art6x18", "art6x18a", "art6x18ab", "artx18", "art6x", "arts", "kaart"),
    *("art6x18awb", "art6x162bw", "art5hnw", "art6x18xawb", "bestuur", "a-b", "a'b", "{", "`"),
]


def test_the_analysis_tests_read_as_the_patterns_they_replace(db: DbHandle) -> None:
    """Each rewritten test of sql/search.sql's analysis gives what its pattern gave, for
    every word and for every pair of a typed lexeme c ending with a lexeme m."""
    with psycopg.connect(db.superuser_url) as conn:
        words = conn.execute(
            """
            SELECT w, w ~ '^[a-z]+$',
                   w <> '' AND translate(w, 'abcdefghijklmnopqrstuvwxyz', '') = '',
                   w !~ '^[[:alpha:]]$',
                   length(w) <> 1 OR w !~ '^[[:alpha:]]+$'
            FROM unnest(CAST(%s AS text[])) AS w
            """,
            (WORDS,),
        ).fetchall()
        pairs = conn.execute(
            """
            SELECT c, m,
                   coalesce(left(c, length(c) - length(m)) ~ '^art[0-9]+(x[0-9]+[a-z]?)?$',
                            false),
                   coalesce(CASE WHEN left(c, 3) = 'art'
                                 THEN left(c, length(c) - length(m))
                                      ~ '^art[0-9]+(x[0-9]+[a-z]?)?$' END, false)
            FROM unnest(CAST(%s AS text[])) AS c, unnest(CAST(%s AS text[])) AS m
            WHERE length(c) > length(m) AND right(c, length(m)) = m
            """,
            (WORDS, WORDS),
        ).fetchall()
    assert len(words) == len(WORDS)
    assert [w for w, *tests in words if tests[0] != tests[1] or tests[2] != tests[3]] == []
    assert any(old for _, _, old, _ in pairs)  # a citation's prefix is among them
    assert [(c, m) for c, m, old, new in pairs if old != new] == []
