"""An iManage world for connector tests: three people with their aliases, client C-1 with
matters M-1 and M-2, the fake iManage with its Sync API on, syncs through run_sync into the
real ingest pipeline, and the search API asked who finds a document."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from app.ingest.router import pipeline_for
from connectors.state import SyncStateStore
from connectors.sync import run_sync
from tests.conftest import Tokens
from tests.connectors.conftest import ImanageFactory
from tests.fakes.imanage import FakeIManage
from tests.helpers import Firm, retag, superuser_rows

PEOPLE = ("alice@firm.nl", "bob@firm.nl", "carol@firm.nl")
ALL = set(PEOPLE)


class World:
    def __init__(self, client: TestClient, auth: Tokens, db: Any, fake: FakeIManage,
                 imanage: ImanageFactory, **connector_kw: Any) -> None:
        fake.sync_api = True
        self.client, self.db, self.fake, self.imanage = client, db, fake, imanage
        self.connector_kw = connector_kw
        self.firm = Firm(client, auth)
        for person in PEOPLE:
            self.firm.person(person, aliases=[f"imanage:user:{person.split('@')[0]}"])
        self.firm.client_("C-1", "Acme B.V.")
        self.firm.matter("M-1", "C-1")
        self.firm.matter("M-2", "C-1")
        self.pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
        self.store = SyncStateStore(db.database)

    def sync(self, mode: str = "delta", *, ok: bool = True, **kw: Any) -> dict[str, Any]:
        connector = self.imanage(**self.connector_kw)
        report = run_sync("imanage", connector, self.pipeline, self.store, mode=mode,
                          started_by="svc", **kw)
        if ok:
            assert report["sync"]["failed"] is None, report["sync"]
        retag(self.client)
        return dict(report["sync"])

    def who(self, word: str, external_id: str) -> set[str]:
        found = set()
        for person in PEOPLE:
            results = self.firm.search(person, word, k=10, mode="sparse")["results"]
            if any(r["document"]["external_id"] == external_id for r in results):
                found.add(person)
        return found

    def downloads(self) -> int:
        return len(self.fake.calls(r"/download$"))

    def stored(self, external_id: str) -> Any:
        """(status, client_id, matter_id, source_acl_id, version), or None."""
        rows = superuser_rows(
            self.db,
            "SELECT status, client_id, matter_id, source_acl_id, version FROM documents "
            "WHERE source = 'imanage' AND external_id = %s",
            external_id,
        )
        return rows[0] if rows else None
