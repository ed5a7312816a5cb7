"""The sparse leg: OR semantics, legal citations, synonyms editable at run time, websearch."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.search.service import analyze_configured
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, ok


def _firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C", "Client")
    firm.matter("M", "C", team=["alice@firm.nl"])
    firm.document(
        "a", "De uitvinding mist inventiviteit gelet op art. 56 EOV.", client_id="C", matter_id="M"
    )
    firm.document(
        "b", "Het patent werd in Duitsland verleend aan de houder.", client_id="C", matter_id="M"
    )
    firm.document(
        "c", "De huurder heeft de huurovereenkomst ontbonden.", client_id="C", matter_id="M"
    )
    return firm


def _ids(firm: Firm, query: str) -> list[str]:
    return firm.documents_found("alice@firm.nl", query, mode="sparse", k=10)


def test_natural_language_question_matches_on_any_lexeme(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    assert set(_ids(firm, "inventiviteit huurovereenkomst")) == {"a", "c"}


def test_citation_forms_meet(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    for form in ("artikel 56 EOV", "EOV art. 56", "art. 56 van het EOV"):
        assert _ids(firm, form)[0] == "a", form


def test_synonyms_are_editable_at_run_time(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    assert "b" not in _ids(firm, "octrooi")
    admin = auth("admin@firm.nl", "admin")
    ok(
        client.put(
            "/v1/search/synonyms", json={"term": "octrooi", "synonym": "patent"}, headers=admin
        )
    )
    assert "b" in _ids(firm, "octrooi")
    items = ok(client.get("/v1/search/synonyms", headers=admin))["items"]
    assert {"term": "octrooi", "synonym": "patent"} in [
        {"term": i["term"], "synonym": i["synonym"]} for i in items
    ]  # next to the starter rows of migration 20261201_0019
    ok(
        client.request(
            "DELETE",
            "/v1/search/synonyms",
            json={"term": "octrooi", "synonym": "patent"},
            headers=admin,
        )
    )
    assert "b" not in _ids(firm, "octrooi")
    r = client.put("/v1/search/synonyms", json={"term": "de", "synonym": "het"}, headers=admin)
    assert r.status_code == 422
    # no control characters in what is stored (and listed to an admin's terminal)
    r = client.put(
        "/v1/search/synonyms", json={"term": "octrooi\x1b[2J", "synonym": "patent"}, headers=admin
    )
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "term", r.text
    assert client.get("/v1/search/synonyms", headers=auth("l@firm.nl", "lawyer")).status_code == 403


def test_websearch_operators_are_kept_when_typed(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    assert set(_ids(firm, "inventiviteit OR huurovereenkomst")) == {"a", "c"}
    assert _ids(firm, "huurovereenkomst -huurder") == []
    assert _ids(firm, '"huurovereenkomst ontbonden"') == ["c"]
    assert _ids(firm, '"ontbonden huurovereenkomst"') == []  # the phrase, not the words
    assert _ids(firm, '"huurovereenkomst" huurder') == ["c"]


def test_an_english_legal_term_finds_the_dutch_word(client: TestClient, auth: Tokens) -> None:
    """Agents often ask in English: the sparse leg had nothing Dutch to match (a check of
    2026-12-06, migration 20261211_0065). The terms are rows a firm may delete."""
    firm = _firm(client, auth)
    assert _ids(firm, "tenant of the lease") == ["c"]
    admin = auth("root@firm.nl", "admin")
    listed = ok(client.get("/v1/search/synonyms", headers=admin))["items"]
    assert {"term": "tenant", "synonym": "huurder"} in [
        {"term": s["term"], "synonym": s["synonym"]} for s in listed
    ]
    for term, dutch in (("tenant", "huurder"), ("lease", "huur")):
        deleted = client.request(
            "DELETE", "/v1/search/synonyms", json={"term": term, "synonym": dutch}, headers=admin
        )
        assert deleted.status_code == 200, deleted.text
    assert _ids(firm, "tenant of the lease") == []


def test_no_english_term_rewrites_a_dutch_word_of_another_meaning(db: DbHandle) -> None:
    """Question words are cut to 7 letters, so an English term's lexeme is also that of
    every Dutch word it begins: "subsidiary" added "dochter" to "subsidie" (a review of
    2026-12-06). Such terms are left out of the list."""
    with db.database.engine.connect() as conn:
        for dutch in (
            "subsidie",
            "administratieplicht",
            "limitatieve",
            "interessant",
            "terminale",
            "dissolutieprofiel",
            "directoraat",
            "compensatie",
            "invaliditeit",
            "inventiviteit",
            "objectieve",
            "negligeren",
        ):
            analysis = analyze_configured(
                conn, dutch, wall_groups=["open"], source_acl_ids=["public"]
            )
            assert len(analysis.rank_lexemes) == 1, (dutch, analysis.rank_lexemes)
