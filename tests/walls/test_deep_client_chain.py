"""A client hierarchy of any depth: a wall around the top client covers the matters at the
bottom (the SQL walked 64 levels and stopped, so a deeper matter kept the open group and was
found by the people the wall screens), and a long chain imported child first is ordered, not
a 500 (the ordering recursed once per level)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import ADMIN, Firm, ok, retag

DEPTH = 70  # past the old cap of 64
SCREENED = "bdevries@firm.nl"
OUTSIDER = "jbakker@firm.nl"
INSIDER = "mvanleeuwen@firm.nl"
TEXT = "Huurachterstand distributiecentrum Havenkwartier: ontruiming gevorderd."
QUERY = "huurachterstand distributiecentrum Havenkwartier"


def _chain(depth: int) -> list[dict[str, str | None]]:
    """C0 <- C1 <- ... <- C<depth>, listed deepest first."""
    return [
        {"client_id": f"C{i}", "name": f"Zeeburg Dochter {i} B.V.",
         "parent_id": f"C{i - 1}" if i else None}
        for i in reversed(range(depth + 1))
    ]


def test_a_wall_around_the_top_client_covers_matters_at_any_depth(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    people = [{"person_id": p, "name": p} for p in (SCREENED, OUTSIDER, INSIDER)]
    bottom = f"C{DEPTH}"
    matters = [
        {"matter_id": "M-DEEP", "client_id": bottom, "title": "deep", "team": [INSIDER]},
        {"matter_id": "M-TOP", "client_id": "C0", "title": "top", "team": [INSIDER]},
    ]
    body = {"people": people, "clients": _chain(DEPTH), "matters": matters}
    ok(client.post("/v1/matrix/import", json=body, headers=auth(*ADMIN)))
    firm.document("deep-1", TEXT, client_id=bottom, matter_id="M-DEEP")
    for person in (SCREENED, OUTSIDER, INSIDER):
        assert firm.matters_seen(person, QUERY, mode="sparse") == {"M-DEEP"}

    screen = firm.wall(kind="exclusionary", protects={"clients": ["C0"]}, screened=[SCREENED])
    retag(client)
    assert firm.matters_seen(SCREENED, QUERY, mode="sparse") == set()
    assert firm.matters_seen(OUTSIDER, QUERY, mode="sparse") == {"M-DEEP"}
    detail = ok(client.get(f"/v1/walls/{screen}", headers=firm.h))
    assert "M-DEEP" in str(detail), detail

    # an inclusionary wall with its team: the deep matter's team is inside, others are not
    firm.wall(kind="inclusionary", protects={"clients": ["C0"]}, allowed=[], include_team=True)
    retag(client)
    assert firm.matters_seen(INSIDER, QUERY, mode="sparse") == {"M-DEEP"}
    assert firm.matters_seen(OUTSIDER, QUERY, mode="sparse") == set()


def test_a_long_chain_imported_child_first_is_ordered(client: TestClient, auth: Tokens) -> None:
    depth = 1500
    body = {"people": [], "clients": _chain(depth), "matters": []}
    ok(client.post("/v1/matrix/import", json=body, headers=auth(*ADMIN)))
    # the same chain closed into a cycle is refused, not a 500
    cycle = _chain(depth)
    cycle[-1] = {**cycle[-1], "parent_id": f"C{depth}"}
    refused = client.post("/v1/matrix/import", json={"clients": cycle}, headers=auth(*ADMIN))
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "client_cycle"

