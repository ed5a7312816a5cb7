"""The audit chain detects what a database superuser could do around the guards."""

from __future__ import annotations

import threading
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.audit import chain
from app.audit.chain import verify_all
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, ok


@pytest.fixture
def audited(client: TestClient, auth: Tokens, db: DbHandle) -> Firm:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C-1", "Acme")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    firm.document(
        "d-1",
        "Het octrooi op de werkwijze is nietig wegens gebrek aan inventiviteit.",
        client_id="C-1",
        matter_id="M-1",
    )
    for i in range(6):
        firm.search("alice@firm.nl", f"octrooi inventiviteit {i}", k=3)
    return firm


def _tamper(db: DbHandle, *statements: str) -> None:
    """As superuser: the guard triggers are disabled first, as an attacker would (and a
    check constraint in the way is dropped by the attack's own first statement)."""
    with psycopg.connect(db.superuser_url, autocommit=True) as su:
        su.execute("ALTER TABLE audit_retrievals DISABLE TRIGGER ALL")
        su.execute("ALTER TABLE audit_retrieval_results DISABLE TRIGGER ALL")
        su.execute("ALTER TABLE audit_heads DISABLE TRIGGER ALL")
        su.execute("ALTER TABLE audit_access_sets DISABLE TRIGGER ALL")
        try:
            for statement in statements:
                su.execute(statement)
        finally:
            su.execute("ALTER TABLE audit_retrievals ENABLE TRIGGER ALL")
            su.execute("ALTER TABLE audit_retrieval_results ENABLE TRIGGER ALL")
            su.execute("ALTER TABLE audit_heads ENABLE TRIGGER ALL")
            su.execute("ALTER TABLE audit_access_sets ENABLE TRIGGER ALL")


def _verify(client: TestClient, auth: Tokens) -> dict[str, object]:
    return dict(ok(client.get("/v1/audit/verify", headers=auth("co@firm.nl", "compliance"))))


ATTACKS: dict[str, tuple[list[str], int]] = {
    "edited query": (["UPDATE audit_retrievals SET query = 'nothing to see' WHERE seq = 3"], 3),
    "edited result": (
        [
            "UPDATE audit_retrieval_results SET chunk_id = 'x' WHERE retrieval_id = "
            "(SELECT retrieval_id FROM audit_retrievals WHERE seq = 2) AND rank = 1"
        ],
        2,
    ),
    "removed result": (
        [
            "DELETE FROM audit_retrieval_results WHERE retrieval_id = "
            "(SELECT retrieval_id FROM audit_retrievals WHERE seq = 4) AND rank = 1"
        ],
        4,
    ),
    "altered query model": (["UPDATE audit_retrievals SET query_model = 'x' WHERE seq = 3"], 3),
    "deleted row": (["DELETE FROM audit_retrievals WHERE seq = 3"], 3),
    "deleted last row": (["DELETE FROM audit_retrievals WHERE seq = 6"], 6),
    "swapped rows": (
        [
            # (a superuser passes the check constraints: seq >= 1 holds at every step)
            "UPDATE audit_retrievals SET seq = 1000002 WHERE seq = 2",
            "UPDATE audit_retrievals SET seq = 2 WHERE seq = 3",
            "UPDATE audit_retrievals SET seq = 3 WHERE seq = 1000002",
        ],
        2,
    ),
    "inserted row": (
        [
            "INSERT INTO audit_retrievals SELECT gen_random_uuid(), 7, at, 'mallory@firm.nl', roles, "
            "purpose, query, mode, k, filters, allowed_wall_groups_set, source_principals_set, "
            "policy_version, model, prompt_version, strategy, took_ms, result_count, hash, "
            "repeat('a', 64) FROM audit_retrievals WHERE seq = 6"
        ],
        7,
    ),
    "altered access set": (
        [
            "ALTER TABLE audit_access_sets DROP CONSTRAINT ck_audit_access_sets_content_addressed",
            "UPDATE audit_access_sets SET members = members || '{wg_extra}'::text[] WHERE set_id = "
            "(SELECT allowed_wall_groups_set FROM audit_retrievals WHERE seq = 1)"
        ],
        1,
    ),
    "access set with a NULL member": (  # verification reported it with an error (a 500)
        [
            "ALTER TABLE audit_access_sets DROP CONSTRAINT ck_audit_access_sets_content_addressed",
            "UPDATE audit_access_sets SET members = members || NULL::text WHERE set_id = "
            "(SELECT allowed_wall_groups_set FROM audit_retrievals WHERE seq = 1)",
        ],
        1,
    ),
    "deleted access set": (  # the evidence of what the person was allowed (FK disabled)
        [
            "DELETE FROM audit_access_sets WHERE set_id = "
            "(SELECT allowed_wall_groups_set FROM audit_retrievals WHERE seq = 1)"
        ],
        1,
    ),
    "renumbered tail": (
        [
            "UPDATE audit_retrievals SET seq = seq + 1000000 WHERE seq >= 5",
            "UPDATE audit_retrievals SET seq = seq - 999999 WHERE seq > 1000000",
        ],
        5,
    ),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_chain_detects_superuser_tampering(
    audited: Firm, client: TestClient, auth: Tokens, db: DbHandle, attack: str
) -> None:
    assert _verify(client, auth)["ok"] is True
    statements, bad_seq = ATTACKS[attack]
    _tamper(db, *statements)
    report = _verify(client, auth)
    assert report["ok"] is False, attack
    assert report["first_bad_seq"] == bad_seq, report
    assert report["problem"]


def test_a_search_committed_while_verifying_is_no_tampering(
    audited: Firm, client: TestClient, auth: Tokens, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verification reads each chain's head, then its rows. A search that commits between
    the two must not look like rows removed from the end: both reads see one state."""
    read_head = chain._head
    committed: list[int] = []

    def head_then_a_search(conn: Any, name: str) -> Any:
        found = read_head(conn, name)
        if name == "retrievals" and not committed:
            searcher = threading.Thread(
                target=lambda: committed.append(len(audited.search("alice@firm.nl", "octrooi")))
            )
            searcher.start()
            searcher.join()
        return found

    monkeypatch.setattr(chain, "_head", head_then_a_search)
    report = _verify(client, auth)
    assert committed, "the search did not run"
    assert report["ok"] is True, report
    assert _verify(client, auth)["ok"] is True


def test_cli_verify_exit_code(audited: Firm, db: DbHandle) -> None:
    with db.database.transaction() as conn:
        assert verify_all(conn)["ok"] is True
    _tamper(db, "UPDATE audit_retrievals SET person_id = 'someone@firm.nl' WHERE seq = 1")
    with db.database.transaction() as conn:
        report = verify_all(conn)
    assert report["ok"] is False and report["first_bad_seq"] == 1


def test_audit_counts_match_searches_exactly(
    audited: Firm, client: TestClient, auth: Tokens
) -> None:
    comp = auth("co@firm.nl", "compliance")
    before = _verify(client, auth)["chains"]["retrievals"]["checked"]  # type: ignore[index]
    n = 7
    for i in range(n):
        audited.search("alice@firm.nl", f"vraag {i}", mode=["hybrid", "dense", "sparse"][i % 3])
    after = _verify(client, auth)["chains"]["retrievals"]["checked"]  # type: ignore[index]
    assert after == before + n
    items = ok(client.get("/v1/audit/retrievals", params={"limit": 500}, headers=comp))["items"]
    seqs = sorted(i["seq"] for i in items)
    assert seqs == list(range(1, len(seqs) + 1))  # gapless


def test_concurrent_searches_keep_the_chain_gapless(
    audited: Firm, client: TestClient, auth: Tokens
) -> None:
    import threading

    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            for j in range(3):
                audited.search("alice@firm.nl", f"octrooi {i} {j}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    report = _verify(client, auth)
    assert report["ok"] is True
    assert report["chains"]["retrievals"]["checked"] == 6 + 18  # type: ignore[index]


def test_sets_lost_in_a_restore_are_stored_again(
    audited: Firm, client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    """A fuzz restored the audit tables to an earlier state: the process still held the
    access sets of a later search as stored, left their members out, and every search of
    that person failed its foreign key (503) until the service restarted."""
    audited.person("bob@firm.nl", aliases=["imanage:user:BOB"])  # sets of his own
    audited.matter("M-1", "C-1", team=["alice@firm.nl", "bob@firm.nl"])
    audited.search("bob@firm.nl", "octrooi", k=3)  # bob's sets: committed, and remembered
    # the restore: the rows after seq 6, and the sets no remaining row names, are gone
    _tamper(
        db,
        "DELETE FROM audit_retrieval_results WHERE retrieval_id IN "
        "(SELECT retrieval_id FROM audit_retrievals WHERE seq > 6)",
        "DELETE FROM audit_retrievals WHERE seq > 6",
        "DELETE FROM audit_access_sets s WHERE NOT EXISTS (SELECT 1 FROM audit_retrievals r "
        "WHERE s.set_id IN (r.allowed_wall_groups_set, r.source_principals_set))",
        "UPDATE audit_heads SET seq = 6, hash = (SELECT hash FROM audit_retrievals "
        "WHERE seq = 6) WHERE chain = 'retrievals'",
    )
    search = {"query": "octrooi", "k": 3}
    first = client.post("/v1/search", json=search, headers=auth("bob@firm.nl", "lawyer"))
    assert first.status_code == 503, first.text  # the set the process thought stored
    again = client.post("/v1/search", json=search, headers=auth("bob@firm.nl", "lawyer"))
    assert again.status_code == 200, again.text
    assert _verify(client, auth)["ok"] is True


def test_a_deleted_chain_head_is_a_503_not_a_500(
    audited: Firm, client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    """A fuzz deleted the head row as a superuser: searches answered 500 internal."""
    _tamper(db, "DELETE FROM audit_heads WHERE chain = 'retrievals'")
    r = client.post(
        "/v1/search", json={"query": "octrooi", "k": 3}, headers=auth("alice@firm.nl", "lawyer")
    )
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "audit_unavailable"
