"""A document pushed into a walled matter is invisible to a screened person at once.

No re-tag runs anywhere in this file after the documents arrive: the group that ingestion
chooses is what protects them, so a wrong group at ingest time cannot be repaired before
anyone looks. The insiders' views prove the documents are searchable (not merely hidden as
pending), and the backstop alone (RLS without the search predicate) agrees.
"""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import text

from tests.conftest import Tokens
from tests.helpers import Firm, ok, retag
from tests.walls.test_backstop_during_retag import backstop_view, docs

TEXT = "Memorie van grieven over de zeldzame kwestie van het gelaagde glasoctrooi."
QUERY = "gelaagde glasoctrooi grieven"


def _seen_docs(firm: Firm, person: str, mode: str) -> set[str]:
    out = firm.search(person, QUERY, k=50, mode=mode)
    return {r["document"]["external_id"] for r in out["results"]}


def _pending(client: TestClient, firm: Firm) -> int:
    return int(ok(client.get("/v1/admin/retag", headers=firm.h))["pending_matters"])


def test_documents_pushed_into_walled_matters_are_hidden_before_any_retag(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    for p in ("alice@firm.nl", "bob@firm.nl", "carol@firm.nl", "dave@firm.nl"):
        firm.person(p)
    firm.client_("C-HOLD", "Holding B.V.")
    firm.client_("C-SUB", "Dochter B.V.", parent="C-HOLD")
    firm.client_("C-OTHER", "Ander B.V.")
    firm.matter("M-EXCL", "C-OTHER", team=["alice@firm.nl"])
    firm.matter("M-INCL", "C-OTHER", team=["carol@firm.nl"])
    firm.matter("M-OPEN", "C-OTHER")
    firm.wall(kind="exclusionary", protects={"matters": ["M-EXCL"]}, screened=["bob@firm.nl"])
    firm.wall(
        kind="inclusionary",
        protects={"matters": ["M-INCL"]},
        allowed=["dave@firm.nl"],
        include_team=True,
    )
    firm.wall(
        kind="inclusionary",
        protects={"clients": ["C-HOLD"]},
        allowed=["dave@firm.nl"],
        include_team=False,
    )
    retag(client)  # the queue is empty from here on; nothing below re-tags
    assert _pending(client, firm) == 0
    # a matter opened later under a protected client's subsidiary
    firm.matter("M-NEW", "C-SUB", team=["bob@firm.nl"])

    for matter, client_id in (
        ("M-EXCL", "C-OTHER"),
        ("M-INCL", "C-OTHER"),
        ("M-NEW", "C-SUB"),
        ("M-OPEN", "C-OTHER"),
    ):
        firm.document(f"{matter}-doc", f"{TEXT} ({matter})", client_id=client_id, matter_id=matter)
    assert _pending(client, firm) == 0

    # every chunk carries its matter's current group, straight from ingestion
    resources = client.app.state.resources  # type: ignore[attr-defined]
    with resources.database.transaction() as conn:
        conn.execute(text("SET LOCAL ROLE ewall_writer"))
        wrong = conn.execute(
            text(
                "SELECT c.chunk_id FROM chunks c JOIN matter_wall_groups g "
                "ON g.matter_id = c.matter_id WHERE c.wall_group_id <> g.wall_group_id"
            )
        ).all()
    assert wrong == []

    expected = {
        "alice@firm.nl": {"M-EXCL-doc", "M-OPEN-doc"},  # an insider of neither inclusionary wall
        "bob@firm.nl": {"M-OPEN-doc"},  # screened; on M-NEW's team but team does not count
        "carol@firm.nl": {"M-EXCL-doc", "M-INCL-doc", "M-OPEN-doc"},  # M-INCL team (include_team)
        "dave@firm.nl": {"M-EXCL-doc", "M-INCL-doc", "M-NEW-doc", "M-OPEN-doc"},
        "stranger@firm.nl": {"M-OPEN-doc"},  # unknown to the matrix: unwalled matters only
    }
    for person, visible in expected.items():
        for mode in ("hybrid", "dense", "sparse"):
            assert _seen_docs(firm, person, mode) == visible, (person, mode)
        assert docs(backstop_view(client, person)) == visible, person
