"""Walls through the API: validation, zero staleness, fail-closed re-tagging, windows, lifts,
client families, conflicts, explanations and the policy-event log."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens, make_client
from tests.helpers import Firm, ok, retag

TEXT = "De octrooiaanvraag betreft een inventieve werkwijze voor het coaten van glas."


def _firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    for p in ("alice@firm.nl", "bob@firm.nl", "carol@firm.nl"):
        firm.person(p)
    firm.client_("C-ACME", "Acme Holding B.V.")
    firm.client_("C-ACME-NL", "Acme Nederland B.V.", parent="C-ACME")
    firm.client_("C-BETA", "Beta N.V.")
    firm.matter(
        "M-1",
        "C-ACME-NL",
        team=["alice@firm.nl"],
        parties=[{"name": "Beta N.V.", "role": "adverse"}],
    )
    firm.matter("M-2", "C-BETA", team=["carol@firm.nl"])
    firm.document("doc-1", TEXT, client_id="C-ACME-NL", matter_id="M-1")
    firm.document("doc-2", TEXT + " Tweede document.", client_id="C-BETA", matter_id="M-2")
    return firm


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            {"kind": "exclusionary", "title": "t", "protects": {}, "screened": ["alice@firm.nl"]},
            "protects",
        ),
        (
            {
                "kind": "exclusionary",
                "title": "t",
                "protects": {"matters": ["M-404"]},
                "screened": ["alice@firm.nl"],
            },
            "protects.matters",
        ),
        (
            {
                "kind": "exclusionary",
                "title": "t",
                "protects": {"clients": ["C-404"]},
                "screened": ["alice@firm.nl"],
            },
            "protects.clients",
        ),
        (
            {
                "kind": "exclusionary",
                "title": "t",
                "protects": {"matters": ["M-1"]},
                "screened": ["nobody@firm.nl"],
            },
            "screened",
        ),
        (
            {
                "kind": "inclusionary",
                "title": "t",
                "protects": {"matters": ["M-1"]},
                "allowed": ["ghost@firm.nl"],
            },
            "allowed",
        ),
        ({"kind": "exclusionary", "title": "t", "protects": {"matters": ["M-1"]}}, "screened"),
        (
            {
                "kind": "exclusionary",
                "title": "t",
                "protects": {"matters": ["M-1"]},
                "screened": ["alice@firm.nl"],
                "effective_from": "2030-01-02T00:00:00Z",
                "effective_until": "2030-01-01T00:00:00Z",
            },
            "effective_until",
        ),
        ({"kind": "sideways", "title": "t", "protects": {"matters": ["M-1"]}}, "kind"),
        *(
            (
                {
                    "kind": "inclusionary",
                    "title": "t",
                    "protects": {"matters": ["M-1"]},
                    "allowed": ["alice@firm.nl"],
                    "include_team": loose,
                },
                "include_team",
            )
            for loose in ("no", "yes", 0, 1, "false", None)
        ),
    ],
)
def test_bad_walls_are_422_naming_the_field(
    client: TestClient, auth: Tokens, body: dict[str, Any], field: str
) -> None:
    firm = _firm(client, auth)
    before = ok(client.get("/v1/walls", headers=firm.h))["items"]
    r = client.post("/v1/walls", json=body, headers=firm.h)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == field
    assert ok(client.get("/v1/walls", headers=firm.h))["items"] == before


def test_matrix_bad_references_are_422_and_nothing_is_half_applied(
    client: TestClient, auth: Tokens
) -> None:
    firm = _firm(client, auth)
    body = {
        "people": [{"person_id": "dave@firm.nl", "name": "Dave"}],
        "clients": [{"client_id": "C-NEW", "name": "New"}],
        "matters": [{"matter_id": "M-NEW", "client_id": "C-NEW", "team": ["erin@firm.nl"]}],
    }
    r = client.post("/v1/matrix/import", json=body, headers=firm.h)
    assert r.status_code == 422
    assert r.json()["error"]["details"]["id"] == "erin@firm.nl"
    assert client.get("/v1/people/dave@firm.nl", headers=firm.h).status_code == 404
    assert client.get("/v1/clients/C-NEW", headers=firm.h).status_code == 404
    r = client.put(
        "/v1/clients/C-ACME", json={"name": "Acme", "parent_id": "C-ACME-NL"}, headers=firm.h
    )
    assert r.status_code == 422 and r.json()["error"]["code"] == "client_cycle"
    r = client.put("/v1/matters/M-9", json={"client_id": "C-404"}, headers=firm.h)
    assert r.status_code == 422 and r.json()["error"]["details"]["id"] == "C-404"


def test_idempotent_upserts_do_not_bump_the_policy(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    v1 = firm.matter("M-2", "C-BETA", team=["carol@firm.nl"])
    v2 = firm.matter("M-2", "C-BETA", team=["carol@firm.nl"])
    assert v1 == v2
    v3 = firm.matter("M-2", "C-BETA", team=["carol@firm.nl", "bob@firm.nl"])
    assert v3 == v2 + 1


def test_zero_staleness_with_concurrent_readers(client: TestClient, auth: Tokens) -> None:
    """A wall committed before a query starts applies to it, for 8 readers at once.

    Phases are marked with events, not clocks: a search that ended before the wall request
    was sent must see M-1; every search that started after the wall's commit returned must
    not. The test waits for enough searches in each phase instead of sleeping."""
    firm = _firm(client, auth)
    assert "M-1" in firm.matters_seen("bob@firm.nl", "octrooiaanvraag")
    observations: list[tuple[bool, bool, set[str | None]]] = []  # (ended before, started after)
    progress = threading.Condition()
    issuing = threading.Event()
    committed = threading.Event()
    stop = threading.Event()
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            while not stop.is_set():
                after = committed.is_set()
                seen = firm.matters_seen("bob@firm.nl", "octrooiaanvraag")
                before = not issuing.is_set()
                with progress:
                    observations.append((before, after, seen))
                    progress.notify_all()
        except BaseException as exc:  # surfaced below
            errors.append(exc)
            with progress:
                progress.notify_all()

    def wait_for(count: int, *, after: bool) -> None:
        with progress:
            assert progress.wait_for(
                lambda: (
                    bool(errors)
                    or sum(1 for o in observations if (o[1] if after else o[0])) >= count
                ),
                timeout=300,
            ), "the readers made no progress"

    threads = [threading.Thread(target=reader) for _ in range(8)]
    for t in threads:
        t.start()
    try:
        wait_for(8, after=False)
        issuing.set()
        firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=["bob@firm.nl"])
        committed.set()
        wait_for(16, after=True)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors
    before = [seen for ended_before, _, seen in observations if ended_before]
    after = [seen for _, started_after, seen in observations if started_after]
    assert len(before) >= 8 and len(after) >= 16
    assert all("M-1" in seen for seen in before)
    assert all("M-1" not in seen for seen in after)
    # the very next query, no re-tag needed for the screened person
    assert "M-1" not in firm.matters_seen("bob@firm.nl", "octrooiaanvraag")


@pytest.fixture
def worker_client(db: DbHandle, settings: Any, embedder: Any) -> Iterator[TestClient]:
    with make_client(db, settings, embedder, start_worker=True) as test_client:
        yield test_client


def test_retag_fails_closed_while_the_worker_is_paused(
    worker_client: TestClient, auth: Tokens
) -> None:
    firm = _firm(worker_client, auth)
    worker = worker_client.app.state.resources.retag_worker  # type: ignore[attr-defined]
    worker.pause()
    firm.wall(
        kind="inclusionary",
        protects={"matters": ["M-1"]},
        allowed=["bob@firm.nl"],
        include_team=True,
    )
    status = ok(worker_client.get("/v1/admin/retag", headers=firm.h))
    assert status["pending_matters"] == 1
    # narrower for everyone while pending, never wider: even insiders see nothing of M-1
    for person in ("alice@firm.nl", "bob@firm.nl", "carol@firm.nl"):
        assert "M-1" not in firm.matters_seen(person, "octrooiaanvraag")
    assert "M-2" in firm.matters_seen("carol@firm.nl", "octrooiaanvraag")
    worker.resume()
    deadline = time.monotonic() + 120  # a guard against a hang; the wait is on the queue
    while ok(worker_client.get("/v1/admin/retag", headers=firm.h))["pending_matters"]:
        assert time.monotonic() < deadline, "re-tag did not finish"
        time.sleep(0.1)
    assert "M-1" in firm.matters_seen("alice@firm.nl", "octrooiaanvraag")  # team
    assert "M-1" in firm.matters_seen("bob@firm.nl", "octrooiaanvraag")  # allowed
    assert "M-1" not in firm.matters_seen("carol@firm.nl", "octrooiaanvraag")


def test_retag_resumes_after_a_crash(client: TestClient, auth: Tokens) -> None:
    """The queue is state in the database: a half-done re-tag continues where it stopped."""
    from app.walls.retag import run_once

    firm = _firm(client, auth)
    for i in range(6):
        firm.document(
            f"extra-{i}", f"{TEXT} Bijlage {i} over glas.", client_id="C-ACME-NL", matter_id="M-1"
        )
    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=["bob@firm.nl"])
    resources = client.app.state.resources  # type: ignore[attr-defined]
    first = run_once(resources.database, batch_size=2, max_batches=1)  # then "crash"
    assert first.chunks_moved == 2 and first.matters_done == 0
    assert ok(client.get("/v1/admin/retag", headers=firm.h))["items"][0]["retagged_chunks"] == 2
    rest = run_once(resources.database, batch_size=2)
    assert rest.matters_done == 1
    assert "M-1" in firm.matters_seen("alice@firm.nl", "octrooiaanvraag glas")


def test_effective_window_takes_effect_without_a_write(client: TestClient, auth: Tokens) -> None:
    """Each observation is bracketed by the clock before and after it and judged only when it
    lies wholly inside one phase (before, inside, after the window); the test waits until it
    has judged every phase, however slow the machine, instead of sleeping to a deadline.

    A slow moment can still make a window's phase unobservable: the wall and its re-tag
    written after the window began (no "before"), or no search and access check that fit
    inside it. Then the wall is lifted and a new one tried with a window twice as long."""
    firm = _firm(client, auth)
    began = datetime.now(UTC)
    firm.matters_seen("bob@firm.nl", "octrooiaanvraag")
    firm.access("bob@firm.nl", "M-1")
    # long enough that a whole search fits inside each phase on this machine
    span = max(timedelta(seconds=2), 6 * (datetime.now(UTC) - began))
    judged: dict[str, int] = {}
    for _ in range(6):
        start = datetime.now(UTC) + span
        until = start + span
        wall = firm.wall(
            kind="exclusionary",
            protects={"matters": ["M-1"]},
            screened=["bob@firm.nl"],
            effective_from=start.isoformat(),
            effective_until=until.isoformat(),
        )
        retag(client)

        def phase(moment: datetime, start: datetime = start, until: datetime = until) -> str:
            return "before" if moment < start else "inside" if moment < until else "after"

        judged = {"before": 0, "inside": 0, "after": 0}
        missed = False
        while min(judged.values()) == 0 and not missed:
            t0 = datetime.now(UTC)
            visible = "M-1" in firm.matters_seen("bob@firm.nl", "octrooiaanvraag")
            allowed = firm.access("bob@firm.nl", "M-1")["allowed"]
            t1 = datetime.now(UTC)
            # a phase gone by without an observation wholly inside it
            missed = (t0 >= start and not judged["before"]) or (
                t0 >= until and not judged["inside"]
            )
            if phase(t0) != phase(t1):
                continue  # straddles a boundary: says nothing
            expected = phase(t0) != "inside"
            assert visible is expected and allowed is expected, (phase(t0), visible, allowed)
            judged[phase(t0)] += 1
        if min(judged.values()) > 0:
            break
        firm.lift(wall, "a phase was missed; a longer window next")
        retag(client)
        span *= 2
    assert min(judged.values()) > 0, f"never judged every phase: {judged}"


def test_lifted_wall_restores_access_and_is_kept(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    wall = firm.wall(
        kind="exclusionary", protects={"clients": ["C-ACME"]}, screened=["bob@firm.nl"]
    )
    retag(client)
    assert "M-1" not in firm.matters_seen("bob@firm.nl", "octrooiaanvraag")
    firm.lift(wall, "conflict resolved")
    retag(client)
    assert "M-1" in firm.matters_seen("bob@firm.nl", "octrooiaanvraag")
    kept = ok(client.get(f"/v1/walls/{wall}", headers=firm.h))
    assert kept["lifted_by"] == "admin@firm.nl" and kept["lift_reason"] == "conflict resolved"
    assert kept["active"] is False
    assert [
        w["wall_id"]
        for w in ok(client.get("/v1/walls", params={"active": "true"}, headers=firm.h))["items"]
    ] == []


def test_client_wall_covers_subsidiaries_and_later_matters(
    client: TestClient, auth: Tokens
) -> None:
    firm = _firm(client, auth)
    firm.wall(kind="exclusionary", protects={"clients": ["C-ACME"]}, screened=["bob@firm.nl"])
    firm.client_("C-ACME-DE", "Acme Deutschland GmbH", parent="C-ACME-NL")
    firm.matter("M-3", "C-ACME-DE", team=["carol@firm.nl"])  # opened after the wall
    firm.document(
        "doc-3",
        "Een nieuwe zaak over octrooiaanvraag en glas.",
        client_id="C-ACME-DE",
        matter_id="M-3",
    )
    retag(client)
    explanation = firm.access("bob@firm.nl", "M-3")
    assert explanation["allowed"] is False
    why = explanation["walls"][0]["why"]
    assert "C-ACME" in why and "C-ACME-NL" in why and "C-ACME-DE" in why and "M-3" in why
    assert explanation["walls"][0]["path"][0].startswith("wall:W-")
    assert explanation["walls"][0]["path"][1:] == [
        "client:C-ACME",
        "client:C-ACME-NL",
        "client:C-ACME-DE",
        "matter:M-3",
    ]
    assert {"M-1", "M-3"}.isdisjoint(firm.matters_seen("bob@firm.nl", "octrooiaanvraag glas"))
    assert "M-3" in firm.matters_seen("carol@firm.nl", "octrooiaanvraag glas")
    # moving the matter out of the family lifts the wall's hold on it
    firm.matter("M-3", "C-BETA", team=["carol@firm.nl"])
    retag(client)
    assert firm.access("bob@firm.nl", "M-3")["allowed"] is True


def test_team_change_applies_to_inclusionary_walls_at_once(
    client: TestClient, auth: Tokens
) -> None:
    firm = _firm(client, auth)
    firm.wall(kind="inclusionary", protects={"matters": ["M-1"]}, allowed=[], include_team=True)
    retag(client)
    assert "M-1" not in firm.matters_seen("bob@firm.nl", "octrooiaanvraag")
    firm.matter("M-1", "C-ACME-NL", team=["alice@firm.nl", "bob@firm.nl"])
    assert "M-1" in firm.matters_seen("bob@firm.nl", "octrooiaanvraag")
    firm.matter("M-1", "C-ACME-NL", team=["alice@firm.nl"])
    assert "M-1" not in firm.matters_seen("bob@firm.nl", "octrooiaanvraag")


def test_unrelated_wall_keeps_group_ids(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    before = ok(client.get("/v1/matters/M-2", headers=firm.h))["wall_group_id"]
    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=["bob@firm.nl"])
    assert ok(client.get("/v1/matters/M-2", headers=firm.h))["wall_group_id"] == before == "open"
    g1 = ok(client.get("/v1/matters/M-1", headers=firm.h))["wall_group_id"]
    assert g1.startswith("wg_")


def test_conflict_check_finds_family_and_parties(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    hits = ok(client.get("/v1/conflicts", params={"name": "ACME b.v."}, headers=firm.h))["matches"]
    assert {(h["matter_id"], h["role"]) for h in hits} == {("M-1", "client")}
    hits = ok(client.get("/v1/conflicts", params={"name": "beta"}, headers=firm.h))["matches"]
    assert {(h["matter_id"], h["role"]) for h in hits} == {("M-1", "adverse"), ("M-2", "client")}
    assert (
        ok(client.get("/v1/conflicts", params={"name": "Gamma"}, headers=firm.h))["matches"] == []
    )


def test_policy_events_are_logged_and_chained(client: TestClient, auth: Tokens) -> None:
    firm = _firm(client, auth)
    wall = firm.wall(
        kind="exclusionary",
        protects={"matters": ["M-1"]},
        screened=["bob@firm.nl"],
        reason="lateral hire",
    )
    firm.lift(wall, "left the firm")
    comp = auth("co@firm.nl", "compliance")
    events = ok(client.get("/v1/audit/policy-events", headers=comp))["items"]
    actions = [e["action"] for e in events]
    assert actions[:2] == ["wall.lifted", "wall.issued"]
    assert events[1]["reason"] == "lateral hire" and events[0]["reason"] == "left the firm"
    assert events[0]["policy_version"] == events[1]["policy_version"] + 1
    assert ok(client.get("/v1/audit/verify", headers=comp))["ok"] is True
    assert (
        client.get("/v1/audit/policy-events", headers=auth("l@firm.nl", "lawyer")).status_code
        == 403
    )


def test_policy_events_are_found_by_every_object_they_changed(
    client: TestClient, auth: Tokens
) -> None:
    """An import that changes several objects is filed under one subject; asked for by one
    of the people it deactivated, the event was not found (a check of 2026-12-06)."""
    firm = _firm(client, auth)
    people = [
        {"person_id": "bob@firm.nl", "name": "Bob", "active": False},
        {"person_id": "dave@firm.nl", "name": "Dave"},
    ]
    ok(client.post("/v1/matrix/import", json={"people": people}, headers=firm.h))
    comp = auth("co@firm.nl", "compliance")

    def actions(object_id: str) -> list[str]:
        events = ok(
            client.get("/v1/audit/policy-events", params={"object_id": object_id}, headers=comp)
        )["items"]
        return [e["action"] for e in events]

    assert actions("bob@firm.nl")[0] == "matrix.import"
    assert actions("dave@firm.nl") == ["matrix.import"]
    assert actions("nobody@firm.nl") == []


def test_many_unknown_ids_are_all_in_the_details_and_few_in_the_message(
    client: TestClient, auth: Tokens
) -> None:
    firm = _firm(client, auth)
    ghosts = [f"M-GHOST-{i:02d}" for i in range(15)]
    body = {
        "kind": "exclusionary",
        "title": "t",
        "protects": {"matters": ghosts},
        "screened": ["alice@firm.nl"],
    }
    r = client.post("/v1/walls", json=body, headers=firm.h)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["details"]["ids"] == ghosts
    assert "M-GHOST-09 and 5 more." in error["message"] and "M-GHOST-14" not in error["message"]
