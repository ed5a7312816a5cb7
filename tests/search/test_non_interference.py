"""Invariant 12, non-interference: what a person's search returns is a function of the rows
that person may see and of the query alone.

A lawyer's searches are run, then documents the lawyer may NOT see are added (in a matter
behind a wall that screens the lawyer, and in the lawyer's own matter under a source ACL
that leaves the lawyer out), full of the lawyer's query words, and the same searches run
again: every field of every answer (ids, order, scores, ranks, snippets, strategy) must be
the same. Suppressed chunks are visible to nobody, so they must not move the statistics
either.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import Firm, retag

LAWYER = "alice@firm.nl"
OTHER = "bob@firm.nl"  # in the walled matter's team: checks that the hidden rows match

VISIBLE = {
    "huur-1": (
        "De verhuurder vordert ontbinding van de huurovereenkomst wegens een huurachterstand "
        "van drie maanden. De kantonrechter wijst de vordering toe en legt een dwangsom op."
    ),
    "huur-2": (
        "Een huurachterstand rechtvaardigt niet altijd ontbinding en ontruiming van de "
        "woonruimte; de rechter weegt de belangen van de huurder mee."
    ),
    "octrooi-1": (
        "Het octrooi betreft een inventieve werkwijze voor het coaten van glas. De "
        "octrooihouder stelt dat de concurrent inbreuk maakt."
    ),
    "koop-1": (
        "Bij de koop van de woning bleek de fundering gebrekkig. De koper vordert "
        "schadevergoeding van de verkoper wegens non-conformiteit van de woning."
    ),
    "arbeid-1": (
        "De werkgever verzoekt ontbinding van de arbeidsovereenkomst wegens een verstoorde "
        "arbeidsrelatie. De kantonrechter kent de werknemer een vergoeding toe."
    ),
    "dwangsom-1": (
        "De dwangsom is verbeurd omdat de gedaagde het vonnis niet tijdig nakwam. De "
        "rechtbank matigt de verbeurde dwangsom niet."
    ),
}

# the lawyer's query words, many times over: enough to move any corpus statistic
HIDDEN_TEXT = (
    "Huurachterstand, ontbinding, dwangsom en octrooi: de verhuurder vordert ontbinding "
    "wegens huurachterstand, de rechter legt een dwangsom op, het octrooi wordt vernietigd. "
) * 6

SEARCHES: list[dict[str, Any]] = [
    {"query": "huurachterstand ontbinding", "mode": "sparse"},
    {"query": "huurachterstand ontbinding", "mode": "hybrid"},
    {"query": "huurachterstand ontbinding", "mode": "dense"},
    {"query": "octrooi inbreuk glas", "mode": "sparse", "k": 3},
    {"query": "octrooi inbreuk glas", "mode": "hybrid"},
    {"query": "wanneer legt de rechter een dwangsom op", "mode": "sparse"},
    {"query": "wanneer legt de rechter een dwangsom op", "mode": "hybrid"},
    {"query": "de rechter en de kantonrechter", "mode": "sparse"},
    {"query": '"dwangsom" -octrooi', "mode": "sparse"},
    {"query": "huurachterstand OR octrooi", "mode": "hybrid"},
    {"query": "ontbinding dwangsom", "mode": "hybrid", "collapse": "document"},
    {"query": "ontbinding dwangsom", "mode": "sparse"},
    {"query": "huurachterstand octrooi", "mode": "sparse"},
    {"query": "dwangsom octrooi vergoeding kantonrechter", "mode": "sparse"},
    # k larger than what matches: the sparse-only search re-runs without the bounds
    {"query": "dwangsom woonruimte fundering", "mode": "sparse", "k": 20},
]


def _firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    firm.person(LAWYER, aliases=["imanage:user:alice"])
    firm.person(OTHER, aliases=["imanage:user:bob"])
    firm.client_("C-1", "Acme B.V.")
    firm.client_("C-2", "Beta B.V.")
    firm.matter("M-OPEN", "C-1", team=[LAWYER, OTHER])
    firm.matter("M-SECRET", "C-2", team=[OTHER])
    firm.wall(kind="exclusionary", protects={"matters": ["M-SECRET"]}, screened=[LAWYER])
    retag(client)
    for external_id, body in VISIBLE.items():
        firm.document(external_id, body, client_id="C-1", matter_id="M-OPEN")
    return firm


def _answers(firm: Firm, person: str = LAWYER) -> list[dict[str, Any]]:
    out = []
    for body in SEARCHES:
        answer = firm.search(person, **body)
        # per-call fields: a fresh id and the time it took
        answer.pop("retrieval_id")
        answer.pop("took_ms")
        out.append(answer)
    return out


def _assert_same(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> None:
    changed = [body for body, b, a in zip(SEARCHES, before, after, strict=True) if a != b]
    assert changed == [], "these searches answered differently the second time"
    assert after == before


def _hidden_matches(firm: Firm) -> None:
    """The added rows are real matches for someone (so the comparison is not vacuous)."""
    seen = firm.search(OTHER, "huurachterstand ontbinding dwangsom", mode="sparse", k=50)
    ids = {r["document"]["external_id"] for r in seen["results"]}
    assert any(i.startswith("walled-") for i in ids), ids
    assert any(i.startswith("acl-") for i in ids), ids
    mine = firm.search(LAWYER, "huurachterstand ontbinding dwangsom", mode="sparse", k=50)
    assert not any(
        r["document"]["external_id"].startswith(("walled-", "acl-")) for r in mine["results"]
    )


@pytest.mark.parametrize(
    "sparse_form", ["filter first", "filter first, GIN", "postings summed", "impact order"]
)
def test_rows_the_lawyer_may_not_see_change_nothing_in_the_answer(
    client: TestClient, auth: Tokens, monkeypatch: Any, sparse_form: str
) -> None:
    """Walled and ACL-hidden documents full of the lawyer's words, in every form of the
    sparse leg (the match read from the GIN index, the postings summed and impact order
    forced here: the corpus is small): hidden postings head the lexemes' impact lists and
    lie in the lists that are summed, hidden chunks fill the GIN index's lists, and the
    lawyer's answers stay the same, field for field."""
    if sparse_form == "filter first, GIN":
        monkeypatch.setattr("app.search.service.SPARSE_ROW_TEST_MIN_SHARE", 0)
    if sparse_form in ("postings summed", "impact order"):
        monkeypatch.setattr("app.search.service.SPARSE_FILTER_FIRST_MAX", 0)
    if sparse_form == "impact order":
        monkeypatch.setattr("app.search.service.SPARSE_SUM_MAX_DF", -1)
        monkeypatch.setattr("app.search.service.SPARSE_IMPACT_MAX_LEXEMES", 1 << 30)
    firm = _firm(client, auth)
    before = _answers(firm)
    # the searches find something
    assert [b["query"] for b, a in zip(SEARCHES, before, strict=True) if not a["results"]] == []

    for n in range(8):  # behind the wall
        firm.document(f"walled-{n}", HIDDEN_TEXT, client_id="C-2", matter_id="M-SECRET")
    for n in range(3):  # in the lawyer's own matter, but the source ACL leaves her out
        firm.document(
            f"acl-{n}",
            HIDDEN_TEXT,
            client_id="C-1",
            matter_id="M-OPEN",
            acl={"default": "private", "allow": ["imanage:user:bob"], "deny": []},
        )
    _hidden_matches(firm)
    _assert_same(before, _answers(firm))


def _key_stats_match_chunks(db: DbHandle) -> None:
    """The per-access-key statistics equal a recount of the chunks anyone may see (not
    suppressed), after whatever writes came before."""
    with psycopg.connect(db.superuser_url) as conn:
        keys = conn.execute(
            "SELECT wall_group_id, source_acl_id, n_chunks, n_documents, n_document_tokens "
            "FROM search_key_stats WHERE n_chunks <> 0 OR n_documents <> 0 "
            "OR n_document_tokens <> 0 ORDER BY 1, 2"
        ).fetchall()
        recount = conn.execute(
            "SELECT wall_group_id, source_acl_id, count(*), count(DISTINCT document_id), "
            "sum(token_count) FROM chunks WHERE NOT suppressed GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall()
        lexemes = conn.execute(
            "SELECT lexeme, wall_group_id, source_acl_id, n_chunks FROM search_key_lexeme_stats "
            "WHERE n_chunks <> 0 ORDER BY 1, 2, 3"
        ).fetchall()
        lexeme_recount = conn.execute(
            "SELECT lex, wall_group_id, source_acl_id, count(*) "
            "FROM chunks, unnest(tsvector_to_array(body_tsv)) AS lex "
            "WHERE NOT suppressed GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
        ).fetchall()
    assert [tuple(int(v) if i >= 2 else v for i, v in enumerate(r)) for r in keys] == [
        tuple(int(v) if i >= 2 else v for i, v in enumerate(r)) for r in recount
    ]
    assert [tuple(r) for r in lexemes] == [tuple(r) for r in lexeme_recount]


def _groups(db: DbHandle, matter_id: str) -> set[str]:
    with psycopg.connect(db.superuser_url) as conn:
        rows = conn.execute(
            "SELECT DISTINCT wall_group_id FROM chunks WHERE matter_id = %s", (matter_id,)
        ).fetchall()
    return {r[0] for r in rows}


def _suppress(db: DbHandle, external_id: str, suppressed: bool) -> None:
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute(
            "UPDATE chunks SET suppressed = %s WHERE external_id = %s", (suppressed, external_id)
        )


def test_suppressed_chunks_do_not_count_in_the_statistics(
    db: DbHandle, client: TestClient, auth: Tokens
) -> None:
    firm = _firm(client, auth)
    before = _answers(firm)
    _key_stats_match_chunks(db)

    # a document in the lawyer's own matter, then suppressed: visible to nobody
    firm.document("withdrawn-1", HIDDEN_TEXT, client_id="C-1", matter_id="M-OPEN")
    _key_stats_match_chunks(db)
    assert _answers(firm) != before  # while it is searchable it counts (not vacuous)
    _suppress(db, "withdrawn-1", True)
    _key_stats_match_chunks(db)
    _assert_same(before, _answers(firm))

    # searchable again, then suppressed again: the counts follow every flip
    _suppress(db, "withdrawn-1", False)
    _key_stats_match_chunks(db)
    _suppress(db, "withdrawn-1", True)
    _key_stats_match_chunks(db)
    _assert_same(before, _answers(firm))


def test_key_statistics_follow_retagging_and_deletion(
    db: DbHandle, client: TestClient, auth: Tokens
) -> None:
    """A wall raised over a matter with chunks moves them to another group (re-tag), and a
    document deleted or re-ingested with other text moves its counts: the per-key figures
    stay equal to a recount of the chunks."""
    firm = _firm(client, auth)
    for n in range(3):
        firm.document(f"walled-{n}", HIDDEN_TEXT, client_id="C-2", matter_id="M-SECRET")
    _key_stats_match_chunks(db)
    groups = _groups(db, "M-OPEN")
    firm.person("carol@firm.nl")
    firm.wall(kind="exclusionary", protects={"matters": ["M-OPEN"]}, screened=["carol@firm.nl"])
    retag(client)
    assert _groups(db, "M-OPEN") != groups  # the chunks moved to another group
    _key_stats_match_chunks(db)
    firm.document(
        "huur-1", "Een heel andere tekst over een octrooi.", client_id="C-1", matter_id="M-OPEN"
    )
    _key_stats_match_chunks(db)
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute("DELETE FROM chunks WHERE external_id = 'walled-0'")
    _key_stats_match_chunks(db)


def test_a_large_hidden_corpus_moves_no_cut_budget_or_flag(
    db: DbHandle, client: TestClient, auth: Tokens
) -> None:
    """The common-word cut (a lexeme in more than a quarter of the chunks), the match budget
    and the sparse-only re-run without them (strategy "+full-sparse") only bind in a large
    corpus. The statistics of a million hidden chunks holding every query word, as the
    triggers would keep them (under a key the lawyer does not hold, and in the global
    tables), change none of the lawyer's answers."""
    firm = _firm(client, auth)
    before = _answers(firm)
    with psycopg.connect(db.superuser_url) as conn:
        lexemes = sorted(
            {
                str(row[0])
                for body in SEARCHES
                for row in conn.execute(
                    "SELECT unnest(ewall_query_lexemes(%s))", (body["query"].replace('"', ""),)
                ).fetchall()
            }
        )
        assert len(lexemes) > 10
        conn.execute(
            "INSERT INTO search_key_stats VALUES ('wg-hidden', 'public', 1000000, 100000, 1e8)"
        )
        for lexeme in lexemes:
            conn.execute(
                "INSERT INTO search_key_lexeme_stats VALUES (%s, 'wg-hidden', 'public', 900000)",
                (lexeme,),
            )
            conn.execute(
                "INSERT INTO lexeme_stats AS l VALUES (%s, 900000) "
                "ON CONFLICT (lexeme) DO UPDATE SET ndoc = l.ndoc + 900000",
                (lexeme,),
            )
        conn.execute(
            "UPDATE corpus_stats SET n_chunks = n_chunks + 1000000, "
            "n_documents = n_documents + 100000, n_document_tokens = n_document_tokens + 1e8"
        )
    _assert_same(before, _answers(firm))


def test_a_large_hidden_corpus_moves_no_dense_strategy(
    db: DbHandle, embedder: Any, auth: Tokens
) -> None:
    """The dense form (exact or HNSW) is named in the answer. It was chosen from the share of
    the corpus a person sees, so rows behind a wall could move a person from HNSW to exact
    (a fuzz: 4 visible and 6 hidden documents, with exact_max_rows 0 and the share threshold
    0.5). It is chosen from the visible rows alone now: here every person with a row is
    served by HNSW, whatever the corpus holds besides."""
    with make_client(db, make_settings(exact_max_rows=0), embedder) as client:
        firm = _firm(client, auth)
        before = _answers(firm)
        assert any(a["strategy"].startswith("hnsw") for a in before), before
        with psycopg.connect(db.superuser_url) as conn:
            conn.execute("UPDATE corpus_stats SET n_chunks = n_chunks + 1000000")
        _assert_same(before, _answers(firm))


@pytest.mark.parametrize("form", ["+postings", "+impact"])
def test_the_postings_answer_as_scoring_every_document(
    db: DbHandle, client: TestClient, auth: Tokens, monkeypatch: Any, form: str
) -> None:
    """The sparse leg's forms give the same answers: every matching document scored (filter
    first), and the best ones from the postings alone, every visible posting summed or read
    in impact order (taken when many chunks match; here forced with thresholds). Rewriting
    the rows in place (new tuple versions, another physical order) changes none of them."""
    firm = _firm(client, auth)
    before = _answers(firm)
    monkeypatch.setattr("app.search.service.SPARSE_FILTER_FIRST_MAX", 0)
    if form == "+impact":
        monkeypatch.setattr("app.search.service.SPARSE_SUM_MAX_DF", -1)
        monkeypatch.setattr("app.search.service.SPARSE_IMPACT_MAX_LEXEMES", 1 << 30)
    postings = _answers(firm)
    assert any(form in a["strategy"] for a in postings)
    for a in postings:
        a["strategy"] = a["strategy"].replace(form, "")
    _assert_same(before, postings)
    for external_id in reversed(list(VISIBLE)):
        with psycopg.connect(db.superuser_url) as conn:
            conn.execute(
                "UPDATE chunks SET modified_at = modified_at WHERE external_id = %s",
                (external_id,),
            )
    monkeypatch.setattr("app.search.service.SPARSE_FILTER_FIRST_MAX", 3_000)
    _assert_same(before, _answers(firm))


def test_the_cut_and_the_flag_follow_the_statistics_the_lawyer_may_see(
    db: DbHandle, client: TestClient, auth: Tokens
) -> None:
    """The other side of the large hidden corpus: the same figures under a key the lawyer
    holds do move the sparse leg: a plain question now reads the postings in impact order
    (strategy "+impact"); with a narrowing filter it matches the budgeted lexemes, which the
    common-word cut leaves short, so the sparse-only search re-runs without the cut
    (strategy "+full-sparse")."""
    firm = _firm(client, auth)
    question: dict[str, Any] = {"mode": "sparse", "k": 20, "filters": {"sources": ["api"]}}
    assert firm.search(LAWYER, "dwangsom fundering", **question)["strategy"] == "none"
    (group,) = _groups(db, "M-OPEN")
    with psycopg.connect(db.superuser_url) as conn:
        row = conn.execute("SELECT (ewall_query_lexemes('dwangsom'))[1]").fetchone()
        assert row is not None
        dwangsom = str(row[0])
        conn.execute(
            "UPDATE search_key_stats SET n_chunks = n_chunks + 1000000 "
            "WHERE wall_group_id = %s AND source_acl_id = 'public'",
            (group,),
        )
        conn.execute(
            "UPDATE search_key_lexeme_stats SET n_chunks = n_chunks + 900000 "
            "WHERE lexeme = %s AND wall_group_id = %s AND source_acl_id = 'public'",
            (dwangsom, group),
        )
    plain = firm.search(LAWYER, "dwangsom fundering", mode="sparse", k=20)
    assert plain["strategy"] == "none+impact"
    assert {r["document"]["external_id"] for r in plain["results"]} >= {"dwangsom-1"}
    answer = firm.search(LAWYER, "dwangsom fundering", **question)
    assert answer["strategy"] == "none+full-sparse"
    assert {r["document"]["external_id"] for r in answer["results"]} >= {"dwangsom-1"}


def test_a_matter_pending_re_tag_moves_no_statistic(client: TestClient, auth: Tokens) -> None:
    """A wall screens the lawyer from a matter the lawyer could see. Until the re-tag worker
    has moved its chunks (tests run without the worker), the matter is hidden from everyone
    while its chunks still carry the key the lawyer holds: the statistics must already leave
    them out, so every answer while the re-tag is pending equals the answer after it."""
    firm = _firm(client, auth)
    firm.matter("M-SOON", "C-1", team=[LAWYER, OTHER])
    for i in range(4):
        firm.document(f"soon-{i}", HIDDEN_TEXT, client_id="C-1", matter_id="M-SOON")
    seen = firm.search(LAWYER, "huurachterstand ontbinding dwangsom", mode="sparse", k=50)
    assert any(r["document"]["external_id"].startswith("soon-") for r in seen["results"])
    firm.wall(kind="exclusionary", protects={"matters": ["M-SOON"]}, screened=[LAWYER])
    # pending: hidden from everyone, its team included, until the re-tag has moved it
    ids = firm.documents_found(OTHER, "huurachterstand ontbinding dwangsom", mode="sparse", k=50)
    assert not any(i.startswith("soon-") for i in ids), ids
    pending = _answers(firm)
    retag(client)
    _assert_same(pending, _answers(firm))
    # the moved matter's rows are real matches for someone (the comparison is not vacuous)
    ids = firm.documents_found(OTHER, "huurachterstand ontbinding dwangsom", mode="sparse", k=50)
    assert any(i.startswith("soon-") for i in ids), ids


def test_rows_visible_to_nobody_change_nothing_in_the_answer(
    db: DbHandle, client: TestClient, auth: Tokens
) -> None:
    """Two kinds of rows that no one may see, full of the lawyer's query words: quarantined
    documents (a matter the matrix does not know, no client, no matter) and a document in
    the lawyer's own matter whose source ACL denies a group whose members ewall does not
    hold (the deny must not lapse, so nobody reads it). Their chunks are stored and indexed
    (under keys no person holds), and the lawyer's answers stay the same, field for field."""
    firm = _firm(client, auth)
    before = _answers(firm)
    for n, place in enumerate(
        [
            {"client_id": "C-1", "matter_id": "M-UNKNOWN"},
            {"matter_id": "M-OPEN"},
            {"client_id": "C-1"},
        ]
    ):
        assert firm.document(f"quarantined-{n}", HIDDEN_TEXT, **place)["quarantined"] is True
    firm.document(
        "unsynced-deny-0",
        HIDDEN_TEXT,
        client_id="C-1",
        matter_id="M-OPEN",
        acl={"default": "public", "allow": [], "deny": ["imanage:group:never-synced"]},
    )
    # stored and indexed, so the comparison is not vacuous; found by no one
    with psycopg.connect(db.superuser_url) as conn:
        stored = conn.execute(
            "SELECT count(*) FROM chunks WHERE external_id LIKE 'quarantined-%' "
            "OR external_id = 'unsynced-deny-0'"
        ).fetchone()
    assert stored is not None and stored[0] >= 4
    for person in (LAWYER, OTHER):
        ids = firm.documents_found(
            person, "huurachterstand ontbinding dwangsom", mode="sparse", k=50
        )
        assert not any(i.startswith(("quarantined-", "unsynced-")) for i in ids), ids
    _assert_same(before, _answers(firm))
