"""Two first searches of one session that name two matters: one binds it, the other is 409.

If both read the session unbound and both appended their audit rows, the session would be
bound to two matters and its results would mix them, which binding exists to prevent. A
search that finds its session unbound holds the session's lock from that read to its audit
row (a binding, once made, never changes); a replica search re-checks under that lock when
its row is appended on the primary, and runs again on the primary if the session was bound.

Deterministic: a table lock holds both searches at their audit append (reads pass it) until
both wait on a lock; then both go at once.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.audit.chain import Retrieval, append_retrieval
from app.search import replica as replicas
from app.walls.access import Access
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, audit_entry, lock_waiters, superuser_rows, table_locked
from tests.replication import wait_for

LAWYER = "ldekker@firm.nl"
TEXT = "De huurder betaalt de huur op de eerste dag van de maand, ook in dossier {}."


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    firm.person(LAWYER)
    firm.client_("C-1", "Acme B.V.")
    for matter in ("M-A", "M-B"):
        firm.matter(matter, "C-1", team=[LAWYER])
        firm.document(f"doc-{matter}", TEXT.format(matter), client_id="C-1", matter_id=matter)
    return firm


def test_two_first_searches_naming_two_matters_bind_the_session_once(
    client: TestClient, auth: Tokens, db: DbHandle, firm: Firm
) -> None:
    h = auth(LAWYER, "lawyer")
    answers: dict[str, Any] = {}

    def search(matter: str) -> None:
        body = {"query": "huur", "session_id": "s-1", "session_matter_id": matter}
        answers[matter] = client.post("/v1/search", json=body, headers=h)

    # EXCLUSIVE: no audit row is appended (reads of the audit pass)
    with table_locked(db, "audit_retrievals", "EXCLUSIVE"):
        searches = [threading.Thread(target=search, args=(m,)) for m in ("M-A", "M-B")]
        for s in searches:
            s.start()
        wait_for(lambda: len(lock_waiters(db)) == 2, "both searches to wait on a lock")
    for s in searches:
        s.join()

    statuses = sorted(a.status_code for a in answers.values())
    assert statuses == [200, 409], {m: a.text[:200] for m, a in answers.items()}
    loser = next(a for a in answers.values() if a.status_code == 409)
    assert loser.json()["error"]["code"] == "session_bound"
    winner = next(m for m, a in answers.items() if a.status_code == 200)
    matters = superuser_rows(
        db,
        "SELECT DISTINCT x.matter_id FROM audit_retrievals r "
        "JOIN audit_retrieval_results x USING (retrieval_id) WHERE r.session_id = 's-1'",
    )
    assert matters == [(winner,)]
    bindings = superuser_rows(
        db, "SELECT DISTINCT session_matter_id FROM audit_retrievals WHERE session_id = 's-1'"
    )
    assert bindings == [(winner,)]


def test_a_replica_search_is_fenced_when_its_session_was_bound_meanwhile(
    client: TestClient, db: DbHandle, firm: Firm
) -> None:
    """The replica path read the binding (none) before its search; another search of the
    session bound it before the replica's row reached the primary: no row is appended. With
    the binding it was narrowed by still in place, the same row is appended."""
    resources = client.app.state.resources  # type: ignore[attr-defined]
    with resources.database.transaction() as conn:
        append_retrieval(
            conn,
            audit_entry(person_id=LAWYER, session_id="s-2", session_matter_id="M-A",
                        session_scope="bound"),
            [],
        )  # fmt: skip
    version = superuser_rows(db, "SELECT version FROM policy_state WHERE id = 1")[0][0]
    access = Access(
        person_id=LAWYER, policy_version=version, at=datetime.now(UTC), wall_groups=("open",),
        principals=(), source_acl_ids=("public",), active=True,
    )  # fmt: skip

    def entry() -> Retrieval:
        return audit_entry(person_id=LAWYER, policy_version=version, result_count=0,
                           session_id="s-2", session_matter_id="M-A", session_scope="bound")  # fmt: skip

    count = "SELECT count(*) FROM audit_retrievals WHERE session_id = 's-2'"
    with pytest.raises(replicas.Fenced):
        replicas.fenced_append(
            db.database, entry(), [], access, session_id="s-2", bound_before=None
        )
    assert superuser_rows(db, count) == [(1,)]
    replicas.fenced_append(db.database, entry(), [], access, session_id="s-2", bound_before="M-A")
    assert superuser_rows(db, count) == [(2,)]
