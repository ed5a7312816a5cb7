"""A record folder holding a named pipe: the run reports it and goes on (attack round of
2026-12-07, third). os.walk lists a FIFO as a file, and opening one for reading waits for a
writer for ever: a pipe called ``x.xml`` in the folder hung the whole case-law run, with its
source's sync lock and its job's lease held."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from app.caselaw.ingest import RechtspraakSource
from connectors.base import DocumentFailure, SourceDocument
from tests.caselaw.test_ingest import SMALL, corpus_file
from tests.pipes import waited_on


def test_a_named_pipe_among_the_records_is_reported_not_waited_on(
    settings: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "records"
    folder.mkdir()
    shutil.copy(corpus_file(SMALL), folder / "inside.xml")
    fifo = folder / "pipe.xml"
    os.mkfifo(fifo)
    (folder / "link.xml").symlink_to(fifo)  # a link to it, inside the folder
    pipeline: Any = SimpleNamespace(settings=settings)
    items: list[Any] = []

    def listing() -> None:
        items.extend(RechtspraakSource(folder, pipeline).full(None))

    assert not waited_on(listing, fifo), "the listing waited on a named pipe"
    read = [i for i in items if isinstance(i, SourceDocument)]
    failed = {
        i.details["file"]: i.reason for i in items if isinstance(i, DocumentFailure) and i.details
    }
    assert len(read) == 1, items
    for name in ("pipe.xml", "link.xml"):
        assert failed[name] == f"{name}: not a regular file; not read", failed
