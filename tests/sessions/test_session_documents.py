"""The session gate judges what a session read as the firm holds it now (invariant 11): a
document moved into a matter its reader may not see, or whose source ACL (or the reader's
source groups) no longer admits them, taints the session, without naming the hidden matter
to the lawyer."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok

HIRE = "bdevries@firm.nl"
PEER = "ldekker@firm.nl"
COMPLIANCE = ("compliance@firm.nl", "compliance")
TEXT = "Pleitnota inbreuk retard-tablet medivastine: de vrijgiftecurve valt binnen conclusie 1."
QUERY = "inbreuk retard-tablet medivastine vrijgiftecurve"


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    firm.person(HIRE, aliases=["imanage:user:BDV"])
    firm.person(PEER, aliases=["imanage:user:LDE"])
    firm.person(COMPLIANCE[0])
    firm.client_("C-OPEN", "Helderglas B.V.")
    firm.client_("C-MED", "Medivers B.V.")
    firm.matter("M-OPEN", "C-OPEN", team=[HIRE, PEER])
    firm.matter("M-MED", "C-MED", team=[PEER])
    firm.wall(kind="exclusionary", protects={"matters": ["M-MED"]}, screened=[HIRE])
    return firm


def _gate(client: TestClient, auth: Tokens, person: str, session_id: str) -> Any:
    role = "compliance" if person == COMPLIANCE[0] else "lawyer"
    return ok(
        client.post(
            "/v1/gates/session", json={"session_id": session_id}, headers=auth(person, role)
        )
    )


def _read(firm: Firm, person: str, session_id: str) -> None:
    found = firm.documents_found(person, QUERY, session_id=session_id, mode="sparse")
    assert found, (person, session_id)


def test_a_document_moved_behind_a_wall_taints_the_session(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    firm.document("pleitnota", TEXT, client_id="C-OPEN", matter_id="M-OPEN")
    _read(firm, HIRE, "s-hire")
    _read(firm, PEER, "s-peer")
    assert _gate(client, auth, HIRE, "s-hire")["status"] == "ok"

    # the document is refiled under the matter the hire is screened from
    firm.document("pleitnota", TEXT, client_id="C-MED", matter_id="M-MED")
    answer = _gate(client, auth, HIRE, "s-hire")
    assert answer["status"] == "tainted", answer
    (reason,) = answer["reasons"]
    assert reason["kind"] == "wall" and reason["matters"] == [] and len(reason["walls"]) == 1
    assert "M-MED" not in str(answer) and "C-MED" not in str(answer)
    # compliance is told which matter it is now in
    full = _gate(client, auth, COMPLIANCE[0], "s-hire")
    assert [r["matters"] for r in full["reasons"]] == [["M-MED"]]
    # the peer may see the matter it moved to: their session stays ok
    assert _gate(client, auth, PEER, "s-peer")["status"] == "ok"
    # the gate event keeps the whole finding
    events = ok(
        client.get(
            "/v1/audit/gate-events",
            params={"gate": "session", "session_id": "s-hire"},
            headers=auth(*COMPLIANCE),
        )
    )["items"]
    assert events[0]["outcome"]["reasons"][0]["matters"] == ["M-MED"]


def test_a_document_quarantined_since_taints_without_naming_its_new_matter(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """A fuzz: a document refiled under a matter the matrix does not know yet is quarantined
    (visible to no one), and the sessions that had read it stayed ok. That matter may be
    one a wall will cover once it is entered: the session is tainted, the matter unnamed."""
    firm.document("pleitnota", TEXT, client_id="C-OPEN", matter_id="M-OPEN")
    _read(firm, PEER, "s-peer")
    pushed = ok(client.post("/v1/documents", headers=firm.h, json={
        "source": "api", "external_id": "pleitnota", "client_id": "C-NEW",
        "matter_id": "NEW-SECRET", "title": "pleitnota", "text": TEXT}))
    assert pushed["quarantined"] is True, pushed
    answer = _gate(client, auth, PEER, "s-peer")
    assert answer["status"] == "tainted", answer
    assert [(r["kind"], r["cause"], r["documents"]) for r in answer["reasons"]] == [
        ("wall", "quarantined", ["api:pleitnota"])]
    assert "NEW-SECRET" not in str(answer) and "C-NEW" not in str(answer)


@pytest.mark.parametrize("change", ["document_acl", "source_group"])
def test_a_document_whose_source_acl_no_longer_admits_its_reader_taints(
    firm: Firm, client: TestClient, auth: Tokens, change: str
) -> None:
    admin = firm.h
    if change == "document_acl":  # the document's own rules will leave the hire out
        allowed = ["imanage:user:BDV", "imanage:user:LDE"]
        left_out, stays = HIRE, PEER
    else:  # the peer reads through a source group they will leave
        allowed = ["imanage:user:BDV", "imanage:group:LIT"]
        left_out, stays = PEER, HIRE
        members = {"members": ["imanage:user:LDE"]}
        ok(client.put("/v1/groups/imanage/LIT", json=members, headers=admin))
    acl = {"default": "private", "allow": allowed}
    firm.document("memo", TEXT, client_id="C-OPEN", matter_id="M-OPEN", acl=acl)
    _read(firm, HIRE, "s-hire")
    _read(firm, PEER, "s-peer")
    assert _gate(client, auth, HIRE, "s-hire")["status"] == "ok"
    assert _gate(client, auth, PEER, "s-peer")["status"] == "ok"

    if change == "document_acl":
        narrowed = {"default": "private", "allow": ["imanage:user:LDE"]}
        firm.document("memo", TEXT, client_id="C-OPEN", matter_id="M-OPEN", acl=narrowed)
    else:
        ok(client.put("/v1/groups/imanage/LIT", json={"members": []}, headers=admin))
    answer = _gate(client, auth, left_out, _session(left_out))
    assert answer["status"] == "tainted", answer
    assert answer["reasons"] == [
        {
            "kind": "wall",
            "person_id": left_out,
            "matters": ["M-OPEN"],
            "walls": [],
            "party": None,
            "cause": "source_acl",
            "documents": ["api:memo"],
        }
    ]
    assert _gate(client, auth, stays, _session(stays))["status"] == "ok"


def test_a_document_refiled_with_an_acl_that_leaves_its_reader_out_names_where_it_was_read(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """A probe of 2026-12-07: a document read in one matter, refiled since under another
    matter the lawyer may see, with a source ACL that leaves them out. The reason named the
    new matter beside the document, so the lawyer learnt where a document hidden from them
    now lives; it names the matter they read it in, as the deleted reason does."""
    firm.matter("M-OPEN-2", "C-OPEN", team=[HIRE, PEER])
    firm.document("memo", TEXT, client_id="C-OPEN", matter_id="M-OPEN")
    _read(firm, HIRE, "s-hire")
    assert _gate(client, auth, HIRE, "s-hire")["status"] == "ok"

    narrowed = {"default": "private", "allow": ["imanage:user:LDE"]}
    firm.document("memo", TEXT, client_id="C-OPEN", matter_id="M-OPEN-2", acl=narrowed)
    answer = _gate(client, auth, HIRE, "s-hire")
    assert answer["status"] == "tainted", answer
    assert "M-OPEN-2" not in str(answer), answer
    assert [(r["cause"], r["matters"], r["documents"]) for r in answer["reasons"]] == [
        ("source_acl", ["M-OPEN"], ["api:memo"])]
    # the peer, whom the ACL admits, may read it where it is now
    assert firm.documents_found(PEER, QUERY, session_id="s-peer", mode="sparse")
    assert _gate(client, auth, PEER, "s-peer")["status"] == "ok"


def _session(person: str) -> str:
    return "s-hire" if person == HIRE else "s-peer"


def test_documents_of_a_matter_hidden_now_are_not_named_to_the_lawyer(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """A wall over the matter and a tightened ACL (wall tools often do both): the lawyer is
    told the session is tainted, not which documents (they read them in that matter);
    compliance is told both. An external id may hold colons."""
    firm.client_("C-TULP", "Noordzee Energie B.V.")
    firm.matter("M-TULP", "C-TULP", team=[HIRE, PEER])
    acl = {"default": "private", "allow": ["imanage:user:BDV", "imanage:user:LDE"]}
    for external_id in ("LIB!4711:1", "LIB!4712:1"):
        firm.document(external_id, TEXT, client_id="C-TULP", matter_id="M-TULP", acl=acl)
    found = firm.documents_found(HIRE, QUERY, session_id="s-hire", mode="sparse", k=10)
    assert len(found) == 2, found
    firm.wall(kind="exclusionary", protects={"matters": ["M-TULP"]}, screened=[HIRE])
    narrowed = {"default": "private", "allow": ["imanage:user:LDE"]}
    for external_id in ("LIB!4711:1", "LIB!4712:1"):
        firm.document(external_id, TEXT, client_id="C-TULP", matter_id="M-TULP", acl=narrowed)

    answer = _gate(client, auth, HIRE, "s-hire")
    assert answer["status"] == "tainted"
    assert "LIB!47" not in str(answer) and "M-TULP" not in str(answer), answer
    assert {r["cause"] for r in answer["reasons"]} == {None, "source_acl"}
    full = _gate(client, auth, COMPLIANCE[0], "s-hire")
    (acl_reason,) = [r for r in full["reasons"] if r["cause"] == "source_acl"]
    assert acl_reason["matters"] == ["M-TULP"]
    assert acl_reason["documents"] == ["api:LIB!4711:1", "api:LIB!4712:1"]


def test_a_quarantined_document_of_a_matter_hidden_now_is_not_named_to_the_lawyer(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """A probe of 2026-12-07: read in a matter a wall now screens the lawyer from, then
    refiled under a matter the matrix does not know (quarantined). The quarantined reason
    named its documents beside no matter, so the lawyer was told the id of a document of the
    hidden matter (an id that often names the matter); compliance is told where it was read."""
    firm.client_("C-TULP", "Noordzee Energie B.V.")
    firm.matter("M-TULP", "C-TULP", team=[HIRE, PEER])
    firm.document("LIB!4711:1", TEXT, client_id="C-TULP", matter_id="M-TULP")
    _read(firm, HIRE, "s-hire")
    firm.wall(kind="exclusionary", protects={"matters": ["M-TULP"]}, screened=[HIRE])
    pushed = firm.document("LIB!4711:1", TEXT, client_id="C-TULP", matter_id="NEW-SECRET")
    assert pushed["quarantined"] is True, pushed

    answer = _gate(client, auth, HIRE, "s-hire")
    assert answer["status"] == "tainted"
    assert "LIB!47" not in str(answer) and "M-TULP" not in str(answer), answer
    assert "NEW-SECRET" not in str(answer), answer
    assert {r["cause"] for r in answer["reasons"]} == {None, "quarantined"}
    full = _gate(client, auth, COMPLIANCE[0], "s-hire")
    (held,) = [r for r in full["reasons"] if r["cause"] == "quarantined"]
    assert (held["matters"], held["documents"]) == (["M-TULP"], ["api:LIB!4711:1"])
    assert "NEW-SECRET" not in str(full), full


def test_a_document_deleted_since_taints_the_session(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """Invariant 11: a session is tainted when anything it retrieved is no longer visible to
    its person. A document deleted since (at the source, or moved out of the connector's
    reach, perhaps behind a wall the firm has not entered) is visible to no one, and the
    session still holds its text. A session that never read it stays ok."""
    firm.document("pleitnota", TEXT, client_id="C-OPEN", matter_id="M-OPEN")
    firm.document("other", "Een ander stuk over huurrecht.", client_id="C-OPEN",
                  matter_id="M-OPEN")
    _read(firm, HIRE, "s-hire")
    assert firm.documents_found(PEER, "huurrecht", session_id="s-peer", mode="sparse")
    assert _gate(client, auth, HIRE, "s-hire")["status"] == "ok"

    deleted = client.delete("/v1/documents/api/pleitnota", headers=firm.h)
    assert deleted.status_code in (200, 204), deleted.text
    answer = _gate(client, auth, HIRE, "s-hire")
    assert answer["status"] == "tainted", answer
    assert [(r["kind"], r["cause"], r["matters"], r["documents"]) for r in answer["reasons"]] == [
        ("wall", "deleted", ["M-OPEN"], ["api:pleitnota"])]
    assert _gate(client, auth, PEER, "s-peer")["status"] == "ok"
    full = _gate(client, auth, COMPLIANCE[0], "s-hire")
    assert [r["cause"] for r in full["reasons"]] == ["deleted"]


def test_a_deleted_document_of_a_matter_hidden_now_is_not_named_to_the_lawyer(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """Read in a matter a wall now screens the lawyer from, then deleted: the lawyer is told
    the session is tainted, neither the matter nor the document (they read it there)."""
    firm.client_("C-TULP", "Noordzee Energie B.V.")
    firm.matter("M-TULP", "C-TULP", team=[HIRE, PEER])
    firm.document("LIB!4711:1", TEXT, client_id="C-TULP", matter_id="M-TULP")
    _read(firm, HIRE, "s-hire")
    firm.wall(kind="exclusionary", protects={"matters": ["M-TULP"]}, screened=[HIRE])
    deleted = client.delete("/v1/documents/api/LIB!4711:1", headers=firm.h)
    assert deleted.status_code in (200, 204), deleted.text

    answer = _gate(client, auth, HIRE, "s-hire")
    assert answer["status"] == "tainted"
    assert "LIB!47" not in str(answer) and "M-TULP" not in str(answer), answer
    assert {r["cause"] for r in answer["reasons"]} == {None, "deleted"}
    full = _gate(client, auth, COMPLIANCE[0], "s-hire")
    (gone,) = [r for r in full["reasons"] if r["cause"] == "deleted"]
    assert (gone["matters"], gone["documents"]) == (["M-TULP"], ["api:LIB!4711:1"])
