"""After a matrix change: GET /v1/people/{id}/access gives the walls' decision, and while a
matter waits for its re-tag (searches show it to no one) says so; a search names a moved
matter's client now, not the one its chunks were ingested with."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, retag

SCREENED = "bdevries@firm.nl"
OUTSIDER = "jbakker@firm.nl"
TEXT = "Huurachterstand distributiecentrum Havenkwartier: ontruiming gevorderd."
QUERY = "huurachterstand distributiecentrum Havenkwartier"


def test_the_access_explanation_says_when_a_matter_waits_for_its_re_tag(
    client: TestClient, auth: Tokens
) -> None:
    """Between a wall's issue and the end of its re-tag, searches show the matter to no one;
    the explanation gives the walls' decision and says the matter is hidden meanwhile."""
    firm = Firm(client, auth)
    for person in (SCREENED, OUTSIDER):
        firm.person(person)
    firm.client_("C-1", "Helderglas B.V.")
    firm.matter("M-1", "C-1", team=[OUTSIDER])
    firm.document("d-1", TEXT, client_id="C-1", matter_id="M-1")
    assert firm.access(OUTSIDER, "M-1")["retag_pending"] is False
    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=[SCREENED])
    waiting = firm.access(OUTSIDER, "M-1")
    assert waiting["allowed"] is True and waiting["retag_pending"] is True, waiting
    assert firm.matters_seen(OUTSIDER, QUERY, mode="sparse") == set()
    retag(client)
    assert firm.access(OUTSIDER, "M-1")["retag_pending"] is False
    assert firm.matters_seen(OUTSIDER, QUERY, mode="sparse") == {"M-1"}


def test_a_result_names_its_matters_client_now(client: TestClient, auth: Tokens) -> None:
    """A matter moved to another client: its chunks keep the client they were ingested
    with, the search names the matter's client now."""
    firm = Firm(client, auth)
    firm.person(OUTSIDER)
    firm.client_("C-1", "Helderglas B.V.")
    firm.client_("C-2", "Glastech B.V.")
    firm.matter("M-1", "C-1", team=[OUTSIDER])
    firm.document("d-1", TEXT, client_id="C-1", matter_id="M-1")
    firm.matter("M-1", "C-2", team=[OUTSIDER])
    retag(client)
    (hit,) = firm.search(OUTSIDER, QUERY, mode="sparse")["results"]
    assert (hit["matter_id"], hit["client_id"]) == ("M-1", "C-2"), hit
