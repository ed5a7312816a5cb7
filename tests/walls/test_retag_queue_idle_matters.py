"""A wall over a large client does not keep an unrelated matter hidden behind its queue.

Every matter whose wall group changes is queued for its re-tag, and a queued matter is
hidden from every search until the worker clears its mark. A wall over a client of 20,000
matters (most of them without a document) queued 20,000 rows; the worker took one
transaction for each, oldest first (about 130 a second on the probe's machine), so a wall
issued a moment later on an unrelated one-document matter left that matter hidden from its
own team for two and a half minutes (an attack probe of 2026-12-07). The worker now clears
in one statement the marks of the matters it read that have nothing to move, and spends its
batches on the matters that do.

Deterministic: the worker's round is ``run_once`` with the worker's own bound on batches.
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.walls import repository
from app.walls.retag import clear_idle, run_once
from tests.conftest import Tokens
from tests.helpers import Firm, ok

TEXT = "Pleitnota over de dwangsom in het geschil over de Havenkwartier-loods."
QUERY = "pleitnota dwangsom Havenkwartier loods"
INSIDER, SCREENED = "alice@firm.nl", "bob@firm.nl"
IDLE_MATTERS = 300  # more than one round of the worker (50 batches) takes one at a time
WORKER_BATCHES = 50  # RetagWorker._loop's bound on one round


def test_a_late_matter_is_re_tagged_in_the_round_behind_a_large_clients_empty_matters(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    for person in (INSIDER, SCREENED):
        firm.person(person)
    firm.client_("C-BIG", "Groot Concern N.V.")
    firm.client_("C-1", "Helderglas B.V.")
    ok(
        client.post(
            "/v1/matrix/import",
            json={
                "matters": [
                    {"matter_id": f"BIG-{i}", "client_id": "C-BIG"} for i in range(IDLE_MATTERS)
                ]
            },
            headers=firm.h,
        )
    )
    firm.matter("M-1", "C-1", team=[INSIDER])
    firm.document("d-1", TEXT, client_id="C-1", matter_id="M-1")
    resources = client.app.state.resources  # type: ignore[attr-defined]
    run_once(resources.database, resources.settings.retag_batch_size)

    firm.wall(kind="exclusionary", protects={"clients": ["C-BIG"]}, screened=[SCREENED])
    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=[SCREENED])
    queue = ok(client.get("/v1/admin/retag", headers=firm.h))
    assert queue["pending_matters"] == IDLE_MATTERS + 1
    assert queue["items"][-1]["matter_id"] == "M-1"  # queued last, behind the client's
    assert firm.matters_seen(INSIDER, QUERY, mode="sparse") == set()  # hidden meanwhile

    progress = run_once(
        resources.database, resources.settings.retag_batch_size, max_batches=WORKER_BATCHES
    )

    assert ok(client.get("/v1/admin/retag", headers=firm.h))["pending_matters"] == 0
    assert progress.matters_done == IDLE_MATTERS + 1 and progress.chunks_moved == 1
    assert firm.matters_seen(INSIDER, QUERY, mode="sparse") == {"M-1"}
    assert firm.matters_seen(SCREENED, QUERY, mode="sparse") == set()


def test_a_mark_queued_again_after_the_read_is_not_cleared_with_the_read(
    client: TestClient, auth: Tokens
) -> None:
    """The one-statement clearing holds retag_done's conditions: a matter queued again
    (another target, a later policy version) after the runner read its row keeps its mark;
    its own read clears it."""
    firm = Firm(client, auth)
    for person in (INSIDER, SCREENED, "carol@firm.nl"):
        firm.person(person)
    firm.client_("C-BIG", "Groot Concern N.V.")
    for i in range(3):
        firm.matter(f"BIG-{i}", "C-BIG", team=[INSIDER])
    resources = client.app.state.resources  # type: ignore[attr-defined]
    database = resources.database
    run_once(database, resources.settings.retag_batch_size)

    firm.wall(kind="exclusionary", protects={"clients": ["C-BIG"]}, screened=[SCREENED])
    with database.transaction() as conn:
        read = repository.next_retags(conn)
    assert sorted(r.matter_id for r in read) == ["BIG-0", "BIG-1", "BIG-2"]
    firm.wall(kind="exclusionary", protects={"matters": ["BIG-1"]}, screened=["carol@firm.nl"])
    with database.transaction() as conn:
        again = {r.matter_id: r for r in repository.next_retags(conn)}
    assert again["BIG-1"].policy_version > next(
        r.policy_version for r in read if r.matter_id == "BIG-1"
    )

    assert clear_idle(database, read) == {"BIG-0", "BIG-2"}
    queue = ok(client.get("/v1/admin/retag", headers=firm.h))
    assert [item["matter_id"] for item in queue["items"]] == ["BIG-1"]
    run_once(database, resources.settings.retag_batch_size)
    assert ok(client.get("/v1/admin/retag", headers=firm.h))["pending_matters"] == 0
