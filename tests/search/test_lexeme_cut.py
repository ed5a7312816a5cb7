"""The sparse leg's lexemes are whole words cut to 7 letters (migration 20261203_0044): the
stored column, the question, the synonym rules and the user's websearch operators go through
the same normalisation, and the snippet still marks the words that matched."""

from __future__ import annotations

import psycopg
from fastapi.testclient import TestClient

from app.db import migrate
from app.settings import Settings
from tests import pg
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm

TEXT = (
    "De ondernemer vorderde op grond van artikel 6:162 BW schadevergoeding van de "
    "werkgevers; de rechtbank (ECLI:NL:HR:2019:1278) wees de proceskostenveroordeling af. "
    "Ongeëvenaarde uitvindingen, het octrooi en de verzekering van 2019."
)


def _firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C", "Client")
    firm.matter("M", "C", team=["alice@firm.nl"])
    firm.document("tekst", TEXT, client_id="C", matter_id="M")
    firm.document(
        "onderneming",
        "De onderneming werd verzekerd tegen brand.",
        client_id="C",
        matter_id="M",
    )
    firm.document(
        "huur", "De huurder heeft de huurovereenkomst ontbonden.", client_id="C", matter_id="M"
    )
    return firm


def _ids(firm: Firm, query: str) -> list[str]:
    return firm.documents_found("alice@firm.nl", query, mode="sparse", k=10)


def test_the_question_and_the_column_normalise_a_text_to_the_same_lexemes(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    _firm(client, auth)
    with psycopg.connect(db.superuser_url) as conn:
        rows = conn.execute(
            "SELECT tsvector_to_array(c.body_tsv), ewall_query_lexemes(c.body), "
            "       c.body_tsv = ewall_nl_tsvector(c.body) "
            "FROM chunks AS c JOIN documents AS d USING (document_id) "
            "WHERE d.external_id = 'tekst'"
        ).fetchall()
    assert rows
    for stored, question, same_positions in rows:
        assert sorted(stored) == sorted(question)
        assert same_positions
        lexemes = set(stored)
        # letters-only words cut to 7, accents off, no stemming; stop words out
        assert {"onderne", "werkgev", "procesk", "ongeeve", "uitvind", "verzeke"} <= lexemes
        assert {"octrooi", "grond", "af"} <= lexemes
        assert not lexemes & {"de", "van", "het", "op", "en"}
        assert max(len(x) for x in lexemes if x.isalpha()) == 7
        # tokens with a digit stay whole: citations, ECLI, numbers
        assert {"art6x162bw", "bw", "eclinlhr20191278", "2019"} <= lexemes


def test_an_inflection_the_cut_joins_now_matches(client: TestClient, auth: Tokens) -> None:
    """"ondernemer" and "onderneming" (snowball: ondernemer / ondernem) meet on "onderne";
    "verzekering" and "verzekerd" (verzeker / verzekerd) on "verzeke"."""
    firm = _firm(client, auth)
    assert set(_ids(firm, "ondernemer")) == {"tekst", "onderneming"}
    assert set(_ids(firm, "verzekerd")) == {"tekst", "onderneming"}
    assert _ids(firm, "huurovereenkomsten") == ["huur"]
    # websearch operators are cut the same way: the phrase and the exclusion
    assert _ids(firm, '"ondernemingen werd verzekerd"') == ["onderneming"]
    assert set(_ids(firm, "ondernemers OR huurders")) == {"tekst", "onderneming", "huur"}
    assert _ids(firm, "ondernemer -werkgever") == ["onderneming"]


def test_the_snippet_marks_the_words_a_cut_lexeme_matched(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    for mode in ("sparse", "hybrid"):
        hits = firm.search("alice@firm.nl", "ondernemers verzekering", mode=mode, k=10)
        snippet = next(
            r["snippet"] for r in hits["results"] if r["document"]["external_id"] == "onderneming"
        )
        assert "<b>onderneming</b>" in snippet and "<b>verzekerd</b>" in snippet, (mode, snippet)


def test_the_headline_query_makes_prefixes_of_the_cut_lexemes_only(db: DbHandle) -> None:
    with psycopg.connect(db.superuser_url) as conn:
        websearch = conn.execute(
            "SELECT CAST(ewall_nl_headline_query(ewall_nl_websearch(%s)) AS text)",
            ('"werkgevers aansprakelijk" OR huur -octrooien',),
        ).fetchone()
        question = conn.execute(
            "SELECT CAST(ewall_nl_headline_query(CAST(%s AS tsquery)) AS text)",
            ("'art6x162bw' & 'bw' & 'wetboek' & 'huur'",),
        ).fetchone()
    assert websearch == ("'werkgev':* <-> 'aanspra':* | 'huur' & !'octrooi':*",)
    # citation tokens and lexemes shorter than 7 letters are whole words: no prefix
    assert question == ("'art6x162bw' & 'bw' & 'wetboek':* & 'huur'",)


def test_a_synonym_rule_is_a_phrase_of_the_cut_lexemes_with_its_gaps(db: DbHandle) -> None:
    """Both sides of a rule come from the column's normalisation; a stop word inside a term
    keeps its position, so the phrase matches the text it was written from."""
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute(
            "INSERT INTO search_synonyms (term, synonym, created_by) VALUES "
            "('wet op de bedrijfsorganisatie', 'WBO', 't')"
        )
        target, substitute = conn.execute(
            "SELECT target::text, substitute::text FROM search_synonyms "
            "WHERE term = 'wet op de bedrijfsorganisatie'"
        ).fetchone() or (None, None)
        assert target == "'wet' <3> 'bedrijf'"
        assert substitute == "'wet' <3> 'bedrijf' | 'wbo'"
        row = conn.execute(
            "SELECT ewall_nl_tsvector('Volgens de Wet op de bedrijfsorganisatie') "
            "       @@ CAST(%s AS tsquery)",
            (target,),
        ).fetchone()
        assert row == (True,)


SNOWBALL = "to_tsvector('ewall_nl'::regconfig, ewall_legal_normalize(body))"
CUT = "ewall_nl_tsvector(body)"
# the rows whose body_tsv is not what each expression gives
STALE = {
    SNOWBALL: "SELECT count(*) FROM chunks "
    "WHERE body_tsv IS DISTINCT FROM to_tsvector('ewall_nl'::regconfig, ewall_legal_normalize(body))",
    CUT: "SELECT count(*) FROM chunks WHERE body_tsv IS DISTINCT FROM ewall_nl_tsvector(body)",
}


def _column_state(url: str, expression: str) -> dict[str, object]:
    """The generated expression of body_tsv on chunks and each partition, how many rows do
    not hold ``expression``'s value, and whether both lexeme tables equal a recount."""
    with psycopg.connect(url) as conn:
        generated = conn.execute(
            "SELECT DISTINCT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef AS d "
            "JOIN pg_attribute AS a ON a.attrelid = d.adrelid AND a.attnum = d.adnum "
            "WHERE a.attname = 'body_tsv' AND (d.adrelid = 'chunks'::regclass OR d.adrelid IN "
            "  (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'chunks'::regclass))"
        ).fetchall()
        partitions = conn.execute(
            "SELECT count(*) FROM pg_inherits WHERE inhparent = 'chunks'::regclass"
        ).fetchone()
        stale = conn.execute(STALE[expression]).fetchone()
        key_diff = conn.execute(
            "(SELECT lexeme, wall_group_id, source_acl_id, n_chunks FROM search_key_lexeme_stats "
            " WHERE n_chunks > 0 "
            " EXCEPT SELECT lex, wall_group_id, source_acl_id, count(*) "
            " FROM chunks, unnest(tsvector_to_array(body_tsv)) AS lex "
            " WHERE NOT suppressed GROUP BY 1, 2, 3) "
            "UNION ALL "
            "(SELECT lex, wall_group_id, source_acl_id, count(*) "
            " FROM chunks, unnest(tsvector_to_array(body_tsv)) AS lex "
            " WHERE NOT suppressed GROUP BY 1, 2, 3 "
            " EXCEPT SELECT lexeme, wall_group_id, source_acl_id, n_chunks "
            " FROM search_key_lexeme_stats)"
        ).fetchall()
        global_diff = conn.execute(
            "(SELECT lexeme, ndoc FROM lexeme_stats WHERE ndoc > 0 "
            " EXCEPT SELECT lex, count(*) FROM chunks, unnest(tsvector_to_array(body_tsv)) AS lex "
            " GROUP BY 1) "
            "UNION ALL "
            "(SELECT lex, count(*) FROM chunks, unnest(tsvector_to_array(body_tsv)) AS lex "
            " GROUP BY 1 EXCEPT SELECT lexeme, ndoc FROM lexeme_stats)"
        ).fetchall()
        # the rows of migrations before 0043's downgrade target (0065's English terms leave
        # with its own downgrade)
        rules = conn.execute(
            "SELECT count(*) FROM search_synonyms WHERE target IS NOT NULL"
            " AND created_by <> 'ewall-starter-en'"
        ).fetchone()
    return {
        "generated": [g for (g,) in generated],
        "partitions": partitions[0] if partitions else None,
        "stale": stale[0] if stale else None,
        "key_stats_differ": key_diff,
        "lexeme_stats_differ": global_diff,
        "rules": rules[0] if rules else None,
    }


def test_the_migration_and_its_downgrade_rebuild_column_statistics_and_rules(
    client: TestClient, auth: Tokens, db: DbHandle, settings: Settings
) -> None:
    """Down to 20261203_0043 and up again with chunks in place: every partition's column
    changes its expression and every row its value, and both lexeme tables and the stored
    synonym rules are counted again from it (the triggers do not see a table rewrite)."""
    _firm(client, auth)
    url = db.superuser_url
    at_head = _column_state(url, CUT)
    assert at_head["generated"] == [CUT] and at_head["stale"] == 0
    assert not at_head["key_stats_differ"] and not at_head["lexeme_stats_differ"]
    with psycopg.connect(url) as conn:
        cut_rules = conn.execute("SELECT term, target::text FROM search_synonyms").fetchall()
    migrate.downgrade(
        url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim, revision="20261203_0043"
    )
    down = _column_state(url, SNOWBALL)
    assert down["generated"] == [SNOWBALL] and down["stale"] == 0
    assert not down["key_stats_differ"] and not down["lexeme_stats_differ"]
    assert down["partitions"] == at_head["partitions"] and down["rules"] == at_head["rules"]
    with psycopg.connect(url) as conn:
        snowball_rules = conn.execute(
            "SELECT term, target::text FROM search_synonyms"
        ).fetchall()
        assert conn.execute("SELECT (ewall_query_lexemes('ondernemingen'))[1]").fetchone() == (
            "ondernem",
        )
    assert snowball_rules != cut_rules
    migrate.upgrade(url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim)
    assert _column_state(url, CUT) == at_head
    with psycopg.connect(url) as conn:
        assert sorted(conn.execute("SELECT term, target::text FROM search_synonyms")) == sorted(
            cut_rules
        )
