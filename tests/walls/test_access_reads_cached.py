"""Access explanations and conflict checks read the cached matrix, not the whole matrix on a
pooled connection per call (AccessResolver.latest_matrix).

Each GET /v1/people/{id}/access and GET /v1/conflicts read every client, matter, party and
team member on a connection of the service's pool: an officer's burst of checks held every
pooled connection for as long as those reads took, and searches waited for the pool. Here
the matter_parties table is locked, so any call that reads the matrix waits: none may."""

from __future__ import annotations

import threading

from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens
from tests.gates.test_limits import wait_for
from tests.helpers import table_locked

CALLS = 20  # more than the pool's connections


def test_access_checks_answer_from_the_cached_matrix(
    client: TestClient, db: DbHandle, auth: Tokens
) -> None:
    admin, officer = auth("admin@firm.nl", "admin"), auth("cp@firm.nl", "conflicts")
    assert client.put("/v1/people/alice@firm.nl", json={"name": "Alice"}, headers=admin).is_success
    assert client.put("/v1/clients/C-1", json={"name": "Acme"}, headers=admin).is_success
    matter = {"client_id": "C-1", "title": "Acme v Beta",
              "parties": [{"name": "Beta B.V.", "role": "adverse"}], "team": []}  # fmt: skip
    assert client.put("/v1/matters/M-1", json=matter, headers=admin).is_success
    access = "/v1/people/alice@firm.nl/access?matter_id=M-1"
    first = client.get(access, headers=officer)  # loads the matrix once
    assert first.status_code == 200 and first.json()["allowed"] is True

    answers: list[int] = []
    lock = threading.Lock()

    def check(path: str) -> None:
        r = client.get(path, headers=officer)
        with lock:
            answers.append(r.status_code)

    with table_locked(db, "matter_parties", "ACCESS EXCLUSIVE"):
        paths = [access if i % 2 else "/v1/conflicts?name=Beta" for i in range(CALLS)]
        for path in paths:
            threading.Thread(target=check, args=(path,), daemon=True).start()
        wait_for(lambda: len(answers) == CALLS, "the checks, with the matrix unreadable")
        searched = client.post(
            "/v1/search", json={"query": "werkgever"}, headers=auth("alice@firm.nl", "lawyer")
        )
        assert searched.status_code == 200
    assert answers == [200] * CALLS

    # a change is in the next answer: the cache is keyed by the matrix's stamp
    wall = {"kind": "exclusionary", "title": "Screen", "reason": "Previously adverse",
            "protects": {"matters": ["M-1"]}, "screened": ["alice@firm.nl"]}  # fmt: skip
    assert client.post("/v1/walls", json=wall, headers=officer).status_code == 201
    after = client.get(access, headers=officer)
    assert after.status_code == 200 and after.json()["allowed"] is False
    hits = client.get("/v1/conflicts?name=Beta", headers=officer).json()["matches"]
    assert any(h.get("matter_id") == "M-1" for h in hits), hits
