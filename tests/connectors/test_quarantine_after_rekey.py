"""A document quarantined because its matter was stored decomposed is filed under the matter
once `ewall ids normalize` has re-keyed it, as it is once a new matter is made: the next
full crawl reads it again, since the matrix can place it now (connectors/full_read.py).

The matrix names a matter stored before ids were read in NFC as "M-E" + U+0301 ...; a
document read since is placed in NFC and finds no such matter: quarantined. Nothing files a
quarantined document but a read of it (a PUT of its matter does not either). A source that
writes the id decomposed itself (as the firm's old version did) listed it so: the crawl
asked the matrix about that spelling, not the NFC one the placement uses, and after the
re-key found no matter under it, so it held the document as listed and never read it again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.ingest.router import pipeline_for
from app.matrix import rekey
from connectors.state import SyncStateStore
from connectors.sync import run_sync
from tests.conftest import DbHandle, Tokens
from tests.connectors.conftest import ImanageFactory
from tests.fakes.imanage import FakeIManage
from tests.helpers import Firm, superuser_rows
from tests.walls.test_id_rekey import MATTER, nfd, store_decomposed

Sync = Callable[[], dict[str, Any]]


@pytest.fixture
def imanage_sync(client: TestClient, db: DbHandle, imanage: ImanageFactory) -> Sync:
    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    store = SyncStateStore(db.database)

    def sync() -> dict[str, Any]:
        report = run_sync("imanage", imanage(), pipeline, store, started_by="svc",
                          mode="full", full_reads="changed", sweep_max_fraction=1.0)
        assert report["sync"]["failed"] is None, report["sync"]
        return dict(report)

    return sync


def _stored(db: DbHandle) -> tuple[Any, ...]:
    rows = superuser_rows(db, "SELECT matter_id, status FROM documents "
                              "WHERE source = 'imanage' AND external_id = 'ACTIVE!1'")
    return rows[0]


def _downloaded(fake: FakeIManage, since: int) -> bool:
    return any(r.path.endswith("/download") for r in fake.requests[since:])


@pytest.mark.parametrize("listed", ["nfc", "nfd"])
def test_a_document_quarantined_for_a_decomposed_matter_is_filed_after_normalize(
    client: TestClient, auth: Tokens, db: DbHandle, imanage_fake: FakeIManage,
    imanage_sync: Sync, listed: str,
) -> None:
    firm = Firm(client, auth)
    firm.client_("C-1", "Acme B.V.")
    firm.matter(MATTER, "C-1")
    store_decomposed(db, MATTER)  # as a version that kept ids as sent stored it
    matter = MATTER if listed == "nfc" else nfd(MATTER)
    imanage_fake.add_document("ACTIVE", 1, custom1="C-1", custom2=matter,
                              content=b"Memo over de huurovereenkomst van het pand.")
    imanage_sync()
    assert _stored(db) == (None, "quarantined")  # placed in NFC: no such matter yet

    with db.database.transaction() as conn:
        report = rekey.normalize(conn, actor="test")
    assert [s.nfc for s in report.rekeyed] == [MATTER]
    assert _stored(db) == (None, "quarantined")  # normalize files no document, as a PUT

    before = len(imanage_fake.requests)
    imanage_sync()
    assert _downloaded(imanage_fake, before)
    assert _stored(db) == (MATTER, "active")
    before = len(imanage_fake.requests)
    assert imanage_sync()["sync"]["full_read"]["unread"] == 1  # held as listed from now on
    assert not _downloaded(imanage_fake, before)
