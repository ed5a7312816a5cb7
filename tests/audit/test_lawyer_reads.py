"""What a lawyer reads of their own retrievals after a wall screens them (invariant 11).

A lawyer searches a matter; a wall then screens them from it. Every answer the lawyer can
still get about that retrieval (the single read, the session listing and its filters, the
session gate) must not name the matter or its chunks, while compliance reads it all. The
same rule serves every route (app/walls/visibility.py)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import ADMIN, Firm, ok

LAWYER = "ldekker@firm.nl"
COMPLIANCE = "compliance@firm.nl"
SESSION = "agent-run-1"
QUERY = "inbreuk retard-tablet medivastine vrijgiftecurve"


@pytest.fixture
def screened(client: TestClient, auth: Tokens) -> dict[str, Any]:
    """The lawyer's search of M-MED (and M-OTHER) in a session, then a wall that screens
    both the lawyer and the compliance officer from M-MED."""
    firm = Firm(client, auth)
    for person in (LAWYER, COMPLIANCE, ADMIN[0]):
        firm.person(person)
    firm.client_("C-MED", "Medivers B.V.")
    firm.client_("C-OTHER", "Helderglas B.V.")
    firm.matter("M-MED", "C-MED", team=[LAWYER])
    firm.matter("M-OTHER", "C-OTHER", team=[LAWYER])
    firm.document(
        "doc-med",
        "Pleitnota inbreuk retard-tablet medivastine: de vrijgiftecurve valt binnen conclusie 1.",
        client_id="C-MED",
        matter_id="M-MED",
    )
    firm.document(
        "doc-other",
        "Memo inbreuk retard-tablet medivastine: analyse van de vrijgiftecurve elders.",
        client_id="C-OTHER",
        matter_id="M-OTHER",
    )
    found = firm.search(LAWYER, QUERY, session_id=SESSION)
    by_matter = {r["matter_id"]: r["chunk_id"] for r in found["results"]}
    assert set(by_matter) == {"M-MED", "M-OTHER"}
    firm.wall(
        kind="exclusionary",
        title="screen",
        reason="acted for the other side before",
        protects={"matters": ["M-MED"]},
        screened=[LAWYER, COMPLIANCE],
    )
    return {
        "retrieval_id": found["retrieval_id"],
        "med_chunk": by_matter["M-MED"],
        "other_chunk": by_matter["M-OTHER"],
        "lawyer": auth(LAWYER, "lawyer"),
        "compliance": auth(COMPLIANCE, "compliance"),
    }


def _listing(client: TestClient, headers: dict[str, str], **params: str) -> list[Any]:
    response = client.get(
        "/v1/audit/retrievals", params={"session_id": SESSION, **params}, headers=headers
    )
    return list(ok(response)["items"])


def test_the_single_read_withholds_a_matter_walled_off_since(
    client: TestClient, screened: dict[str, Any]
) -> None:
    path = f"/v1/audit/retrievals/{screened['retrieval_id']}"
    mine = ok(client.get(path, headers=screened["lawyer"]))
    assert "M-MED" not in str(mine)
    assert screened["med_chunk"] not in str(mine)
    # the rank stays (something was returned), the visible matter stays named
    assert len(mine["results"]) == 2
    assert sum(bool(r.get("withheld")) for r in mine["results"]) == 1
    assert screened["other_chunk"] in {r["chunk_id"] for r in mine["results"]}
    # the single read and the listing of the same retrieval say the same
    (listed,) = _listing(client, screened["lawyer"])
    assert listed == mine

    full = ok(client.get(path, headers=screened["compliance"]))
    assert {r["matter_id"] for r in full["results"]} == {"M-MED", "M-OTHER"}
    assert not any(r.get("withheld") for r in full["results"])


def test_filters_do_not_confirm_a_matter_the_lawyer_may_not_see(
    client: TestClient, screened: dict[str, Any]
) -> None:
    lawyer = screened["lawyer"]
    # a hidden matter, a chunk of it and an id nobody uses all answer the same: nothing
    assert _listing(client, lawyer, matter_id="M-MED") == []
    assert _listing(client, lawyer, chunk_id=screened["med_chunk"]) == []
    assert _listing(client, lawyer, matter_id="M-NOSUCH") == []
    assert _listing(client, lawyer, chunk_id="api:nosuch:0123456789abcdef") == []
    # what the lawyer may see still filters
    assert len(_listing(client, lawyer, matter_id="M-OTHER")) == 1
    assert len(_listing(client, lawyer, chunk_id=screened["other_chunk"])) == 1
    # compliance, though screened from M-MED itself, audits it whole
    compliance = screened["compliance"]
    (item,) = _listing(client, compliance, matter_id="M-MED")
    assert "M-MED" in {r["matter_id"] for r in item["results"]}
    assert len(_listing(client, compliance, chunk_id=screened["med_chunk"])) == 1


def test_the_session_gate_names_the_matter_to_compliance_only(
    client: TestClient, screened: dict[str, Any]
) -> None:
    def gate(headers: dict[str, str]) -> Any:
        return ok(client.post("/v1/gates/session", json={"session_id": SESSION}, headers=headers))

    mine = gate(screened["lawyer"])
    assert mine["status"] == "tainted"
    assert "M-MED" not in str(mine)
    full = gate(screened["compliance"])
    assert full["status"] == "tainted"
    assert [r["matters"] for r in full["reasons"]] == [["M-MED"]]
