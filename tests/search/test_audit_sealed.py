"""A committed audit entry is sealed against the service role (migration 20261211_0063,
sql/functions/audit_sealed.v1.sql): it may append, but not add a result to a retrieval that
another transaction recorded, nor store an access set under an id its members do not hash
to. A check of 2026-12-06 did both with the service role's credentials: "who saw matter M"
named someone who never saw it, a later retrieval recorded planted members, and a NULL
member stopped verification with an error."""

from __future__ import annotations

import psycopg
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.audit.chain import RetrievedChunk, access_set_id, append_retrieval, verify_chain
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, audit_entry, ok

INSERT_RESULT = (
    "INSERT INTO audit_retrieval_results (retrieval_id, rank, sub_rank, chunk_id, matter_id, "
    "content_sha256, score) VALUES (%s, 99, 0, 'forged', 'M-SECRET', repeat('0', 64), 1)"
)


@pytest.fixture
def firm(client: TestClient, auth: Tokens, db: DbHandle) -> Firm:
    f = Firm(client, auth)
    f.person("alice@firm.nl")
    f.client_("C-1", "Acme")
    f.matter("M-1", "C-1", team=["alice@firm.nl"])
    f.document(
        "d-1",
        "Het octrooi is nietig wegens gebrek aan inventiviteit.",
        client_id="C-1",
        matter_id="M-1",
    )
    return f


def _verify(client: TestClient, auth: Tokens) -> dict[str, object]:
    return dict(ok(client.get("/v1/audit/verify", headers=auth("co@firm.nl", "compliance"))))


def _retrieval_ids(db: DbHandle) -> list[str]:
    with psycopg.connect(db.superuser_url) as conn:
        return [str(r[0]) for r in conn.execute("SELECT retrieval_id FROM audit_retrievals")]


def test_the_results_of_a_committed_retrieval_are_sealed(
    firm: Firm, client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    firm.search("alice@firm.nl", "octrooi inventiviteit")
    (retrieval_id,) = _retrieval_ids(db)
    with psycopg.connect(db.app_url) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="sealed"):
            conn.execute(INSERT_RESULT, (retrieval_id,))
        conn.rollback()
        # nor inside a savepoint (whose rows carry a subtransaction's id)
        with (
            pytest.raises(psycopg.errors.InsufficientPrivilege, match="sealed"),
            conn.transaction(),
        ):
            conn.execute(INSERT_RESULT, (retrieval_id,))
        conn.rollback()
    # appends go on (the search's own results pass the check), and the chain is whole
    assert firm.search("alice@firm.nl", "octrooi inventiviteit")
    assert len(_retrieval_ids(db)) == 2
    assert _verify(client, auth)["ok"] is True


def test_an_append_inside_a_savepoint_or_with_no_results_is_recorded(db: DbHandle) -> None:
    """The check finds the retrieval this transaction inserted by its transaction id, which
    inside a savepoint is a subtransaction's (a review: a check of the top-level id alone
    passed every other test and refused such an append)."""
    results = [RetrievedChunk(1, "c-1", "M-1", "0" * 64, 1.0)]
    for rows in (results, []):
        with db.database.transaction() as conn:
            conn.execute(text("SELECT 1"))  # the transaction's own statement first
            with conn.begin_nested():
                append_retrieval(conn, audit_entry(person_id="p@firm.nl"), rows)
    with db.database.transaction() as conn:
        assert verify_chain(conn, "retrievals").ok


@pytest.mark.parametrize(
    ("set_id", "members"),
    [
        # planted ahead of the search that would name this id, with other members
        (access_set_id(["wg_open"]), ["wg_open", "wg_secret"]),
        ("f" * 64, ["wg_open"]),
        (access_set_id(["wg_open"]), ["wg_open", None]),
    ],
)
def test_an_access_set_is_stored_only_under_its_content_address(
    db: DbHandle, set_id: str, members: list[str | None]
) -> None:
    with psycopg.connect(db.app_url) as conn:
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                "INSERT INTO audit_access_sets (set_id, members) VALUES (%s, %s)", (set_id, members)
            )
        conn.rollback()
        good = ["wg_open", "wg_b"]
        conn.execute(
            "INSERT INTO audit_access_sets (set_id, members) VALUES (%s, %s)",
            (access_set_id(good), good),
        )
        conn.rollback()


def test_sql_and_python_give_a_set_the_same_id(db: DbHandle) -> None:
    """The check recomputes the id in SQL: it must agree with app/audit/chain.py for every
    member a source can name, or a person's searches would fail their audit append."""
    cases: list[list[str]] = [
        [],
        ["wg_1"],
        ["b", "a", "b"],
        ['quo"te', "back\\slash", "tab\there", "new\nline", "bell\x07", "del\x7f"],
        ["imanage:user:JÖRG", "netdocuments:group:Équipe", "zh:用户", "emoji:🙂", "ls\u2028"],
        ["Z", "a", "É", "e", "~", "\u00e9", "\U0001f600", "\uffff"],
        ["x" * 500, "", " "],
    ]
    with psycopg.connect(db.app_url) as conn:
        for members in cases:
            row = conn.execute("SELECT ewall_access_set_id(%s)", (members,)).fetchone()
            assert row is not None and row[0] == access_set_id(members), members
