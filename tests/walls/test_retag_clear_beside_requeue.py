"""The worker's one-statement clearing of idle matters never deadlocks with a wall change.

``clear_idle`` deletes the marks of up to 100 matters in one statement, in the order the
queue was read (oldest first), while a wall change re-queues its matters in id order
(``groups.recompute``). A DELETE that had removed the older mark of M-B and then waited
for M-A, whose row a wall change had just re-queued, held M-B while the wall change came to
M-B: PostgreSQL failed one of the two to break the cycle (the wall change answered 503, or
the worker's round failed). The clearing now skips a mark that a change holds: that matter
stays hidden and its batch clears it later, after the change.

Deterministic: the wall change is two statements on a connection of its own (M-A, then
M-B), the clearing runs between them, and the test waits on the server's lock table.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from fastapi.testclient import TestClient

from app.walls import repository
from app.walls.retag import clear_idle
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, lock_waiters, superuser_rows
from tests.replication import wait_for

SCREENED = "bob@firm.nl"


def test_clearing_idle_marks_beside_a_wall_change_that_requeues_them(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    firm = Firm(client, auth)
    firm.person(SCREENED)
    firm.client_("C-1", "Acme B.V.")
    for matter in ("M-A", "M-B"):
        firm.matter(matter, "C-1")
    # M-B queued before M-A: the runner reads (and the DELETE meets) M-B first
    for matter in ("M-B", "M-A"):
        firm.wall(kind="exclusionary", protects={"matters": [matter]}, screened=[SCREENED])
    database = db.database
    with database.transaction() as conn:
        rows = repository.next_retags(conn)
    assert [r.matter_id for r in rows] == ["M-B", "M-A"]
    target = {r.matter_id: r.target_wall_group_id for r in rows}
    requeued = max(r.policy_version for r in rows) + 1

    with ThreadPoolExecutor(1) as pool, database.transaction() as change:
        repository.queue_retag(change, ["M-A"], [target["M-A"]], requeued)
        clearing = pool.submit(clear_idle, database, rows)
        wait_for(lambda: clearing.done() or bool(lock_waiters(db)), "the clearing to end or wait")
        repository.queue_retag(change, ["M-B"], [target["M-B"]], requeued)
    cleared = clearing.result()

    # M-A, held by the change, is skipped; M-B was idle as read, and is queued again since
    assert cleared == {"M-B"}
    pending = superuser_rows(
        db, "SELECT matter_id, policy_version FROM retag_pending ORDER BY matter_id"
    )
    assert pending == [("M-A", requeued), ("M-B", requeued)]
