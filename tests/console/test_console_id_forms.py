"""The console's forms read a person's or a matter's id as the API does (NFC): an id pasted
decomposed ("jose" + U+0301, as a Mac file name holds it) is the person, not a stranger.

The API's lookups (``IdLookup``) took such ids as the matrix stores them, the console's pages
read them as typed: the access page answered for an unknown person and the audit pages found
no retrieval of a person or matter whose retrievals the API lists (tests/walls/test_id_forms.py
for the API)."""

from __future__ import annotations

import unicodedata

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.console.conftest import console_client, sign_in
from tests.helpers import Firm, retag

PERSON = unicodedata.normalize("NFC", "josé@firm.nl")
MATTER = unicodedata.normalize("NFC", "M-ÉÉN")


def test_console_pages_read_a_decomposed_id_as_the_person_and_the_matter(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    firm.person(PERSON)
    firm.person("cora@firm.nl")
    firm.client_("C-1")
    firm.matter(MATTER, "C-1", team=[PERSON])
    firm.document(
        "d-1",
        "De huurder vordert ontbinding van de huurovereenkomst.",
        client_id="C-1",
        matter_id=MATTER,
    )
    # only the team may see the matter: a stranger's answer differs from the person's
    firm.wall(kind="inclusionary", protects={"matters": [MATTER]}, include_team=True)
    retag(client)
    found = firm.search(PERSON, "huurovereenkomst ontbinding")
    assert {r["matter_id"] for r in found["results"]} == {MATTER}
    retrieval = found["retrieval_id"]
    console = console_client(firm)
    assert sign_in(console, auth, "cora@firm.nl", "compliance").status_code == 303
    person, matter = (unicodedata.normalize("NFD", x) for x in (PERSON, MATTER))
    assert (person, matter) != (PERSON, MATTER)

    listed = console.get("/console/audit", params={"person_id": person})
    assert listed.status_code == 200, listed.text
    assert retrieval in listed.text
    by_matter = console.get("/console/audit", params={"matter_id": matter})
    assert retrieval in by_matter.text
    who_saw = console.get("/console/audit/matter", params={"matter_id": matter}).text
    assert retrieval in who_saw
    access = console.get("/console/access", params={"person_id": person, "matter_id": matter})
    assert access.status_code == 200, access.text
    assert f"<bdi>{PERSON}</bdi> <strong>may</strong> access <bdi>{MATTER}</bdi>" in access.text
