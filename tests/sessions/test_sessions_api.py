"""Sessions through the API: the lateral-hire story, adverse reads, bound sessions, the
session listing, and the audit chain over session fields (invariant 11)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from connectors.base import SourceDocument
from tests.conftest import Tokens
from tests.helpers import ADMIN, Firm, ok, retag, retrieved

MED_TEXT = (
    "Pleitnota inbreuk retard-tablet medivastine: de vrijgiftecurve valt binnen conclusie 1 "
    "van het octrooi van Medivers."
)
OTHER_TEXT = (
    "Memo inbreuk retard-tablet medivastine: analyse van de vrijgiftecurve voor een andere "
    "cliënt in een ander dossier."
)
LAW_TEXT = (
    "Artikel 53 Rijksoctrooiwet: een octrooi geeft de houder het uitsluitend recht om het "
    "geoctrooieerde voortbrengsel te vervaardigen, zoals een retard-tablet met medivastine."
)
QUERY = "inbreuk retard-tablet medivastine vrijgiftecurve"

LAWYER = "ldekker@firm.nl"
HIRE = "bdevries@firm.nl"
COMPLIANCE = ("compliance@firm.nl", "compliance")


def _public_document(client: TestClient, external_id: str, text: str) -> None:
    """Legislation as the case-law and statute loaders store it: no client, no matter."""
    from app.ingest.pipeline import IngestPipeline

    resources = client.app.state.resources  # type: ignore[attr-defined]
    pipeline = IngestPipeline(resources.database, resources.require_embedder(), resources.settings)
    run = pipeline.start_run("test", {}, "test")
    pipeline.ingest(
        run,
        SourceDocument(source="wetten", external_id=external_id, title=external_id, text=text),
        public=True,
    )
    pipeline.finish_run(run)


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    # the conflicts partner is in the matrix: a stranger to it sees no walled matter
    for person in (LAWYER, HIRE, "compliance@firm.nl", ADMIN[0]):
        firm.person(person)
    firm.client_("C-MED", "Medivers B.V.")
    firm.client_("C-GEN", "Genova Generics N.V.")
    firm.client_("C-OTHER", "Helderglas B.V.")
    firm.matter(
        "M-MED",
        "C-MED",
        team=[LAWYER],
        parties=[{"name": "Genova Generics N.V.", "role": "adverse"}],
    )
    firm.matter("M-OTHER", "C-OTHER", team=[LAWYER])
    firm.document("doc-med", MED_TEXT, client_id="C-MED", matter_id="M-MED")
    firm.document("doc-other", OTHER_TEXT, client_id="C-OTHER", matter_id="M-OTHER")
    _public_document(client, "BWBR0005252-53", LAW_TEXT)
    return firm


def _backdated_retrieval(
    client: TestClient, person_id: str, session_id: str, matter_id: str, days_ago: int
) -> None:
    retrieved(
        client,
        person_id,
        matter_id,
        session_id,
        hours_ago=24 * days_ago,
        query=QUERY,
        chunk_id="api:doc-med:0123456789abcdef",
    )


def _gate(client: TestClient, headers: dict[str, str], session_id: str) -> Any:
    return client.post("/v1/gates/session", json={"session_id": session_id}, headers=headers)


def test_lateral_hire_story_end_to_end(firm: Firm, client: TestClient, auth: Tokens) -> None:
    hire = auth(HIRE, "lawyer")
    compliance = auth(*COMPLIANCE)
    # 1. the lateral hire searches matter M in an agent session
    first = firm.search(HIRE, QUERY, session_id="agent-run-7")
    assert "M-MED" in {r["matter_id"] for r in first["results"]}
    assert first["session_id"] == "agent-run-7"
    assert ok(_gate(client, hire, "agent-run-7"))["status"] == "ok"

    # 2. the preview shows what the wall would do, and writes nothing
    wall_body = {
        "kind": "exclusionary",
        "title": "Lateral hire screen",
        "reason": "acted for Genova at his previous firm",
        "protects": {"matters": ["M-MED"]},
        "screened": [HIRE],
    }
    version_before = ok(client.get("/v1/walls", headers=firm.h))
    preview = ok(client.post("/v1/walls/preview", json=wall_body, headers=firm.h))
    assert preview["loses"] == [{"person_id": HIRE, "matters": ["M-MED"]}]
    assert preview["gains"] == []
    assert preview["chunks_to_retag"] >= 1
    assert [i["person_id"] for i in preview["exposure"]["items"]] == [HIRE]
    assert ok(client.get("/v1/walls", headers=firm.h)) == version_before
    assert firm.matters_seen(HIRE, QUERY) >= {"M-MED"}

    # 3. the wall goes up; its policy event carries the exposure summary
    wall_id = firm.wall(**wall_body)
    events = ok(
        client.get("/v1/audit/policy-events", params={"object_id": wall_id}, headers=compliance)
    )["items"]
    summary = events[0]["details"]["exposure"]
    assert summary["people"] == 1 and summary["sessions"] == 2
    assert {i["session_id"] for i in summary["items"]} == {"agent-run-7", None}

    # 4. the exposure report lists the hire's retrieval
    report = ok(client.get(f"/v1/walls/{wall_id}/exposure", headers=firm.h))
    # (the search outside any session after the preview is listed on its own)
    by_session = {i["session_id"]: i for i in report["items"]}
    assert set(by_session) == {"agent-run-7", None}
    item = by_session["agent-run-7"]
    assert item["person_id"] == HIRE and item["session_id"] == "agent-run-7"
    assert item["chunks"] >= 1 and item["documents"] == ["api:doc-med"]
    assert item["first_at"] <= item["last_at"]
    assert report["partial"] is False
    # a retrieval from 40 days ago counts within the default lookback, not within 30 days
    _backdated_retrieval(client, HIRE, "old-run", "M-MED", days_ago=40)
    default = ok(client.get(f"/v1/walls/{wall_id}/exposure", headers=compliance))
    assert {i["session_id"] for i in default["items"]} == {"old-run", "agent-run-7", None}
    recent = ok(
        client.get(
            f"/v1/walls/{wall_id}/exposure", params={"lookback_days": 30}, headers=compliance
        )
    )
    assert recent["items"] == report["items"]
    bad = client.get(
        f"/v1/walls/{wall_id}/exposure", params={"lookback_days": 0}, headers=compliance
    )
    assert bad.status_code == 422
    assert client.get("/v1/walls/W-404/exposure", headers=compliance).status_code == 404
    assert client.get(f"/v1/walls/{wall_id}/exposure", headers=hire).status_code == 403

    # 5. the session gate now says tainted, without naming M to the hire
    answer = ok(_gate(client, hire, "agent-run-7"))
    assert answer["status"] == "tainted"
    (reason,) = answer["reasons"]
    assert reason["kind"] == "wall" and reason["walls"] == [wall_id]
    assert reason["matters"] == []
    assert "M-MED" not in str(answer)
    # compliance may see M and is told which matter it is
    full = ok(_gate(client, compliance, "agent-run-7"))
    assert full["status"] == "tainted" and full["reasons"][0]["matters"] == ["M-MED"]

    # 6. a new search no longer returns M (also before the re-tag, and after it)
    assert "M-MED" not in firm.matters_seen(HIRE, QUERY, session_id="agent-run-7")
    retag(client)
    assert "M-MED" not in firm.matters_seen(HIRE, QUERY, session_id="agent-run-8")
    assert ok(_gate(client, hire, "agent-run-8"))["status"] == "ok"

    # the gate calls are in the gates chain, and every chain still verifies
    verify = ok(client.get("/v1/audit/verify", headers=compliance))
    assert verify["ok"], verify

    # the hire's own session listing withholds M as well
    listing = ok(
        client.get("/v1/audit/retrievals", params={"session_id": "agent-run-7"}, headers=hire)
    )
    assert len(listing["items"]) == 2
    assert "M-MED" not in str(listing)
    assert any(r.get("withheld") for i in listing["items"] for r in i["results"])


def test_a_session_that_reads_adverse_matters_is_tainted(client: TestClient, auth: Tokens) -> None:
    firm = Firm(client, auth)
    firm.person(LAWYER)
    firm.client_("C-ZH", "Zeeburg Holding B.V.")
    firm.client_("C-ZL", "Zeeburg Logistiek B.V.", parent="C-ZH")
    firm.client_("C-KL", "Klaassen Transport B.V.")
    # the firm acts for Zeeburg Logistiek ...
    firm.matter("M-CLIENT", "C-ZL", team=[LAWYER])
    # ... and, elsewhere, against "ZEEBURG HOLDING bv", its parent, written otherwise
    firm.matter(
        "M-ADVERSE",
        "C-KL",
        team=[LAWYER],
        parties=[{"name": "ZEEBURG HOLDING bv", "role": "adverse"}],
    )
    firm.document(
        "zl-1",
        "Huurachterstand distributiecentrum Havenkwartier ontruiming.",
        client_id="C-ZL",
        matter_id="M-CLIENT",
    )
    firm.document(
        "kl-1",
        "Vordering transportschade containers Klaassen aansprakelijkheid.",
        client_id="C-KL",
        matter_id="M-ADVERSE",
    )
    h = auth(LAWYER, "lawyer")
    # sparse: each search reads exactly the matter its words are in
    assert firm.matters_seen(
        LAWYER,
        "huurachterstand distributiecentrum Havenkwartier",
        session_id="s-adv",
        mode="sparse",
    ) == {"M-CLIENT"}
    assert ok(_gate(client, h, "s-adv"))["status"] == "ok"
    assert firm.matters_seen(
        LAWYER, "transportschade containers Klaassen", session_id="s-adv", mode="sparse"
    ) == {"M-ADVERSE"}
    answer = ok(_gate(client, h, "s-adv"))
    assert answer["status"] == "tainted"
    assert answer["reasons"] == [
        {
            "kind": "adverse",
            "person_id": LAWYER,
            "matters": ["M-CLIENT", "M-ADVERSE"],
            "walls": [],
            "party": "ZEEBURG HOLDING bv",
            "cause": None,
            "documents": None,
        }
    ]
    # another session of the same person that read only one side stays ok
    firm.search(LAWYER, "transportschade containers Klaassen", session_id="s-one", mode="sparse")
    assert ok(_gate(client, h, "s-one"))["status"] == "ok"
    # the preview of a wall over the client matter finds the same conflict
    preview = ok(
        client.post(
            "/v1/walls/preview",
            json={
                "kind": "exclusionary",
                "title": "t",
                "protects": {"matters": ["M-CLIENT"]},
                "screened": [LAWYER],
            },
            headers=firm.h,
        )
    )
    assert {(c["client_in"], c["adverse_in"]) for c in preview["conflicts"]} == {
        ("M-CLIENT", "M-ADVERSE")
    }


@pytest.mark.parametrize(
    ("client_name", "adverse_name"),
    [
        ("Granite Capital B. V.", "Granite Capital BV"),
        ("Borealis Lines B.V. (h.o.d.n. Borealis Shipping)", "Borealis Lines B.V."),
    ],
)
def test_an_adverse_pair_found_from_the_party_side_taints(
    client: TestClient, auth: Tokens, client_name: str, adverse_name: str
) -> None:
    """The conflict graph finds these pairs from the adverse party's name only (the client's
    name holds more words than the party's). The gate kept only pairs found from the client's
    side, so a session that read both matters stayed ok."""
    firm = Firm(client, auth)
    firm.person(LAWYER)
    firm.client_("C-A", client_name)
    firm.client_("C-B", "Klaassen Transport B.V.")
    firm.matter("M-A", "C-A", team=[LAWYER])
    firm.matter("M-B", "C-B", team=[LAWYER], parties=[{"name": adverse_name, "role": "adverse"}])
    firm.document("a-1", "Huurachterstand distributiecentrum Havenkwartier.", client_id="C-A",
                  matter_id="M-A")
    firm.document("b-1", "Transportschade containers Klaassen.", client_id="C-B",
                  matter_id="M-B")
    conflicts = ok(client.get("/v1/conflicts", params={"name": adverse_name}, headers=firm.h))
    assert {"M-A", "M-B"} <= {h["matter_id"] for h in conflicts["matches"]}, conflicts
    firm.search(LAWYER, "huurachterstand distributiecentrum", session_id="s-p", mode="sparse")
    firm.search(LAWYER, "transportschade containers", session_id="s-p", mode="sparse")
    answer = ok(_gate(client, auth(LAWYER, "lawyer"), "s-p"))
    assert answer["status"] == "tainted", answer
    assert [r["matters"] for r in answer["reasons"]] == [["M-A", "M-B"]]


def test_bound_session_returns_only_its_matter_and_public_sources(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    # unbound, the lawyer finds both matters and the statute
    assert firm.matters_seen(LAWYER, QUERY, k=10) == {"M-MED", "M-OTHER", None}
    bound = firm.search(LAWYER, QUERY, k=10, session_id="s-b", session_matter_id="M-OTHER")
    assert {r["matter_id"] for r in bound["results"]} == {"M-OTHER", None}
    assert bound["session_scope"] == "bound"
    # the binding sticks to the session; the matter filter cannot widen it either
    later = firm.search(LAWYER, QUERY, k=10, session_id="s-b", filters={"matter_ids": ["M-MED"]})
    assert later["results"] == [] and later["session_matter_id"] == "M-OTHER"
    again = firm.search(LAWYER, QUERY, k=10, mode="dense", session_id="s-b")
    assert {r["matter_id"] for r in again["results"]} <= {"M-OTHER", None}
    assert len(again["results"]) == 2
    # explicit widening is possible, and audited as such
    wide = firm.search(LAWYER, QUERY, k=10, session_id="s-b", session_widen=True)
    assert {r["matter_id"] for r in wide["results"]} == {"M-MED", "M-OTHER", None}
    assert wide["session_scope"] == "widened"
    # rebinding the session to another matter is refused
    h = auth(LAWYER, "lawyer")
    refused = client.post(
        "/v1/search",
        json={"query": QUERY, "session_id": "s-b", "session_matter_id": "M-MED"},
        headers=h,
    )
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "session_bound"
    # a binding never widens access: the hire bound to a matter he may not see gets law only
    firm.wall(kind="exclusionary", protects={"matters": ["M-MED"]}, screened=[HIRE])
    retag(client)
    narrowed = firm.matters_seen(HIRE, QUERY, k=10, session_id="h", session_matter_id="M-MED")
    assert narrowed == {None}

    # the audit rows say which; compliance lists a session, the lawyer only their own
    compliance = auth(*COMPLIANCE)
    rows = ok(client.get("/v1/audit/retrievals", params={"session_id": "s-b"}, headers=compliance))[
        "items"
    ]
    assert [(r["session_matter_id"], r["session_scope"]) for r in rows] == [
        ("M-OTHER", "widened"),
        ("M-OTHER", "bound"),
        ("M-OTHER", "bound"),
        ("M-OTHER", "bound"),
    ]
    own = ok(client.get("/v1/audit/retrievals", params={"session_id": "s-b"}, headers=h))
    assert len(own["items"]) == 4
    theirs = ok(client.get("/v1/audit/retrievals", params={"session_id": "h"}, headers=h))
    assert theirs["items"] == []
    assert client.get("/v1/audit/retrievals", headers=h).status_code == 403
    assert (
        client.get(
            "/v1/audit/retrievals", params={"session_id": "h", "person_id": HIRE}, headers=h
        ).status_code
        == 403
    )
    assert ok(client.get("/v1/audit/verify", headers=compliance))["ok"]


@pytest.mark.parametrize(
    "body",
    [
        {"query": "x", "session_id": ""},
        {"query": "x", "session_id": "a\u0000b"},
        {"query": "x", "session_id": "s" * 201},
        {"query": "x", "session_matter_id": "M-1"},
        {"query": "x", "session_widen": True},  # a widening of no session: meant one
        {"query": "x", "session_id": "s", "session_matter_id": "a/b"},
        {"query": "x", "session_id": 7},
    ],
)
def test_session_fields_are_validated(client: TestClient, auth: Tokens, body: Any) -> None:
    response = client.post("/v1/search", json=body, headers=auth(LAWYER, "lawyer"))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"]


def test_session_gate_access_and_refusals(firm: Firm, client: TestClient, auth: Tokens) -> None:
    firm.search(LAWYER, QUERY, session_id="mine")
    # someone else's session is unknown to a lawyer; compliance may ask about anyone's
    assert _gate(client, auth(HIRE, "lawyer"), "mine").status_code == 404
    assert _gate(client, auth(LAWYER, "lawyer"), "never-used").status_code == 404
    assert ok(_gate(client, auth(*COMPLIANCE), "mine"))["people"] == [LAWYER]
    assert _gate(client, auth("x@firm.nl", "conflicts"), "mine").status_code == 403
    bad = client.post("/v1/gates/session", json={"session_id": "a\nb"}, headers=firm.h)
    assert bad.status_code in (403, 422)
    # the other gates take a session id and record it
    h = auth(LAWYER, "lawyer")
    ok(client.post("/v1/gates/citations", json={"text": "geen", "session_id": "mine"}, headers=h))
    assert (
        client.post(
            "/v1/gates/citations", json={"text": "geen", "session_id": "\u0007"}, headers=h
        ).status_code
        == 422
    )
    resources = client.app.state.resources  # type: ignore[attr-defined]
    with resources.database.transaction() as conn:
        from sqlalchemy import text

        gates = [
            (r.gate, r.request.get("session_id"), r.ok)
            for r in conn.execute(text("SELECT gate, request, ok FROM gate_events ORDER BY seq"))
        ]
    assert ("citations", "mine", True) in gates
    assert ("session", "mine", False) in gates  # the refused probe by the hire
    assert ("session", "mine", True) in gates
    # and compliance lists a session's gate events, as its retrievals
    ok(client.post("/v1/gates/citations", json={"text": "geen", "session_id": "other"}, headers=h))
    listed = ok(
        client.get(
            "/v1/audit/gate-events", params={"session_id": "mine"}, headers=auth(*COMPLIANCE)
        )
    )["items"]
    assert listed and {e["request"]["session_id"] for e in listed} == {"mine"}, listed


def test_own_audit_rows_tell_hidden_and_unknown_matters_apart_by_nothing(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """A lawyer's own row withholds the matters they may not see now. Unknown ids were
    echoed while hidden ones were removed, so one search naming 1,188 guessed ids in its
    filter, and one read of its row, listed every matter hidden from the lawyer."""
    firm.wall(kind="exclusionary", protects={"matters": ["M-MED"]}, screened=[HIRE])
    retag(client)
    hire = auth(HIRE, "lawyer")
    guesses = ["M-MED", "M-NOWHERE", "M-OTHER"]
    found = ok(
        client.post(
            "/v1/search",
            json={"query": QUERY, "filters": {"matter_ids": guesses}, "session_id": "s-1"},
            headers=hire,
        )
    )
    row = ok(client.get(f"/v1/audit/retrievals/{found['retrieval_id']}", headers=hire))
    assert row["filters"]["matter_ids"] == ["M-OTHER"], row["filters"]
    listed = ok(client.get("/v1/audit/retrievals", params={"session_id": "s-1"}, headers=hire))
    assert listed["items"][0]["filters"]["matter_ids"] == ["M-OTHER"]
    # compliance reads the row as it was asked
    full = ok(client.get(f"/v1/audit/retrievals/{found['retrieval_id']}", headers=auth(*COMPLIANCE)))
    assert full["filters"]["matter_ids"] == guesses


def test_a_search_answer_stops_naming_a_bound_matter_a_wall_hides(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """The answer kept naming the session's bound matter after a wall screened its person
    from it (their own audit row already showed null): with the gate's 'wall' reason, that
    told the screened lawyer which matter the new wall protects."""
    hire = auth(HIRE, "lawyer")

    def bound(**extra: Any) -> Any:
        body = {"query": QUERY, "session_id": "s-bound", **extra}
        return ok(client.post("/v1/search", json=body, headers=hire))

    assert bound(session_matter_id="M-MED")["session_matter_id"] == "M-MED"
    firm.wall(kind="exclusionary", protects={"matters": ["M-MED"]}, screened=[HIRE])
    retag(client)
    after = bound()
    assert after["session_matter_id"] is None and after["session_scope"] == "bound", after
    assert all(r["matter_id"] != "M-MED" for r in after["results"])
    # a binding to a matter the matrix does not know reads the same as a hidden one
    unknown = ok(
        client.post(
            "/v1/search",
            json={"query": QUERY, "session_id": "s-x", "session_matter_id": "M-NOWHERE"},
            headers=hire,
        )
    )
    assert unknown["session_matter_id"] is None
