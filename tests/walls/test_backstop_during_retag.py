"""The row-level security backstop on its own, while a re-tag is pending.

Every check here reads `chunks` with NO access predicate of its own: only the transaction-
local settings that a search sets (`access.apply`) stand between the person and the rows.
That is what invariant 1 promises if a query ever forgets the predicate, and it must hold
in the window where a newly walled matter's chunks still carry their old (open) group.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from tests.conftest import DbHandle, Tokens, make_client
from tests.helpers import Firm, ok

PEOPLE = ("alice@firm.nl", "bob@firm.nl", "carol@firm.nl", "dave@firm.nl")
TEXT = "Het octrooi betreft een inventieve werkwijze voor het coaten van glas."


def backstop_view(client: TestClient, person: str) -> set[tuple[str | None, str]]:
    """(matter_id, external_id) of every chunk row RLS lets `person` read; no predicate."""
    from app.walls.access import apply, current_access

    resources = client.app.state.resources  # type: ignore[attr-defined]
    with resources.database.transaction() as conn:
        access = current_access(conn, resources.require_resolver(), resources.database, person)
        apply(conn, access)
        rows = conn.execute(text("SELECT DISTINCT matter_id, external_id FROM chunks")).all()
        conn.rollback()
    return {(r[0], r[1]) for r in rows}


def matters(view: set[tuple[str | None, str]]) -> set[str | None]:
    return {m for m, _ in view}


def docs(view: set[tuple[str | None, str]]) -> set[str]:
    return {d for _, d in view}


@pytest.fixture
def worker_client(db: DbHandle, settings: Any, embedder: Any) -> Iterator[TestClient]:
    with make_client(db, settings, embedder, start_worker=True) as test_client:
        yield test_client


def _build(firm: Firm) -> None:
    for p in PEOPLE:
        firm.person(p, aliases=[f"imanage:user:{p.split('@')[0]}"])
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    firm.matter("M-2", "C-1", team=["carol@firm.nl"])
    firm.matter("M-3", "C-1")
    for m in ("M-1", "M-2", "M-3"):
        for j in range(3):
            firm.document(f"{m}-d{j}", f"{TEXT} Stuk {j} van {m}.", client_id="C-1", matter_id=m)
    # source ACLs: one document denied to carol, one private to dave, in an open matter and
    # in a matter that is about to be walled
    for m in ("M-3", "M-2"):
        firm.document(
            f"{m}-denied",
            f"{TEXT} Geweigerd voor carol in {m}.",
            client_id="C-1",
            matter_id=m,
            acl={"default": "public", "allow": [], "deny": ["imanage:user:carol"]},
        )
        firm.document(
            f"{m}-private",
            f"{TEXT} Alleen voor dave in {m}.",
            client_id="C-1",
            matter_id=m,
            acl={"default": "private", "allow": ["imanage:user:dave"], "deny": []},
        )


def test_backstop_alone_hides_pending_matters_and_source_denies(
    worker_client: TestClient, auth: Tokens
) -> None:
    firm = Firm(worker_client, auth)
    _build(firm)
    worker = worker_client.app.state.resources.retag_worker  # type: ignore[attr-defined]
    # before any wall: the backstop admits what it should (the checks below are not vacuous)
    assert {"M-1", "M-2", "M-3"} <= matters(backstop_view(worker_client, "bob@firm.nl"))
    assert "M-3-private" in docs(backstop_view(worker_client, "dave@firm.nl"))

    worker.pause()
    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=["bob@firm.nl"])
    firm.wall(
        kind="inclusionary",
        protects={"matters": ["M-2"]},
        allowed=["dave@firm.nl"],
        include_team=False,
    )
    status = ok(worker_client.get("/v1/admin/retag", headers=firm.h))
    assert status["pending_matters"] == 2
    # the chunks really still sit in their old group: only a pending predicate can hide them
    with worker_client.app.state.resources.database.transaction() as conn:  # type: ignore[attr-defined]
        conn.execute(text("SET LOCAL ROLE ewall_writer"))
        old = conn.execute(
            text("SELECT DISTINCT wall_group_id FROM chunks WHERE matter_id IN ('M-1', 'M-2')")
        ).all()
    assert [r[0] for r in old] == ["open"]

    views = {p: backstop_view(worker_client, p) for p in (*PEOPLE, "stranger@firm.nl")}
    for person, view in views.items():
        # pending matters are invisible to everyone, insiders included (narrower, not wider)
        assert not ({"M-1", "M-2"} & matters(view)), person
    assert "M-3" in matters(views["bob@firm.nl"]) and "M-3" in matters(views["carol@firm.nl"])
    # source-ACL denies and private documents, through the backstop alone
    assert "M-3-denied" not in docs(views["carol@firm.nl"])
    assert "M-3-denied" in docs(views["bob@firm.nl"])
    assert "M-3-private" not in docs(views["carol@firm.nl"])
    assert "M-3-private" in docs(views["dave@firm.nl"])

    worker.resume()
    deadline = time.monotonic() + 60  # a guard against a hang, not a timing assertion
    while ok(worker_client.get("/v1/admin/retag", headers=firm.h))["pending_matters"]:
        assert time.monotonic() < deadline, "re-tag did not finish"
        time.sleep(0.05)

    after = {p: backstop_view(worker_client, p) for p in PEOPLE}
    assert "M-1" not in matters(after["bob@firm.nl"])  # exclusionary
    assert "M-1" in matters(after["alice@firm.nl"])
    assert "M-2" not in matters(after["carol@firm.nl"])  # inclusionary, team not included
    assert "M-2" not in matters(after["bob@firm.nl"])
    assert {"M-2-d0", "M-2-private", "M-2-denied"} <= docs(after["dave@firm.nl"])
    assert "M-2-denied" not in docs(after["carol@firm.nl"])
