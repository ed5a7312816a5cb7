"""The starter synonyms, and results collapsed per document."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok

# Long enough that the generic chunker cuts it into several chunks (the model reads 256
# word pieces at most).
FILLER = (
    "De rechtbank overweegt dat partijen uitvoerig hebben gecorrespondeerd over de levering "
    "van de goederen, de facturen en de betalingstermijnen die in de overeenkomst staan. "
)


def _long_text(middle: str) -> str:
    first = "Eerste deel. " + FILLER * 9
    last = "Derde deel. " + FILLER * 9
    return f"{first}\n\n{middle}\n\n{last}"


def _firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.person("bob@firm.nl")
    firm.client_("C", "Client")
    firm.matter("M", "C", team=["alice@firm.nl"])
    firm.matter("S", "C", team=["alice@firm.nl"])
    return firm


def _hits(firm: Firm, person: str, query: str, **body: Any) -> list[dict[str, Any]]:
    return list(firm.search(person, query, k=10, **body)["results"])


def test_starter_synonyms_are_rows_of_the_editable_table(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    firm.document(
        "bw",
        "Artikel 6:162 van het Burgerlijk Wetboek regelt de onrechtmatige daad.",
        client_id="C",
        matter_id="M",
    )
    firm.document(
        "opz",
        "De werkgever deed de opzegging van de arbeidsovereenkomst per brief.",
        client_id="C",
        matter_id="M",
    )
    firm.document(
        "btw", "Over de levering is omzetbelasting verschuldigd.", client_id="C", matter_id="M"
    )

    def ids(query: str) -> list[str]:
        hits = _hits(firm, "alice@firm.nl", query, mode="sparse")
        return [h["document"]["external_id"] for h in hits]

    assert ids("burgerlijk wetboek")[:1] == ["bw"]
    assert "bw" in ids("BW")
    assert "opz" in ids("ontslag")
    assert "btw" in ids("btw")
    admin = auth("admin@firm.nl", "admin")
    items = ok(client.get("/v1/search/synonyms", headers=admin))["items"]
    starter = {(i["term"], i["synonym"]) for i in items if i["created_by"] == "ewall-starter"}
    assert {
        ("bw", "burgerlijk wetboek"),
        ("rv", "wetboek van burgerlijke rechtsvordering"),
        ("awb", "algemene wet bestuursrecht"),
        ("ww", "werkloosheidswet"),
        ("ontslag", "opzegging"),
    } <= starter
    # data, not code: deleting the row turns the synonym off
    ok(
        client.request(
            "DELETE",
            "/v1/search/synonyms",
            json={"term": "ontslag", "synonym": "opzegging"},
            headers=admin,
        )
    )
    assert "opz" not in ids("ontslag")


def test_collapse_gives_one_hit_per_document_and_lists_its_other_sections(
    client: TestClient, auth: Tokens
) -> None:
    firm = _firm(client, auth)
    dwangsom = "De rechter legt een dwangsom op wegens niet nakomen van het vonnis. " * 3
    firm.document("a", _long_text(dwangsom) + "\n\n" + dwangsom * 2, client_id="C", matter_id="M")
    firm.document("b", "Een dwangsom kan worden gematigd.", client_id="C", matter_id="M")
    firm.document("c", "Ook hier een dwangsom, in een ander dossier.", client_id="C", matter_id="S")
    plain = _hits(firm, "alice@firm.nl", "dwangsom", mode="sparse")
    per_doc = [h["document"]["external_id"] for h in plain]
    assert per_doc.count("a") >= 2  # several chunks of "a" match

    collapsed = _hits(firm, "alice@firm.nl", "dwangsom", mode="sparse", collapse="document")
    docs = [h["document"]["external_id"] for h in collapsed]
    assert sorted(docs) == ["a", "b", "c"]  # one hit per document, all three documents
    a = collapsed[docs.index("a")]
    best_a = next(h for h in plain if h["document"]["external_id"] == "a")
    assert a["chunk_id"] == best_a["chunk_id"]  # the document's best chunk
    others = {o["chunk_id"] for o in a["other_sections"]}
    assert others == {h["chunk_id"] for h in plain if h["document"]["external_id"] == "a"} - {
        a["chunk_id"]
    }
    assert collapsed[docs.index("b")]["other_sections"] == []
    assert all(h.get("other_sections") is None for h in plain)

    # the full top-k holds per document: k=2 gives two documents
    two = firm.search("alice@firm.nl", "dwangsom", mode="hybrid", collapse="document", k=2)
    assert len({h["document"]["external_id"] for h in two["results"]}) == 2 == len(two["results"])


def test_collapse_never_lists_sections_the_person_may_not_see(
    client: TestClient, auth: Tokens
) -> None:
    firm = _firm(client, auth)
    dwangsom = "De rechter legt een dwangsom op wegens niet nakomen van het vonnis. " * 3
    firm.document(
        "open", _long_text(dwangsom) + "\n\n" + dwangsom * 2, client_id="C", matter_id="M"
    )
    firm.document("secret", "Geheime dwangsom in de zaak S.", client_id="C", matter_id="S")
    firm.wall(
        kind="exclusionary",
        title="screen bob",
        reason="lateral hire",
        protects={"matters": ["S"]},
        screened=["bob@firm.nl"],
    )
    hits = _hits(firm, "bob@firm.nl", "dwangsom", collapse="document")
    assert {h["document"]["external_id"] for h in hits} == {"open"}
    assert all(h["matter_id"] != "S" for h in hits)


def test_collapse_rejects_unknown_values(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    r = client.post(
        "/v1/search", json={"query": "x", "collapse": "matter"}, headers=auth("alice@firm.nl")
    )
    assert r.status_code == 422
    assert r.json()["error"]["code"]
    del firm
