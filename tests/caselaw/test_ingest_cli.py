"""`ewall ingest ...` end to end: app.cli.main with EWALL_* pointing at the test database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.settings import get_settings
from tests.caselaw.test_ingest import (
    PARKING,
    VOIDED,
    case_row,
    copy_records,
    document_row,
    pytestmark,
)
from tests.conftest import DbHandle
from tests.helpers import cli_environment, unreachable_database_url

__all__ = ["pytestmark"]


@pytest.fixture
def env(db: DbHandle, embedder: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[DbHandle]:
    """The CLI's settings come from the environment (get_settings is cached: cleared here)."""
    cli_environment(monkeypatch, db)
    for name in ("EWALL_IMANAGE_URL", "EWALL_NETDOCUMENTS_URL", "EWALL_RECHTSPRAAK_CROSSCHECK_URL"):
        monkeypatch.delenv(name, raising=False)
    # The command builds Embedder(settings); hand it the session's already loaded model (the
    # same real encoder) instead of loading a second copy.
    monkeypatch.setattr("app.embeddings.Embedder", lambda _settings: embedder)
    get_settings.cache_clear()
    yield db
    get_settings.cache_clear()


def test_ingest_rechtspraak_prints_the_delta_report(
    env: DbHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy_records(tmp_path / "records", [PARKING, VOIDED])
    (folder / "garbage.xml").write_bytes(b"\x00\xff not xml")

    assert main(["ingest", "rechtspraak", str(folder)]) == 0  # partial: errors are listed
    out = capsys.readouterr().out
    assert "(rechtspraak): partial" in out
    for expected in (
        "Counts",
        "case law: voided",
        "case law: held_pending",
        "Errors (1)",
        "garbage.xml",
        "Metadata-only records (1)",
        VOIDED,
        "Case-law state changes (1)",
        "Added (1)",
        PARKING,
    ):
        assert expected in out, expected

    row = case_row(env, VOIDED)
    assert row is not None and row["state"] == "voided"
    doc = document_row(env, PARKING)
    assert doc is not None and doc["n_chunks"] > 0

    # again: nothing new, a clean run
    assert main(["ingest", "rechtspraak", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "Added" not in out and "unchanged" in out


def test_bad_paths_give_one_line_and_exit_2(
    env: DbHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "record.xml"
    a_file.write_text("<x/>")
    twice = tmp_path / "twice"  # its rows would be filed under the second matter_id
    twice.mkdir()
    (twice / "a.txt").write_text("Memo")
    (twice / "metadata.csv").write_text(
        "external_id,path,client_id,matter_id,matter_id\nR-1,a.txt,C-1,M-1,M-2\n"
    )
    no_records = tmp_path / "no-records"  # it would load nothing and end "succeeded"
    no_records.mkdir()
    (no_records / "notes.txt").write_text("<x/>")
    for argv, message in (
        (["ingest", "rechtspraak", str(tmp_path / "missing")], "no such folder"),
        (["ingest", "rechtspraak", str(no_records)], "no Rechtspraak records (*.xml files)"),
        (["ingest", "rechtspraak", str(a_file)], "not a folder"),
        (["ingest", "folder", str(tmp_path / "missing")], "no such folder"),
        (["ingest", "folder", str(tmp_path)], "no metadata sidecar"),
        (["ingest", "folder", str(twice)], "'matter_id' more than once"),
        (["ingest", "imanage", "--mode", "full"], "EWALL_IMANAGE_URL"),
        (["ingest", "netdocuments"], "EWALL_NETDOCUMENTS_URL"),
    ):
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        assert captured.err.startswith("ewall: ") and message in captured.err, captured.err
        assert captured.err.count("\n") == 1 and "Traceback" not in captured.err


def test_an_unreachable_database_fails_with_exit_1(
    env: DbHandle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = unreachable_database_url()
    monkeypatch.setenv("EWALL_DATABASE_URL", url)
    monkeypatch.setenv("EWALL_MIGRATIONS_DATABASE_URL", url)
    get_settings.cache_clear()
    folder = copy_records(tmp_path / "records", [VOIDED])
    assert main(["ingest", "rechtspraak", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "ewall: ingest rechtspraak failed: OperationalError" in err
    assert "Traceback" not in err
