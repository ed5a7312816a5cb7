"""A wall change never waits for a document's write on its matter, and the write's chunks
still end in the matter's current group (document_write.settle_wall_group).

A write took a share lock on its matter's group row at its start and kept it through its
chunk inserts; a wall change on the matter, holding the policy row, waited for all of it, so
every other policy change of the firm waited too, and failed on the statement timeout behind
a large upload. The write now locks the row only for its last statements.

Deterministic: a table lock of the test's own holds one side at a statement it runs later
(the write at its report, after its chunks; the wall change at its re-tag mark, after it
moved the matter), seen waiting in pg_locks; the other side then either ends or waits for a
lock, and the test asserts which.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import psycopg
from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, lock_waiters, ok, retag, superuser_rows, table_locked
from tests.replication import wait_for

TEXT = "Pleitnota over de uitzonderlijke kwestie van het gehard spiegelglasoctrooi."
QUERY = "gehard spiegelglasoctrooi pleitnota"
DOC = "write-beside-wall"
INSIDER, SCREENED = "alice@firm.nl", "bob@firm.nl"

# the service's backends that wait for a lock while their transaction has written chunks
WAITING_AFTER_CHUNKS = """
SELECT w.pid, coalesce(CAST(CAST(w.relation AS regclass) AS text), w.locktype) FROM pg_locks w
JOIN pg_stat_activity a ON a.pid = w.pid
WHERE NOT w.granted AND a.application_name = 'ewall' AND a.datname = current_database()
  AND EXISTS (SELECT 1 FROM pg_locks h WHERE h.pid = w.pid AND h.granted
              AND h.locktype = 'relation' AND h.relation = CAST('chunks' AS regclass)
              AND h.mode = 'RowExclusiveLock')
"""


def _firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    for person in (INSIDER, SCREENED, "carol@firm.nl"):
        firm.person(person)
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=[INSIDER])
    firm.matter("M-2", "C-1")
    return firm


def _push(firm: Firm) -> Any:
    body = {"source": "api", "external_id": DOC, "text": TEXT, "client_id": "C-1",
            "matter_id": "M-1"}  # fmt: skip
    return firm.client.post("/v1/documents", json=body, headers=firm.h)


def _issue(firm: Firm) -> Any:
    body = {"kind": "exclusionary", "title": "screen", "reason": "lateral hire",
            "protects": {"matters": ["M-1"]}, "screened": [SCREENED]}  # fmt: skip
    return firm.client.post("/v1/walls", json=body, headers=firm.h)


def _other_matter_change(firm: Firm) -> Any:
    """A policy change on another matter: carol joins M-2's team."""
    body = {"client_id": "C-1", "title": "M-2", "team": ["carol@firm.nl"], "parties": []}
    return firm.client.put("/v1/matters/M-2", json=body, headers=firm.h)


def _ends_without_waiting(db: DbHandle, call: Future[Any], held: int, what: str) -> Any:
    """``call``'s response, once it ended; fails as soon as it waits for a lock instead
    (beside the ``held`` backends the test holds on purpose)."""
    wait_for(lambda: call.done() or len(lock_waiters(db)) > held, f"{what} to end or wait")
    assert call.done(), f"{what} waited for the document's write"
    return call.result()


def _write_waits_after_its_chunks(db: DbHandle, at: str) -> Callable[[], bool]:
    return lambda: any(r[1] == at for r in superuser_rows(db, WAITING_AFTER_CHUNKS))


def _chunk_groups(db: DbHandle) -> set[tuple[str, str]]:
    """(the chunk's group, its matter's group now) of every chunk of the document."""
    rows = superuser_rows(
        db,
        "SELECT DISTINCT c.wall_group_id, g.wall_group_id FROM chunks c "
        "JOIN matter_wall_groups g ON g.matter_id = c.matter_id WHERE c.external_id = %s",
        DOC,
    )
    return {(str(r[0]), str(r[1])) for r in rows}


def _found_by(firm: Firm, person: str) -> bool:
    return DOC in firm.documents_found(person, QUERY, k=20)


def _pending(firm: Firm) -> int:
    return int(ok(firm.client.get("/v1/admin/retag", headers=firm.h))["pending_matters"])


def _change_while_written(
    db: DbHandle, firm: Firm, change: Callable[[], Any], status: int, expect: str = "added"
) -> None:
    """``change`` (a wall change on M-1) and a policy change on another matter run while the
    document's write into M-1 is held after its chunks; both end without waiting, and a
    re-tag that runs before the write commits finds none of its chunks (and is done)."""
    with ThreadPoolExecutor(3) as pool:
        with table_locked(db, "ingest_run_events", "EXCLUSIVE"):
            write = pool.submit(_push, firm)
            wait_for(
                _write_waits_after_its_chunks(db, "ingest_run_events"),
                "the write to wait at its report, its chunks written",
            )
            answer = _ends_without_waiting(db, pool.submit(change), 1, "the wall change")
            assert answer.status_code == status, answer.text
            answer = _ends_without_waiting(
                db, pool.submit(_other_matter_change, firm), 1, "the other matter's change"
            )
            assert answer.status_code == 200, answer.text
            retag(firm.client)
            assert _pending(firm) == 0
            assert not write.done()
        assert ok(write.result())["status"] == expect


def test_a_wall_issued_while_a_document_is_written(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    firm = _firm(client, auth)
    _change_while_written(db, firm, lambda: _issue(firm), 201)

    groups = _chunk_groups(db)
    assert len(groups) == 1 and all(c == m != "open" for c, m in groups), groups
    retag(client)
    assert _pending(firm) == 0
    assert not _found_by(firm, SCREENED)
    assert _found_by(firm, INSIDER)  # there, not merely hidden


def test_a_wall_lifted_while_a_document_is_written(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    firm = _firm(client, auth)
    wall_id = firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=[SCREENED])
    retag(client)
    lift = {"reason": "screen no longer needed"}
    _change_while_written(
        db, firm, lambda: client.post(f"/v1/walls/{wall_id}/lift", json=lift, headers=firm.h), 200
    )

    assert _chunk_groups(db) == {("open", "open")}
    retag(client)
    assert _pending(firm) == 0
    assert _found_by(firm, SCREENED)  # the wall is gone: not hidden forever under its group
    assert _found_by(firm, INSIDER)


def test_a_document_written_while_a_wall_change_is_in_flight(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    """The reverse order: the wall change has moved the matter and not committed yet. The
    write does its work and waits only at its end, for the change; its chunks then carry
    the group the change gave."""
    firm = _firm(client, auth)
    with ThreadPoolExecutor(2) as pool:
        with table_locked(db, "retag_pending", "EXCLUSIVE"):
            wall = pool.submit(_issue, firm)
            wait_for(lambda: len(lock_waiters(db)) == 1, "the wall change to wait at its mark")
            write = pool.submit(_push, firm)
            wait_for(lambda: write.done() or len(lock_waiters(db)) == 2, "the write to wait")
            assert not write.done()
            waiting = superuser_rows(db, WAITING_AFTER_CHUNKS)
            assert len(waiting) == 1, "the write waited for the wall change before its chunks"
            assert not wall.done()
        assert wall.result().status_code == 201, wall.result().text
        assert ok(write.result())["status"] == "added"

    groups = _chunk_groups(db)
    assert len(groups) == 1 and all(c == m != "open" for c, m in groups), groups
    retag(client)
    assert _pending(firm) == 0
    assert not _found_by(firm, SCREENED)
    assert _found_by(firm, INSIDER)


RETAG_BY_HAND = "UPDATE chunks SET wall_group_id = %s WHERE matter_id = %s AND wall_group_id <> %s"
WAITING = (
    "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
    "WHERE NOT l.granted AND a.datname = current_database()"
)


def test_a_write_that_follows_a_lift_beside_the_matters_re_tag(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    """The write moves its chunks to the lifted matter's group while a re-tag batch moves
    the matter's other chunks there: each waits for a statistics row the other holds (the
    re-tag for the old group's, the write for the new group's). PostgreSQL breaks the
    deadlock by failing one; when that is the write, it is written again, not refused."""
    firm = _firm(client, auth)
    wall_id = firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=[SCREENED])
    firm.document("earlier", f"{TEXT} Eerdere versie.", client_id="C-1", matter_id="M-1")
    retag(client)
    lift = {"reason": "screen no longer needed"}
    with ThreadPoolExecutor(2) as pool, psycopg.connect(db.superuser_url) as retagger:
        # the re-tag never gives up first: the write is the one PostgreSQL fails
        retagger.execute("SET LOCAL deadlock_timeout = '10min'")
        with table_locked(db, "ingest_run_events", "EXCLUSIVE"):
            write = pool.submit(_push, firm)
            wait_for(
                _write_waits_after_its_chunks(db, "ingest_run_events"),
                "the write to wait at its report, its chunks written",
            )
            lifted = pool.submit(
                client.post, f"/v1/walls/{wall_id}/lift", json=lift, headers=firm.h
            )
            ok(_ends_without_waiting(db, lifted, 1, "the lift"))
            batch = pool.submit(retagger.execute, RETAG_BY_HAND, ("open", "M-1", "open"))
            wait_for(lambda: superuser_rows(db, WAITING) == [(2,)], "the re-tag to wait")
        batch.result()  # once the write's first try is rolled back
        retagger.commit()
        answer = write.result()
    assert answer.status_code == 200, answer.text
    assert _chunk_groups(db) == {("open", "open")}
    retag(client)
    assert _found_by(firm, SCREENED)


def test_a_document_refiled_into_a_matter_while_it_is_walled(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    """A stored document moved into M-1 (from quarantine, then from M-2) keeps its chunks:
    the write updates them, it inserts none. A wall issued on M-1 while the write is held
    after that update ends without waiting; the re-tag run meanwhile finds none of them in
    M-1 (committed, they are still elsewhere) and is done; the write's last statements then
    move them to M-1's new group. The screened lawyer never finds the document."""
    firm = _firm(client, auth)
    body = {"source": "api", "external_id": DOC, "text": TEXT}
    ok(firm.client.post("/v1/documents", json=body, headers=firm.h))  # quarantined
    for before in ("quarantine", "M-2"):
        _change_while_written(db, firm, lambda: _issue(firm), 201, expect="updated")
        groups = _chunk_groups(db)
        assert len(groups) == 1 and all(c == m != "open" for c, m in groups), (before, groups)
        retag(client)
        assert _pending(firm) == 0
        assert not _found_by(firm, SCREENED), before
        assert _found_by(firm, INSIDER), before
        # the next round: the document back in the open M-2, its walls lifted
        for wall in ok(client.get("/v1/walls", headers=firm.h))["items"]:
            if wall["lifted_at"] is None:
                firm.lift(wall["wall_id"])
        moved = {**body, "client_id": "C-1", "matter_id": "M-2"}
        ok(firm.client.post("/v1/documents", json=moved, headers=firm.h))
        retag(client)
        assert _found_by(firm, SCREENED)
