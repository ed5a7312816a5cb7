"""An export folder written by others while a run reads it (attack round of 2026-12-07,
third, noticed and left): a row's file that is a named pipe, or becomes one after a check by
name, and a metadata sidecar that is too large, or changes after the check that let the run
start. Opening a pipe for reading waits for a writer for ever: the run, its sync lock and its
job's lease stood still."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connectors.base import DocumentFailure, SourceDocument, SourcePathError
from connectors.folder.source import FolderSource
from tests.pipes import waited_on

ROW = {"client_id": "C-1", "matter_id": "M-1"}


def _pipe_after_check(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """``target`` becomes a named pipe right after a check of it by name (``is_file()``)."""
    is_file = Path.is_file

    def checked_then_swapped(path: Path) -> bool:
        found = is_file(path)
        if path == target and found:
            path.unlink()
            os.mkfifo(path)
        return found

    monkeypatch.setattr(Path, "is_file", checked_then_swapped)


def _listing(root: Path, fifo: Path) -> list[Any]:
    """The items of a whole load of ``root``, read on a thread; fails if it waits on ``fifo``."""
    items: list[Any] = []

    def load() -> None:
        source = FolderSource(root)
        items.extend(source.full(None))
        source.close()

    assert not waited_on(load, fifo), "the load waited on a named pipe"
    return items


def _export(root: Path, paths: dict[str, str]) -> Path:
    """A folder with ``a.txt`` and a sidecar naming ``paths`` (external id -> path)."""
    root.mkdir()
    (root / "a.txt").write_text("Memo over de huur.", encoding="utf-8")
    rows = [{**ROW, "external_id": ident, "path": path} for ident, path in paths.items()]
    (root / "metadata.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    return root


def test_a_named_pipe_or_a_folder_a_row_names_is_not_a_regular_file_not_missing(
    tmp_path: Path,
) -> None:
    """They were reported as "missing on disk": the wrong cause sends an operator looking
    for a file that is there."""
    root = _export(
        tmp_path / "export",
        {"R-1": "a.txt", "R-2": "pipe.txt", "R-3": "link.txt", "R-4": "sub", "R-5": "gone.txt"},
    )
    os.mkfifo(root / "pipe.txt")
    (root / "link.txt").symlink_to(root / "pipe.txt")  # a link to it, inside the folder
    (root / "sub").mkdir()
    items = _listing(root, root / "pipe.txt")
    read = [i.external_id for i in items if isinstance(i, SourceDocument)]
    failed = {i.external_id: i.reason for i in items if isinstance(i, DocumentFailure)}
    assert read == ["R-1"], items
    for ident, name in (("R-2", "pipe.txt"), ("R-3", "link.txt"), ("R-4", "sub")):
        assert failed[ident] == f"file {name!r}: not a regular file; not read", failed
    assert failed["R-5"] == "file 'gone.txt' is missing on disk", failed


def test_a_file_that_becomes_a_pipe_after_a_check_by_name_does_not_stop_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Someone writing into the export while it loads: the file was checked by name
    (``is_file()``), replaced by a pipe, then opened by name, and the open waited for ever.
    The swap here happens right after any such check; a read judged by the descriptor it
    opened has no such gap."""
    root = _export(tmp_path / "export", {"R-1": "a.txt", "R-2": "b.txt"})
    swapped = root / "b.txt"
    swapped.write_text("Memo over de pacht.", encoding="utf-8")
    _pipe_after_check(monkeypatch, swapped)
    items = _listing(root, swapped)
    assert [i.external_id for i in items] == ["R-1", "R-2"], items
    second = items[1]
    # the file read as it was, or the pipe named as such: never a wait
    assert isinstance(second, SourceDocument) or (
        second.reason == "file 'b.txt': not a regular file; not read"
    ), second


def test_a_sidecar_over_the_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was read whole into memory, twice (the count and the load), however large."""
    monkeypatch.setattr("connectors.folder.source.MAX_SIDECAR_BYTES", 200, raising=False)
    root = _export(tmp_path / "export", {f"R-{n}": "a.txt" for n in range(10)})
    assert (root / "metadata.jsonl").stat().st_size > 200
    for check in (FolderSource, FolderSource.check_path):
        with pytest.raises(SourcePathError, match=r"too large: \d+ bytes \(limit 200\)") as raised:
            check(root)
        assert raised.value.code == "sidecar_invalid"
        assert "split the export" in str(raised.value)


def test_a_sidecar_that_becomes_a_pipe_is_refused_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _export(tmp_path / "export", {"R-1": "a.txt"})
    sidecar = root / "metadata.jsonl"
    _pipe_after_check(monkeypatch, sidecar)
    outcome: list[BaseException | None] = []

    def start() -> None:
        try:
            FolderSource(root)
            outcome.append(None)
        except BaseException as exc:  # handed to the test's thread
            outcome.append(exc)

    assert not waited_on(start, sidecar), "the start waited on a named pipe"
    [error] = outcome
    assert isinstance(error, SourcePathError) and error.code == "sidecar_invalid", error
    assert "not a regular file" in str(error)


@pytest.fixture
def checked_csv(tmp_path: Path) -> Iterator[tuple[Path, FolderSource]]:
    root = tmp_path / "export"
    root.mkdir()
    (root / "a.txt").write_text("Memo over de huur.", encoding="utf-8")
    (root / "metadata.csv").write_text(
        "external_id,path,client_id,matter_id\nR-1,a.txt,C-1,M-1\n", encoding="utf-8"
    )
    source = FolderSource(root)
    yield root, source
    source.close()


def test_the_load_reads_the_sidecar_that_was_checked(
    checked_csv: tuple[Path, FolderSource],
) -> None:
    """The sidecar was checked (its header) when the source was made, then read again by
    name for the count and again for the load: a header rewritten in between to name
    matter_id twice was loaded unchecked, each row filed under the second matter (another
    wall group). Read once, the count and the load read what was checked."""
    root, source = checked_csv
    (root / "metadata.csv").write_text(
        "external_id,path,client_id,matter_id,matter_id\nR-1,a.txt,C-1,M-1,M-2\n"
        "R-2,a.txt,C-1,M-1,M-2\n",
        encoding="utf-8",
    )
    assert source.total() == 1
    [item] = list(source.full(None))
    assert isinstance(item, SourceDocument), item
    assert (item.external_id, item.matter_id) == ("R-1", "M-1")


def test_a_row_naming_a_loop_of_links_is_an_entry_and_the_rows_after_it_load(
    tmp_path: Path,
) -> None:
    """Path.resolve() raises RuntimeError for a loop (Python 3.11), which the load did not
    catch: the whole run failed and the rows after it were not read."""
    root = _export(tmp_path / "export", {"R-1": "loop.txt", "R-2": "a.txt"})
    (root / "loop.txt").symlink_to(root / "loop.txt")
    source = FolderSource(root)
    loop, read = list(source.full(None))
    source.close()
    assert isinstance(loop, DocumentFailure) and "cannot be read" in loop.reason, loop
    assert "loop" in loop.reason.lower(), loop
    assert isinstance(read, SourceDocument) and read.external_id == "R-2", read
