"""A re-tag batch moves a matter's chunks only to the group the matter is pending for now.

A runner reads the queue once (``next_retags``) and then works through the rows it read,
batch after batch. Two runners (the worker of each API host, a hand-run ``run_once``) can
hold different rows for one matter: the first read (M-1 -> open) after a lift; a new wall
then moved M-1 to another group and the second runner re-tagged it there and cleared the
mark. The first runner's batch for its old row then moved every chunk of M-1 back to the
open group, with no mark left to hide them: the screened lawyer found the matter's
document, and nothing would ever move it back.

Deterministic: the first runner is held inside its batch lock, its rows read, by its own
``keep_going`` callback (an event, no sleep) while the wall is issued and the second runner
drains the queue.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from fastapi.testclient import TestClient

from app.walls.retag import run_once
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, ok, retag, superuser_rows

TEXT = "Memorie van grieven over het gelaagde veiligheidsglas van de Noorderhaven."
QUERY = "memorie grieven gelaagde veiligheidsglas Noorderhaven"
INSIDER, SCREENED = "alice@firm.nl", "bob@firm.nl"
GUARD_S = 120  # against a hang only


def _groups(db: DbHandle) -> set[tuple[str, str]]:
    """(a chunk's group, its matter's group now) of every chunk of M-1."""
    rows = superuser_rows(
        db,
        "SELECT DISTINCT c.wall_group_id, g.wall_group_id FROM chunks c "
        "JOIN matter_wall_groups g ON g.matter_id = c.matter_id WHERE c.matter_id = 'M-1'",
    )
    return {(str(r[0]), str(r[1])) for r in rows}


def test_a_runner_holding_a_stale_queue_row_moves_nothing_back(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    firm = Firm(client, auth)
    for person in (INSIDER, SCREENED):
        firm.person(person)
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=[INSIDER])
    firm.document("d-1", TEXT, client_id="C-1", matter_id="M-1")
    screen = {"kind": "exclusionary", "protects": {"matters": ["M-1"]}, "screened": [SCREENED]}
    first = firm.wall(**screen)
    retag(client)
    firm.lift(first)  # M-1 pending for the open group

    has_rows, go = threading.Event(), threading.Event()
    calls = 0

    def keep_going() -> bool:
        nonlocal calls
        calls += 1
        if calls == 2:  # the first batch's check: the rows are read, the batch not begun
            has_rows.set()
            assert go.wait(GUARD_S)
        return True

    resources = client.app.state.resources  # type: ignore[attr-defined]
    with ThreadPoolExecutor(1) as pool:
        stale = pool.submit(
            run_once, resources.database, resources.settings.retag_batch_size, None, keep_going
        )
        assert has_rows.wait(GUARD_S)
        firm.wall(**screen)  # a second screen: M-1 pending for the new wall's group
        retag(client)  # another runner moves M-1 there and clears the mark
        assert ok(client.get("/v1/admin/retag", headers=firm.h))["pending_matters"] == 0
        go.set()
        stale.result()

    groups = _groups(db)
    assert len(groups) == 1 and all(c == m != "open" for c, m in groups), groups
    assert "d-1" not in firm.documents_found(SCREENED, QUERY, k=20)
    assert "d-1" in firm.documents_found(INSIDER, QUERY, k=20)
