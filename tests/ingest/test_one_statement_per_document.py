"""A document's chunks are written in one statement per kind of write: the statement
triggers on chunks (the document's postings, the corpus statistics) then run once per
document. Row by row, a document of 700 chunks rebuilt its postings 700 times (half an hour
in one transaction, holding the corpus statistics row that every other push needs)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import Firm, lock_waiters
from tests.replication import wait_for

COUNTER = """
CREATE TABLE IF NOT EXISTS test_chunk_statements (op text, n integer);
CREATE OR REPLACE FUNCTION test_count_chunk_statement() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO test_chunk_statements VALUES (TG_OP, 1);
    RETURN NULL;
END $$;
CREATE TRIGGER test_chunk_statements_after AFTER INSERT OR UPDATE ON chunks
    FOR EACH STATEMENT EXECUTE FUNCTION test_count_chunk_statement();
GRANT INSERT ON test_chunk_statements TO PUBLIC;
"""


@pytest.fixture
def statements(db: DbHandle) -> Iterator[psycopg.Connection]:
    with psycopg.connect(db.superuser_url, autocommit=True) as su:
        su.execute(COUNTER)
        try:
            yield su
        finally:
            su.execute("DROP TRIGGER test_chunk_statements_after ON chunks")
            su.execute("DROP TABLE test_chunk_statements")
            su.execute("DROP FUNCTION test_count_chunk_statement()")


def _counts(su: psycopg.Connection) -> dict[str, int]:
    rows = su.execute("SELECT op, count(*) FROM test_chunk_statements GROUP BY op").fetchall()
    return {str(op): int(n) for op, n in rows}


def _text(n: int, salt: str) -> str:
    return "\n\n".join(
        f"Overweging {i} ({salt}). De huurder is de huur over maand {i} verschuldigd gebleven; "
        "de verhoudingen tussen partijen zijn daardoor ernstig verstoord geraakt en de "
        "verhuurder vordert ontbinding van de overeenkomst en ontruiming van het gehuurde."
        for i in range(n)
    )


def test_a_document_is_written_in_one_statement(
    client: TestClient, auth: Tokens, statements: psycopg.Connection
) -> None:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C-1", "Verhuurder B.V.")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    pushed = firm.document("big", _text(60, "a"), client_id="C-1", matter_id="M-1")
    assert pushed["chunks"] > 5, pushed
    assert _counts(statements).get("INSERT") == 1, _counts(statements)
    # a new paragraph in front moves every kept chunk: one UPDATE for their positions
    statements.execute("DELETE FROM test_chunk_statements")
    again = firm.document(
        "big", "Inleiding.\n\n" + _text(60, "a"), client_id="C-1", matter_id="M-1"
    )
    assert again["added"] >= 1, again
    counts = _counts(statements)
    assert counts.get("INSERT") == 1 and counts.get("UPDATE", 0) <= 2, counts


def test_a_write_the_database_did_not_take_is_503_not_the_documents_fault(
    db: DbHandle, embedder: Any, auth: Tokens
) -> None:
    """The write waits on a row it needs (here the corpus statistics, held by another
    transaction) until its statement is cancelled: the push is a 503 to retry, not a 422
    that blames the document; once the row is free the same push goes through.

    The statement is cancelled once it waits for the row (pg_cancel_backend: the same
    query_canceled error as the statement timeout), not after the pool's 15 s timeout (a
    statement_timeout_ms in the app's settings does not reach the test's Database)."""
    settings = make_settings()
    with make_client(db, settings, embedder) as client:
        firm = Firm(client, auth)
        firm.person("alice@firm.nl")
        firm.client_("C-1", "Verhuurder B.V.")
        firm.matter("M-1", "C-1", team=["alice@firm.nl"])
        body = {"source": "api", "external_id": "held", "client_id": "C-1",
                "matter_id": "M-1", "text": _text(3, "b")}
        with (
            psycopg.connect(db.superuser_url) as holder,
            ThreadPoolExecutor(1) as pool,
        ):
            holder.execute("SELECT 1 FROM corpus_stats WHERE id = 1 FOR UPDATE")
            pending = pool.submit(client.post, "/v1/documents", json=body, headers=firm.h)
            wait_for(lambda: bool(lock_waiters(db)), "the push's write to wait for the row")
            for waiting in lock_waiters(db):  # what a statement timeout would end
                holder.execute("SELECT pg_cancel_backend(%s)", (waiting,))
            refused = pending.result()
            holder.rollback()
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "ingest_unavailable"
        again = client.post("/v1/documents", json=body, headers=firm.h)
        assert again.status_code == 200 and again.json()["status"] == "added", again.text
