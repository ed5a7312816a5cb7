"""Compound parts are looked up in indexes (migration 20261201_0035) and find exactly what
the string comparison over every lexeme found."""

from __future__ import annotations

import psycopg

from tests.conftest import DbHandle

# corpus lexemes: compounds, their parts, near misses at every length boundary, non-ASCII
CORPUS = [
    "huurachterstand",
    "achterstand",
    "huur",
    "stand",
    "achter",
    "huurder",
    "huurachterstanden",
    "betalingsachterstand",
    "achterstandj",
    "standaard",
    "groothandel",
    "ijsgroothandel",
    "handel",
    "groot",
    "handelaar",
    "octrooiinbreuk",
    "octrooi",
    "inbreuk",
    "octrooien",
    "coöperatie",
    "wooncoöperatie",
    "coöperaties",
    "zzzz'quote",
    "zzzz'quotex",
    "abcde",
    "abcdefgh",
    "xabcde",
    "xyabcde",
    "xyzabcde",
    "abcdexyz",
    "abcdexy",
]
QUERIES = [
    ["achterstand"],
    ["huurachterstand"],
    ["groothandel", "ijsgroothandel"],
    ["octrooi"],
    ["coöperatie"],
    ["zzzz'quote"],
    ["abcde"],
    ["abcdefgh"],
    ["huur"],
    ["standaard", "stand"],
]

# the definition the lookup replaced (every lexeme compared with string functions)
REFERENCE = """
SELECT DISTINCT s.lexeme, s.ndoc
FROM unnest(CAST(%(q)s AS text[])) AS q(lexeme)
JOIN lexeme_stats AS s
  ON (length(q.lexeme) >= 5 AND length(s.lexeme) >= length(q.lexeme) + 3
      AND (left(s.lexeme, length(q.lexeme)) = q.lexeme
           OR right(s.lexeme, length(q.lexeme)) = q.lexeme))
  OR (length(s.lexeme) >= 5 AND length(q.lexeme) >= length(s.lexeme) + 3
      AND (left(q.lexeme, length(s.lexeme)) = s.lexeme
           OR right(q.lexeme, length(s.lexeme)) = s.lexeme))
ORDER BY 1
"""


def test_the_lookup_finds_what_the_scan_found(db: DbHandle) -> None:
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute("DELETE FROM lexeme_stats")
        conn.execute(
            "INSERT INTO lexeme_stats (lexeme, ndoc) SELECT l, 3 FROM unnest(CAST(%s AS text[])) l",
            [CORPUS],
        )
        for query in QUERIES:
            expected = conn.execute(REFERENCE, {"q": query}).fetchall()
            found = conn.execute(
                "SELECT lexeme, ndoc FROM ewall_compound_parts(%s) ORDER BY 1", [query]
            ).fetchall()
            assert found == expected, query
        # the cases the boundaries are about
        parts = conn.execute(
            "SELECT array_agg(lexeme ORDER BY lexeme) FROM ewall_compound_parts(%s)",
            [["achterstand"]],
        ).fetchone()
        assert parts is not None
        # compounds that end or begin with it, and its own head and tail; not
        # "huurachterstanden" (it ends otherwise) nor "achterstandj" (one letter longer)
        assert parts[0] == ["achter", "betalingsachterstand", "huurachterstand", "stand"]
        conn.rollback()


def test_the_function_s_own_lookups_are_index_scans(db: DbHandle) -> None:
    """The query inside ewall_compound_parts, read from the catalog, matches the indexes'
    expressions and collation, so a large vocabulary is searched by range, not read whole
    (a plpgsql body hides its plan, so its text is explained with the array bound)."""
    with psycopg.connect(db.superuser_url) as conn:
        row = conn.execute(
            "SELECT prosrc FROM pg_proc WHERE proname = 'ewall_compound_parts'"
        ).fetchone()
        assert row is not None
        body = str(row[0])
        query = body[body.index("RETURN QUERY") + len("RETURN QUERY") : body.rindex(";")]
        assert "unnest(query_lexemes)" in query
        query = query.replace("unnest(query_lexemes)", "unnest(CAST(%s AS text[]))")
        conn.execute("SET enable_seqscan = off")
        plan = " ".join(
            r[0] for r in conn.execute("EXPLAIN " + query, [["achterstand", "octrooi"]])
        )
    assert "ix_lexeme_stats_prefix" in plan
    assert "ix_lexeme_stats_suffix" in plan
    assert "pk_lexeme_stats" in plan
