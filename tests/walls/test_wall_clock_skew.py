"""Walls that start or end by the clock are judged by the database's clock, never the API
host's (app/db/clock.py). With the host's clock monkeypatched minutes behind (or ahead of)
the database's, a wall whose ``effective_from`` (``effective_until``) lies between the two
instants must already (still) screen: the search, the access check and the wall's
``active`` flag agree with the database. Wall lifts, policy events and the search's audit
row carry the database's instant too. A replica's instant (its own host's clock) is held to
the primary's by the fence of the audit append (sql/replica.sql)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.audit import chain
from tests.conftest import Tokens
from tests.helpers import Firm, audit_entry, ok, retag

TEXT = "De octrooiaanvraag betreft een inventieve werkwijze voor het coaten van glas."
SCREENED = "bob@firm.nl"
SKEW = timedelta(minutes=10)

_real_now_utc = chain.now_utc


@pytest.fixture
def host_clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[timedelta], None]:
    """Set the API host's clock ``offset`` away from the real one (the database's): every
    ``now_utc`` the app's modules hold, and ``datetime.now`` of the modules that read it for
    access (app.walls.access, app.gates.grounding) before the database's clock did."""

    def shift(offset: timedelta) -> None:
        def skewed() -> datetime:
            return _real_now_utc() + offset

        class SkewedDatetime(datetime):
            @classmethod
            def now(cls, tz: Any = None) -> Any:
                return datetime.now(tz) + offset

        for name, module in list(sys.modules.items()):
            if not name.startswith("app."):
                continue
            if getattr(module, "now_utc", None) is _real_now_utc:
                monkeypatch.setattr(module, "now_utc", skewed)
        for reader in ("app.walls.access", "app.gates.grounding"):
            held = sys.modules.get(reader)
            if held is not None and getattr(held, "datetime", None) is datetime:
                monkeypatch.setattr(held, "datetime", SkewedDatetime)

    return shift


def _db_now(client: TestClient) -> datetime:
    resources = client.app.state.resources  # type: ignore[attr-defined]
    with resources.database.transaction() as conn:
        now: datetime = conn.execute(text("SELECT clock_timestamp()")).scalar_one()
    return now


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    for person in ("alice@firm.nl", SCREENED):
        firm.person(person)
    firm.client_("C-ACME", "Acme Holding B.V.")
    firm.matter("M-1", "C-ACME", team=["alice@firm.nl"])
    firm.document("doc-1", TEXT, client_id="C-ACME", matter_id="M-1")
    retag(client)
    assert "M-1" in firm.matters_seen(SCREENED, "octrooiaanvraag")  # open before the wall
    return firm


def _screen(firm: Firm, **window: str) -> str:
    wall = firm.wall(
        kind="exclusionary", protects={"matters": ["M-1"]}, screened=[SCREENED], **window
    )
    retag(firm.client)
    return wall


def _assert_screened(firm: Firm, wall: str) -> None:
    assert "M-1" not in firm.matters_seen(SCREENED, "octrooiaanvraag")
    assert firm.access(SCREENED, "M-1")["allowed"] is False
    assert ok(firm.client.get(f"/v1/walls/{wall}", headers=firm.h))["active"] is True
    listed = ok(firm.client.get("/v1/walls", params={"active": "true"}, headers=firm.h))
    assert [w["wall_id"] for w in listed["items"]] == [wall]
    assert "M-1" in firm.matters_seen("alice@firm.nl", "octrooiaanvraag")  # the team still sees


def test_a_wall_begun_by_the_databases_clock_screens_on_a_host_running_behind(
    firm: Firm, client: TestClient, auth: Tokens, host_clock: Callable[[timedelta], None]
) -> None:
    host_clock(-SKEW)
    # in force by the database's clock; by the host's it starts in five minutes
    wall = _screen(firm, effective_from=(_db_now(client) - SKEW / 2).isoformat())
    _assert_screened(firm, wall)


def test_a_wall_ending_by_the_databases_clock_screens_on_a_host_running_ahead(
    firm: Firm, client: TestClient, auth: Tokens, host_clock: Callable[[timedelta], None]
) -> None:
    host_clock(SKEW)
    # in force by the database's clock; by the host's it ended five minutes ago
    wall = _screen(firm, effective_until=(_db_now(client) + SKEW / 2).isoformat())
    _assert_screened(firm, wall)


def test_the_gates_judge_a_wall_begun_by_the_databases_clock_on_a_host_running_behind(
    firm: Firm, client: TestClient, auth: Tokens, host_clock: Callable[[timedelta], None]
) -> None:
    """The grounding gate (the person's access now) and the session gate (is everything the
    session read still visible) judge by the database's clock too."""
    found = firm.search(SCREENED, "octrooiaanvraag", session_id="run-1")
    assert {r["matter_id"] for r in found["results"]} == {"M-1"}
    host_clock(-SKEW)
    _screen(firm, effective_from=(_db_now(client) - SKEW / 2).isoformat())
    lawyer = auth(SCREENED, "lawyer")
    grounded = ok(client.post("/v1/gates/grounding", headers=lawyer,
                              json={"retrieval_id": found["retrieval_id"], "answer": TEXT}))  # fmt: skip
    assert [s["supported"] for s in grounded["sentences"]] == [False]
    session = ok(client.post("/v1/gates/session", json={"session_id": "run-1"}, headers=lawyer))
    assert session["status"] == "tainted", session


def test_the_search_audit_lifts_and_policy_events_carry_the_databases_instant(
    firm: Firm, client: TestClient, auth: Tokens, host_clock: Callable[[timedelta], None]
) -> None:
    host_clock(-SKEW)
    compliance = auth("co@firm.nl", "compliance")
    before = _db_now(client)
    firm.search(SCREENED, "octrooiaanvraag")
    wall = _screen(firm)
    lifted = ok(
        client.post(f"/v1/walls/{wall}/lift", json={"reason": "resolved"}, headers=firm.h)
    )
    after = _db_now(client)
    row = ok(client.get("/v1/audit/retrievals", headers=compliance))["items"][0]
    assert before <= datetime.fromisoformat(row["at"]) <= after
    assert before <= datetime.fromisoformat(lifted["lifted_at"]) <= after
    kept = ok(client.get(f"/v1/walls/{wall}", headers=firm.h))
    assert before <= datetime.fromisoformat(kept["lifted_at"]) <= after
    events = ok(client.get("/v1/audit/policy-events", params={"object_id": wall},
                           headers=compliance))["items"]  # fmt: skip
    assert {e["action"] for e in events} == {"wall.issued", "wall.lifted"}
    for event in events:
        assert before <= datetime.fromisoformat(event["at"]) <= after, event


def _fenced_append(client: TestClient, at: datetime) -> bool:
    """Whether the replica fence lets a retrieval resolved at ``at`` (a replica's clock) be
    appended on the primary now; nothing else about it could fail the fence (no results,
    the primary's policy version, no query model). Rolled back either way."""
    resources = client.app.state.resources  # type: ignore[attr-defined]
    with resources.database.engine.connect() as conn:
        version = int(conn.execute(text("SELECT version FROM policy_state")).scalar_one())
        entry = audit_entry(at=at, policy_version=version, result_count=0)
        appended = chain.append_fenced_retrieval(
            conn, entry, [], chain.Fence((), ()), within_s=chain.APPEND_LAG_MAX_S
        )
        conn.rollback()
    return appended is not None


def test_the_replica_fence_holds_a_replicas_instant_to_the_primarys_clock(
    firm: Firm, client: TestClient
) -> None:
    began = _db_now(client) - timedelta(seconds=60)
    wall = _screen(firm, effective_from=began.isoformat())
    # a replica whose clock runs behind the primary's, on the other side of the wall's
    # start (so within the append lag): fenced, the search runs again on the primary
    assert not _fenced_append(client, began - timedelta(seconds=30))
    # one whose clock runs ahead of the primary's: fenced (the row would claim an instant
    # later than its append, and the audit's finality bound counts on the opposite)
    assert not _fenced_append(client, _db_now(client) + timedelta(minutes=5))
    # after the wall began, behind the primary's clock within the lag: appended
    assert _fenced_append(client, began + timedelta(seconds=1))
    # with no wall boundary in between (the wall lifted), further behind than the lag:
    # fenced; within it: appended
    firm.lift(wall)
    lag = timedelta(seconds=chain.APPEND_LAG_MAX_S)
    assert not _fenced_append(client, _db_now(client) - lag - timedelta(seconds=30))
    assert _fenced_append(client, _db_now(client) - lag / 2)


def test_the_replica_fence_holds_a_replicas_instant_before_a_walls_end(
    firm: Firm, client: TestClient
) -> None:
    """The other edge of a window: a wall that ENDED between a replica's instant and the
    primary's clock screened at the replica's instant (narrower, but another answer than the
    primary's now): fenced, like a start in between; nothing ends in between: appended."""
    now = _db_now(client)
    ended = now - timedelta(seconds=30)
    _screen(firm, effective_from=(now - timedelta(seconds=90)).isoformat(),
            effective_until=ended.isoformat())  # fmt: skip
    assert not _fenced_append(client, ended - timedelta(seconds=20))
    assert _fenced_append(client, ended + timedelta(seconds=1))
