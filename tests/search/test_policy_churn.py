"""A search answers even while policy changes keep landing between its resolution and its
statement.

Each attempt resolves access, then runs the statement, which returns nothing when the policy
version moved in between. Under steady churn every attempt could see a newer version; the
last attempt holds the version FOR SHARE, so a change waits for that one search.

Deterministic: a real policy change (another connection, committed) lands right before each
attempt's statement, as long as one can (NOWAIT: a change the search holds back is skipped
and counted, never waited for in this thread).
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.search import service
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, ok, retag

LAWYER = "alice@firm.nl"


def test_the_last_attempt_holds_the_policy_version(
    client: TestClient, auth: Tokens, db: DbHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    firm = Firm(client, auth)
    firm.person(LAWYER)
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=[LAWYER])
    firm.document("d1", "De huurder betaalt de huur.", client_id="C-1", matter_id="M-1")
    retag(client)
    changes = {"landed": 0, "held_back": 0}
    execute = service._execute

    def policy_change_first(*args: Any, **kwargs: Any) -> Any:
        with psycopg.connect(db.superuser_url, autocommit=False) as conn:
            try:
                conn.execute("SELECT 1 FROM policy_state WHERE id = 1 FOR UPDATE NOWAIT")
            except psycopg.errors.LockNotAvailable:
                changes["held_back"] += 1
            else:
                conn.execute("UPDATE policy_state SET version = version + 1 WHERE id = 1")
                conn.commit()
                changes["landed"] += 1
        return execute(*args, **kwargs)

    monkeypatch.setattr(service, "_execute", policy_change_first)
    r = client.post("/v1/search", json={"query": "huur"}, headers=auth(LAWYER, "lawyer"))
    body = ok(r)
    assert [h["chunk_id"].split(":")[1] for h in body["results"]] == ["d1"]
    assert changes == {"landed": service.MAX_POLICY_RETRIES - 1, "held_back": 1}
    # the answer names the version it was resolved and run at: the last one
    (version,) = psycopg.connect(db.superuser_url).execute(
        "SELECT version FROM policy_state WHERE id = 1"
    ).fetchone() or (None,)
    assert body["policy_version"] == version
