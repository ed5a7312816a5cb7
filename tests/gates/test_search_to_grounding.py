"""One path end to end: documents pushed through the API, a real search (which writes the
audit row), then the grounding gate on that retrieval. No hand-written audit rows."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok, one_matter_firm, retag

RETURNED = (
    "De werkgever is aansprakelijk voor de schade die de werknemer in de uitoefening van zijn "
    "werkzaamheden lijdt, tenzij hij aantoont dat hij zijn zorgplicht is nagekomen."
)
ELSEWHERE = (
    "Een octrooi wordt verleend voor uitvindingen die nieuw zijn, op uitvinderswerkzaamheid "
    "berusten en toegepast kunnen worden op het gebied van de nijverheid."
)
UNRELATED = "Het weer was zaterdag zonnig en de markt op het plein was druk bezocht."


def _ground(client: TestClient, auth: Tokens, person: str, rid: str, answer: str) -> dict[str, Any]:
    return dict(
        ok(
            client.post(
                "/v1/gates/grounding",
                json={"retrieval_id": rid, "answer": answer},
                headers=auth(person, "lawyer"),
            )
        )
    )


def test_a_real_search_then_grounding_on_its_audited_results(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    for p in ("alice@firm.nl", "bob@firm.nl"):
        firm.person(p)
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    firm.matter("M-2", "C-1")
    firm.document("memo-1", RETURNED, client_id="C-1", matter_id="M-1")
    firm.document("memo-2", ELSEWHERE, client_id="C-1", matter_id="M-2")

    out = firm.search(
        "alice@firm.nl",
        "aansprakelijkheid werkgever schade werknemer",
        k=5,
        filters={"matter_ids": ["M-1"]},
    )
    returned = {r["chunk_id"] for r in out["results"]}
    assert returned and {r["matter_id"] for r in out["results"]} == {"M-1"}
    rid = out["retrieval_id"]

    supported = _ground(client, auth, "alice@firm.nl", rid, RETURNED)
    assert supported["ok"] is True and supported["retrieval_id"] == rid
    [sentence] = supported["sentences"]
    assert sentence["supported"] is True and sentence["best_chunk_id"] in returned

    # visible to alice, word for word in the corpus, but not returned by this retrieval
    other = _ground(client, auth, "alice@firm.nl", rid, f"{RETURNED} {ELSEWHERE} {UNRELATED}")
    assert other["ok"] is False
    assert [s["supported"] for s in other["sentences"]] == [True, False, False]
    assert all(s["best_chunk_id"] in returned for s in other["sentences"])

    # someone else's retrieval is refused
    refused = client.post(
        "/v1/gates/grounding",
        json={"retrieval_id": rid, "answer": RETURNED},
        headers=auth("bob@firm.nl", "lawyer"),
    )
    assert refused.status_code == 403, refused.text

    # the matter goes behind a wall that screens alice: her own retrieval supports nothing
    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=["alice@firm.nl"])
    retag(client)
    after = _ground(client, auth, "alice@firm.nl", rid, RETURNED)
    assert after["ok"] is False
    assert after["sentences"][0]["supported"] is False


# ECLI:NL:RVS:2014:400, r.o. 4 (../shared/corpus/rechtspraak_csv): a sentence that ends in
# the Awb's acronym and the one after it
AWB_DECISION = (
    "Indien een besluit wordt genomen waarbij wordt vastgesteld dat spoedige sanering van "
    "geval 2 en/of 3 niet noodzakelijk is, dient het college bij de voorbereiding van dat "
    "besluit toepassing te geven aan afdeling 3.4 van de Awb. Indien een wijzigingsbesluit of "
    "een nieuw besluit wordt genomen, dient dit op de wettelijk voorgeschreven wijze bekend te "
    "worden gemaakt en medegedeeld."
)


def test_a_sentence_ending_in_a_statutes_acronym_is_judged_on_its_own(
    client: TestClient, auth: Tokens
) -> None:
    """"... van de Awb. Indien ..." ended no sentence: a copied sentence and an invented one
    after it were judged as one, and the copied one was flagged and trimmed with it."""
    firm = one_matter_firm(client, auth, "alice@firm.nl", {"rvs-2014-400": AWB_DECISION})
    rid = firm.search("alice@firm.nl", "afdeling 3.4 Awb spoedige sanering", k=3)["retrieval_id"]
    copied = AWB_DECISION.split(" Indien een wijzigingsbesluit", maxsplit=1)[0]
    invented = "Het college heeft de aanvraag van Jumbo terecht afgewezen."
    out = _ground(client, auth, "alice@firm.nl", rid, f"{copied} {invented}")
    assert [(s["text"], s["supported"]) for s in out["sentences"]] == [
        (copied, True),
        (invented, False),
    ]
    assert out["trimmed_answer"] == copied
