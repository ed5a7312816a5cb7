"""Heavy calls take their turn in a lane, never every request thread (app/deps.py Lane).

A concurrency check found 48 citation calls against a slow source holding all 40 of the
API's request threads, and a search waiting for the first of them to end; fifty document
pushes did the same with the encoder."""

from __future__ import annotations

import threading
from typing import Any

from fastapi.routing import iter_route_contexts

from app.deps import CITATIONS_LANE, LANE_QUEUE_MAX, Lane
from tests.conftest import Tokens
from tests.fakes.rechtspraak import FakeRechtspraak
from tests.gates.conftest import GateClient
from tests.gates.test_citations import live_eclis
from tests.gates.test_grounding import ALICE, BOB
from tests.gates.test_limits import wait_for

CALLS = CITATIONS_LANE.size + LANE_QUEUE_MAX  # 40, as many as the request threads


def test_a_search_runs_while_citation_calls_wait_on_a_slow_source(
    gate_client: GateClient, auth: Tokens
) -> None:
    [ecli] = live_eclis(1)
    with FakeRechtspraak() as source:
        source.slow(ecli, 600)  # answers when stopped: the test ends the wait, not a clock
        client = gate_client(
            rechtspraak_url=source.url,
            citation_timeout_s=600,
            gate_max_concurrent_per_person=CALLS + 1,
            citations_per_minute=10 * CALLS,
        )
        ended: list[int] = []
        lock = threading.Lock()

        def cite() -> None:
            r = client.post(
                "/v1/gates/citations", json={"text": f"Zie {ecli}."}, headers=auth(BOB, "lawyer")
            )
            with lock:
                ended.append(r.status_code)

        callers = [threading.Thread(target=cite, daemon=True) for _ in range(CALLS)]
        for t in callers:
            t.start()
        wait_for(lambda: source.hits(ecli) >= CITATIONS_LANE.size, "citation calls at the source")
        lane = client.app.state.lanes["citations"]  # type: ignore[attr-defined]
        wait_for(lambda: lane.statistics().tasks_waiting == LANE_QUEUE_MAX, "a full queue")
        # one more waits in no queue: each waiting call holds its body in memory
        answered: list[Any] = []
        threading.Thread(
            target=lambda: answered.append(
                client.post(
                    "/v1/gates/citations",
                    json={"text": f"Zie {ecli}."},
                    headers=auth(BOB, "lawyer"),
                )
            ),
            daemon=True,
        ).start()
        wait_for(lambda: bool(answered), "a call beyond the queue, refused at once")
        [extra] = answered
        assert extra.status_code == 429, extra.text
        assert extra.json()["error"]["details"]["scope"] == "citations_queue"
        assert extra.headers["Retry-After"] == "1"
        found: list[int] = []
        search = threading.Thread(
            target=lambda: found.append(
                client.post(
                    "/v1/search", json={"query": "werkgever"}, headers=auth(ALICE, "lawyer")
                ).status_code
            ),
            daemon=True,
        )
        search.start()
        wait_for(lambda: bool(found), "a search beside the citation calls")
        assert found == [200]
        assert ended == [], "the search waited for a citation call to end"
        assert source.hits(ecli) == CITATIONS_LANE.size, "more calls at the source than the lane"
    wait_for(lambda: len(ended) == CALLS, "the citation calls, once the source answers")
    assert set(ended) == {200}


HEAVY = {
    ("POST", "/v1/documents"): "ingest",
    ("POST", "/v1/gates/grounding"): "grounding",
    ("GET", "/v1/audit/verify"): "audit",
    ("POST", "/v1/walls/preview"): "walls",
    ("GET", "/v1/walls/{wall_id}/exposure"): "walls",
    ("POST", "/v1/gates/citations"): "citations",
    ("POST", "/console/walls/preview"): "walls",
    # changes of the policy: PostgreSQL runs them one at a time, each waiter on a connection
    ("POST", "/v1/walls"): "policy",
    ("POST", "/v1/walls/{wall_id}/lift"): "policy",
    ("PUT", "/v1/people/{person_id}"): "policy",
    ("PUT", "/v1/groups/{source}/{group_id}"): "policy",
    ("PUT", "/v1/clients/{client_id}"): "policy",
    ("PUT", "/v1/matters/{matter_id}"): "policy",
    ("POST", "/v1/matrix/import"): "policy",
    ("POST", "/console/walls"): "policy",
    ("POST", "/console/walls/{wall_id}/lift"): "policy",
}


def test_every_heavy_route_takes_a_turn_before_its_connection(gate_client: GateClient) -> None:
    """The lane comes before the route's transaction: a call waiting for its turn must hold
    no pooled connection."""
    app = gate_client().app
    found = {}
    for route in iter_route_contexts(app.routes):  # type: ignore[attr-defined]
        for method in route.methods or ():
            if (method, route.path) not in HEAVY:
                continue
            dependant = route.original_route.dependant  # type: ignore[attr-defined]
            calls = [d.call for d in dependant.dependencies]
            lanes = [c.name for c in calls if isinstance(c, Lane)]
            assert len(lanes) == 1, (method, route.path, calls)
            names = [getattr(c, "__name__", "") for c in calls]
            if "_transaction" in names:
                assert names.index("_transaction") > calls.index(
                    next(c for c in calls if isinstance(c, Lane))
                ), (method, route.path)
            found[(method, route.path)] = lanes[0]
    assert found == HEAVY
