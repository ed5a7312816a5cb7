"""Two pushes of the same new document at once: one inserts it, the other updates that row.

Two writers that both find no row would both insert, and the second would meet the first's
key: a race on our side, which must not come back as a 422 on the caller's `text`. A
document's first write takes a lock on its key, and the second writer reads the row the
first committed.

Deterministic: a table lock holds both writers at their first locking read of `documents`
(where each finds no row) until both wait there; then both go at once.
"""

from __future__ import annotations

import threading
from typing import Any

from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, lock_waiters, superuser_rows, table_locked
from tests.replication import wait_for


def test_the_same_new_document_pushed_twice_at_once(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    firm = Firm(client, auth)
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1")
    body = {
        "source": "imanage", "external_id": "RACE!1", "client_id": "C-1", "matter_id": "M-1",
        "text": "De huurder betaalt de huur op de eerste dag van de maand.",
    }  # fmt: skip
    answers: list[Any] = []

    def push() -> None:
        answers.append(client.post("/v1/documents", json=body, headers=firm.h))

    # EXCLUSIVE: no SELECT ... FOR UPDATE of documents passes (plain reads do)
    with table_locked(db, "documents", "EXCLUSIVE"):
        pushes = [threading.Thread(target=push) for _ in range(2)]
        for p in pushes:
            p.start()
        wait_for(lambda: len(lock_waiters(db)) == 2, "both pushes to wait at the table lock")
    for p in pushes:
        p.join()

    outcomes = sorted((a.status_code, a.json().get("added")) for a in answers)
    assert [s for s, _ in outcomes] == [200, 200], [a.text for a in answers]
    rows = superuser_rows(
        db, "SELECT count(*) FROM documents WHERE source = 'imanage' AND external_id = 'RACE!1'"
    )
    assert rows == [(1,)]
    errors = superuser_rows(db, "SELECT count(*) FROM ingest_run_events WHERE kind = 'error'")
    assert errors == [(0,)]
    # the document is whole: its chunks were written once
    chunks = superuser_rows(
        db,
        "SELECT count(*), count(DISTINCT chunk_id) FROM chunks c JOIN documents d "
        "USING (document_id) WHERE d.external_id = 'RACE!1'",
    )
    assert chunks[0][0] >= 1 and chunks[0][0] == chunks[0][1]
