"""`ewall ingest confirm-sweep RUN`: app.cli.main with EWALL_* pointing at the test database
and at a fake iManage tenant whose last sync held its sweep."""

from __future__ import annotations

from typing import Any

import pytest

from app.cli import main
from app.ingest.pipeline import IngestPipeline
from connectors.state import SyncStateStore
from connectors.sync import run_sync
from tests.conftest import DbHandle
from tests.connectors.conftest import ImanageFactory, imanage_settings
from tests.fakes.imanage import FakeIManage


def test_confirm_sweep_from_the_command_line(
    imanage_cli_env: DbHandle,
    embedder: Any,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for n in (1, 2, 3):
        imanage_fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    pipeline = IngestPipeline(imanage_cli_env.database, embedder, imanage_settings(imanage_fake))
    store = SyncStateStore(imanage_cli_env.database)
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
