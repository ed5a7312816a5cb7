"""A write whose COMMIT PostgreSQL fails for a concurrent transaction (a serialization
failure at commit) is run again whole, and its answer stands only once a try committed
(app/db/engine.py ``Database.retried``, the only form since 2026-12-07).

The failure is real PostgreSQL's, made deterministic: a deferred constraint trigger on
``documents`` raises SQLSTATE 40001 at the first COMMIT that wrote a document (a sequence,
which no rollback undoes, counts the commits).

The form it replaces, ``for attempt in database.attempts(n): with attempt as conn:``, could
not tell a block left by ``return`` from one run to its end: a lost race at that COMMIT was
taken for a try to make again, the loop was never resumed, and the caller's return value
stood for nothing written. The document write returned from inside its block (a push that
a later one superseded, which writes nothing, so no answer was wrong there); it now returns
from ``retried``.
"""

from __future__ import annotations

import psycopg
import pytest
from fastapi.testclient import TestClient
from psycopg import sql
from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from app.db.engine import Database
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, superuser_rows

FAIL_FIRST_COMMIT = (
    "CREATE SEQUENCE commit_tries",
    "GRANT USAGE ON SEQUENCE commit_tries TO PUBLIC",
    "CREATE OR REPLACE FUNCTION fail_first_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "IF nextval('commit_tries') = 1 THEN RAISE EXCEPTION 'forced at commit' "
    "USING ERRCODE = '40001'; END IF; RETURN NULL; END $$",
    "CREATE TABLE commit_probe (v integer)",
    "GRANT INSERT, SELECT ON commit_probe TO PUBLIC",
)
TRIGGER = (
    "CREATE CONSTRAINT TRIGGER fail_first_commit AFTER INSERT OR UPDATE ON {} "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail_first_commit()"
)


@pytest.fixture
def first_commit_fails(db: DbHandle) -> None:
    """The first COMMIT that wrote a document or a commit_probe row fails with 40001."""
    with psycopg.connect(db.superuser_url, autocommit=True) as conn:
        for statement in FAIL_FIRST_COMMIT:
            conn.execute(statement)
        for table in ("documents", "commit_probe"):
            conn.execute(sql.SQL(TRIGGER).format(sql.Identifier(table)))


def test_a_commit_lost_to_a_race_is_written_again(
    first_commit_fails: None, client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    firm = Firm(client, auth)
    firm.client_("C-1")
    firm.matter("M-1", "C-1")
    pushed = firm.document(
        "d-1", "De huurder vordert ontbinding.", client_id="C-1", matter_id="M-1"
    )
    assert pushed["quarantined"] is False and pushed["added"] >= 1, pushed
    # the first COMMIT failed (the trigger ran at it), the second wrote the document once
    assert superuser_rows(db, "SELECT last_value FROM commit_tries") == [(2,)]
    stored = superuser_rows(db, "SELECT document_id FROM documents WHERE external_id = 'd-1'")
    assert [r[0] for r in stored] == [pushed["document_id"]]
    events = superuser_rows(
        db, "SELECT kind FROM ingest_run_events WHERE external_id = 'd-1' ORDER BY 1"
    )
    assert events == [("added",)], events  # reported for the committed try only


def test_retried_returns_a_result_only_once_committed(
    first_commit_fails: None, db: DbHandle
) -> None:
    tries: list[int] = []

    def work(conn: Connection) -> str:
        tries.append(len(tries) + 1)
        conn.execute(text("INSERT INTO commit_probe (v) VALUES (:v)"), {"v": len(tries)})
        return f"try {len(tries)}"  # returned from inside the transaction

    assert db.database.retried(work, 3) == "try 2"
    assert superuser_rows(db, "SELECT v FROM commit_probe") == [(2,)]
    # every COMMIT lost: the last try's error, nothing written, no answer
    with psycopg.connect(db.superuser_url, autocommit=True) as conn:
        conn.execute(FAIL_FIRST_COMMIT[2].replace("nextval('commit_tries') = 1", "true"))
    with pytest.raises(DBAPIError) as failed:
        db.database.retried(work, 2)
    assert isinstance(failed.value.orig, psycopg.errors.SerializationFailure)
    assert superuser_rows(db, "SELECT v FROM commit_probe") == [(2,)]


def test_the_form_that_kept_a_return_value_for_nothing_written_is_gone() -> None:
    """``attempts()`` handed out ``with`` blocks that a ``return`` could leave with its COMMIT
    lost (checked on the old code: ``return "written"`` from the block, the COMMIT failed with
    40001, the caller got "written" and commit_probe stayed empty)."""
    assert not hasattr(Database, "attempts")
