"""`ewall ingest confirm-sweep RUN`: app.cli.main with EWALL_* pointing at the test database
and at a fake iManage tenant whose last sync held its sweep."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.cli import main
from app.ingest.pipeline import IngestPipeline
from app.settings import get_settings
from connectors.state import SyncStateStore
from connectors.sync import run_sync
from tests.conftest import DbHandle
from tests.connectors.conftest import ImanageFactory, imanage_settings
from tests.fakes.imanage import FakeIManage


@pytest.fixture
def env(
    db: DbHandle, embedder: Any, imanage_fake: FakeIManage, monkeypatch: pytest.MonkeyPatch
) -> Iterator[DbHandle]:
    monkeypatch.setenv("EWALL_DATABASE_URL", db.app_url)
    monkeypatch.setenv("EWALL_MIGRATIONS_DATABASE_URL", db.superuser_url)
    monkeypatch.setenv("EWALL_LOG_JSON", "false")
    monkeypatch.setenv("EWALL_LOG_LEVEL", "WARNING")
    monkeypatch.setenv("EWALL_IMANAGE_URL", imanage_fake.url)
    for name, value in imanage_fake.settings().items():
        monkeypatch.setenv(f"EWALL_{name.upper()}", value)
    monkeypatch.setattr("app.embeddings.Embedder", lambda _settings: embedder)
    get_settings.cache_clear()
    yield db
    get_settings.cache_clear()


def test_confirm_sweep_from_the_command_line(
    env: DbHandle,
    embedder: Any,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for n in (1, 2, 3):
        imanage_fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    pipeline = IngestPipeline(env.database, embedder, imanage_settings(imanage_fake))
    store = SyncStateStore(env.database)
    run_sync("imanage", imanage(), pipeline, store, mode="full", started_by="t")
    imanage_fake.trash("ACTIVE!3.1")
    held = run_sync("imanage", imanage(), pipeline, store, mode="full", started_by="t")
    assert held["sync"]["sweep"]["held"]["ids"] == ["ACTIVE!3"]
    assert "ACTIVE!3" in pipeline.known_external_ids("imanage")
    capsys.readouterr()

    assert main(["ingest", "confirm-sweep", "not-a-run"]) == 2
    assert "not a run id" in capsys.readouterr().err
    assert main(["ingest", "confirm-sweep", "00000000-0000-0000-0000-000000000000"]) == 2
    assert "no ingest run" in capsys.readouterr().err

    assert main(["ingest", "confirm-sweep", held["run_id"]]) == 0
    out = capsys.readouterr().out
    assert "ACTIVE!3" in out
    assert pipeline.known_external_ids("imanage") == {"ACTIVE!1", "ACTIVE!2"}
    assert main(["ingest", "confirm-sweep", held["run_id"]]) == 2  # nothing held any more
    assert "no sweep of run" in capsys.readouterr().err
