"""One person, one matter, however its id's accents are encoded.

"josé" is written either as one code point (NFC, U+00E9) or as "e" and a combining acute
accent (NFD, what a file name or an export made on a Mac often holds). Both print alike and
every reader takes them for one id (canonical equivalence). The matrix kept them apart: an
import in NFD made a second person beside the one the conflicts partner screened, and a
token naming the person decomposed was that second, unscreened person, who read the walled
matter (a probe of 2026-12-07). Ids of the matrix and the token's subject are read in NFC,
as source principals already were (app/types.py principal_key).
"""

from __future__ import annotations

import unicodedata

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok, retag

COMPOSED = unicodedata.normalize("NFC", "josé@firm.nl")
DECOMPOSED = unicodedata.normalize("NFD", COMPOSED)
MATTER = unicodedata.normalize("NFC", "M-ÉÉN")


def test_a_decomposed_id_is_the_same_person_and_the_same_matter(
    client: TestClient, auth: Tokens
) -> None:
    assert COMPOSED != DECOMPOSED
    firm = Firm(client, auth)
    firm.person(COMPOSED)
    firm.person("other@firm.nl")
    firm.client_("C-1")
    firm.matter(MATTER, "C-1")
    firm.document(
        "d-1",
        "De huurder vordert ontbinding van de huurovereenkomst.",
        client_id="C-1",
        matter_id=MATTER,
    )
    firm.wall(kind="exclusionary", protects={"matters": [MATTER]}, screened=[COMPOSED])
    # an import (or a PUT) naming the person decomposed updates that person, not a new one
    answer = ok(
        client.put(
            f"/v1/people/{DECOMPOSED}",
            json={"name": "José", "active": True, "aliases": []},
            headers=firm.h,
        )
    )
    assert answer["person_id"] == COMPOSED
    assert ok(client.get(f"/v1/people/{DECOMPOSED}", headers=firm.h))["name"] == "José"
    retag(client)
    # the screened person is screened whichever way the token spells the id
    for spelled in (COMPOSED, DECOMPOSED):
        found = firm.search(spelled, "huurovereenkomst ontbinding")
        assert found["results"] == [], spelled
        assert firm.access(spelled, MATTER)["allowed"] is False, spelled
    # the matter is one matter too: its decomposed id names it
    decomposed_matter = unicodedata.normalize("NFD", MATTER)
    assert ok(client.get(f"/v1/matters/{decomposed_matter}", headers=firm.h))[
        "matter_id"
    ] == MATTER
    assert firm.access("other@firm.nl", decomposed_matter)["allowed"] is True
    assert firm.access(DECOMPOSED, decomposed_matter)["allowed"] is False
    # the audit row names the person as the matrix does
    compliance = auth("c@firm.nl", "compliance")
    rows = ok(client.get("/v1/audit/retrievals", headers=compliance))["items"]
    assert {r["person_id"] for r in rows} == {COMPOSED}


def test_a_document_naming_its_matter_decomposed_is_filed_in_that_matter(
    client: TestClient, auth: Tokens
) -> None:
    """The matrix reads its ids in NFC; a document whose source wrote its client and matter
    decomposed is filed in that matter (walls and all), not quarantined as unknown."""
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    client_id = unicodedata.normalize("NFC", "C-SÃO")
    firm.client_(client_id)
    firm.matter(MATTER, client_id, team=["alice@firm.nl"])
    pushed = firm.document(
        "d-nfd",
        "De huurder vordert ontbinding van de huurovereenkomst.",
        client_id=unicodedata.normalize("NFD", client_id),
        matter_id=unicodedata.normalize("NFD", MATTER),
    )
    assert pushed["quarantined"] is False, pushed
    retag(client)
    assert firm.matters_seen("alice@firm.nl", "huurovereenkomst ontbinding") == {MATTER}


def test_a_search_filter_naming_the_matter_decomposed_finds_its_documents(
    client: TestClient, auth: Tokens
) -> None:
    """The documents are filed under the matter in NFC: a matter_ids filter spelt decomposed
    narrowed the search to nothing, though the caller may see the matter."""
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C-1")
    firm.matter(MATTER, "C-1", team=["alice@firm.nl"])
    firm.document(
        "d-1",
        "De huurder vordert ontbinding van de huurovereenkomst.",
        client_id="C-1",
        matter_id=MATTER,
    )
    retag(client)
    decomposed = unicodedata.normalize("NFD", MATTER)
    for spelled in (MATTER, decomposed):
        found = firm.matters_seen(
            "alice@firm.nl", "huurovereenkomst ontbinding", filters={"matter_ids": [spelled]}
        )
        assert found == {MATTER}, spelled


def test_an_id_that_grows_in_nfc_is_held_to_the_limit(client: TestClient, auth: Tokens) -> None:
    """A few characters compose into two code points (U+2ADC is U+2ADD U+0338 in NFC): an id
    of 200 of them passed the limit as sent and was stored at 400, an id no path could name
    again. The limit holds for the id as stored."""
    grown = "\u2adc" * 200
    assert len(unicodedata.normalize("NFC", grown)) == 400
    admin = auth("admin@firm.nl", "admin")
    body = {"name": "X", "active": True, "aliases": []}
    r = client.put(f"/v1/people/{grown}", json=body, headers=admin)
    assert r.status_code == 422, r.text
    assert "NFC" in r.text
    ok(client.put(f"/v1/people/{grown[:100]}", json=body, headers=admin))  # 200 stored
