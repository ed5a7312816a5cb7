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
    """ "... van de Awb. Indien ..." ended no sentence: a copied sentence and an invented one
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


# ECLI:NL:RBOVE:2016:1292, r.o. 4.4-4.7 (../shared/corpus/rechtspraak_csv): the window of a
# decision names both parties and two judges
TOLPLAS = (
    "Ten aanzien van de vordering tot het aangesloten houden van het gas en de elektriciteit "
    "overweegt de voorzieningenrechter vooralsnog dat De Tolplas geen bevoegdheid toekomt om "
    "de nutsvoorzieningen van [eiser] opnieuw af te sluiten, zolang [eiser] de toekomstige in "
    "rekening gebrachte bedragen voor gas, water en licht aan De Tolplas voldoet en er nog geen "
    "rechterlijk oordeel is verkregen van de kantonrechter in de reeds aanhangige procedure. "
    "De voorzieningenrechter zal de vordering tot het aangesloten houden van gas en "
    "elektriciteit dan ook toewijzen onder de hiervoor omschreven voorwaarde. De kosten aan de "
    "zijde van [eiser] worden begroot op € 895,-- (€ 79,-- aan griffierecht en € 816,-- aan "
    "salaris van de advocaat)."
)


def test_a_copy_naming_another_judge_or_party_is_not_supported(
    client: TestClient, auth: Tokens
) -> None:
    """A check of 2026-12-07: a copied sentence with "de kantonrechter" for "de
    voorzieningenrechter", or "De Tolplas" for "[eiser]", was supported (containment lets one
    word in five be anything, and the window names both) and shipped in trimmed_answer."""
    firm = one_matter_firm(client, auth, "alice@firm.nl", {"rbove-2016-1292": TOLPLAS})
    rid = firm.search("alice@firm.nl", "heraansluiting gas elektriciteit dwangsom", k=3)[
        "retrieval_id"
    ]
    judge_copy = TOLPLAS.split("procedure. ")[1].split(" De kosten", maxsplit=1)[0]
    costs = TOLPLAS.split("voorwaarde. ")[1]
    answer = " ".join(
        [
            judge_copy,
            judge_copy.replace("De voorzieningenrechter", "De kantonrechter"),
            costs,
            costs.replace("[eiser]", "De Tolplas"),
        ]
    )
    out = _ground(client, auth, "alice@firm.nl", rid, answer)
    assert [s["supported"] for s in out["sentences"]] == [True, False, True, False]
    assert out["trimmed_answer"] == f"{judge_copy} {costs}"
