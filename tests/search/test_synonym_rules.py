"""Synonym rules are stored with each synonym (migration 20261201_0032): the view that
ts_rewrite reads gives exactly the rules the expressions compute, and follows every edit."""

from __future__ import annotations

import psycopg

from app.search.service import analyze_query
from tests.conftest import DbHandle

# what the rule trigger computes (migration 20261203_0044: both sides from the column's
# normalisation, ewall_nl_phrase), as one statement over the table
COMPUTED = """
SELECT CASE WHEN cardinality(ewall_query_lexemes(s.term)) = 1
            THEN CAST(quote_literal((ewall_query_lexemes(s.term))[1]) AS tsquery)
            ELSE ewall_nl_phrase(s.term) END::text,
       (CASE WHEN cardinality(ewall_query_lexemes(s.term)) = 1
            THEN CAST(quote_literal((ewall_query_lexemes(s.term))[1]) AS tsquery)
            ELSE ewall_nl_phrase(s.term) END
       || ewall_nl_phrase(s.synonym))::text
FROM search_synonyms AS s
WHERE cardinality(ewall_query_lexemes(s.term)) > 0
  AND cardinality(ewall_query_lexemes(s.synonym)) > 0
ORDER BY 1, 2"""
STORED = "SELECT target::text, substitute::text FROM search_synonym_rules ORDER BY 1, 2"


def test_stored_rules_equal_the_computed_ones_through_edits(db: DbHandle) -> None:
    with psycopg.connect(db.superuser_url) as conn:
        assert conn.execute(STORED).fetchall() == conn.execute(COMPUTED).fetchall()
        assert conn.execute(STORED).fetchall()  # the starter synonyms
        conn.execute(
            "INSERT INTO search_synonyms (term, synonym, created_by) VALUES "
            "('octrooi', 'patent', 't'), ('art. 6:162 BW', 'onrechtmatige daad', 't'), "
            "('de', 'het', 't')"
        )
        assert conn.execute(STORED).fetchall() == conn.execute(COMPUTED).fetchall()
        # an edit recomputes the rule, and a hand-set rule does not survive
        conn.execute(
            "UPDATE search_synonyms SET synonym = 'uitvinding', target = 'x'::tsquery "
            "WHERE term = 'octrooi'"
        )
        stored = conn.execute(STORED).fetchall()
        assert stored == conn.execute(COMPUTED).fetchall()
        assert any("uitvind" in substitute for _, substitute in stored)
        assert not any(target == "'x'" for target, _ in stored)
        conn.execute("DELETE FROM search_synonyms WHERE term = 'octrooi'")
        assert conn.execute(STORED).fetchall() == conn.execute(COMPUTED).fetchall()
        rewritten = conn.execute(
            "SELECT ts_rewrite(ewall_nl_websearch('onrechtmatige'), "
            "'SELECT target, substitute FROM search_synonym_rules')::text"
        ).fetchone()
        assert rewritten is not None


def _weights(db: DbHandle, question: str, synonym_weight: float) -> dict[str, float]:
    """The document ranking's weight per ranking lexeme of ``question``."""
    with db.database.engine.connect() as conn:
        out = analyze_query(
            conn,
            question,
            1.0,
            1 << 62,
            wall_groups=["open"],
            source_acl_ids=["public"],
            synonym_weight=synonym_weight,
        )
    return dict(zip(out.rank_lexemes, out.rank_weights, strict=True))


def test_lexemes_a_synonym_adds_weigh_less_than_the_question_s_own(db: DbHandle) -> None:
    # the starter rule ontslag -> opzegging: the question's own word keeps weight 1, the
    # synonym's lexeme ranks at the synonym weight (and still matches)
    weights = _weights(db, "ontslag", 0.3)
    assert weights.pop("ontslag") == 1.0
    assert weights and set(weights.values()) == {0.3}  # opzegging's lexeme
    assert set(_weights(db, "ontslag", 1.0).values()) == {1.0}
    # typed by the user as well: a word of the question, at full weight
    assert set(_weights(db, "ontslag en opzegging", 0.3).values()) == {1.0}
    assert set(_weights(db, "arbeidsovereenkomst", 0.3).values()) == {1.0}  # no synonym
