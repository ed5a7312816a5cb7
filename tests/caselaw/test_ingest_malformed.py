"""Every malformed record of the corpus ends as a correct recovery or a clean report entry,
and so do hand-made broken inputs; none of them crashes the run."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.caselaw.cases import confirm_case
from app.caselaw.ingest import ingest_rechtspraak_folder as ingest
from app.ingest.pipeline import IngestPipeline
from tests import known_vectors
from tests.caselaw.test_ingest import (
    CORPUS,
    SMALL,
    case_row,
    corpus_file,
    document_row,
    entries,
    pytestmark,
)
from tests.conftest import DbHandle

__all__ = ["pytestmark"]

MALFORMED = sorted((CORPUS / "malformed").glob("*.xml"))


def ecli_of(path: Path) -> str:
    """ECLI.NL.CBB.1998.AA3411.xml / ECLI_NL_RBMNE_2016_1780.xml -> the ECLI."""
    return ":".join(re.split(r"[._]", path.stem))


BROKEN: dict[str, tuple[bytes, str]] = {
    "empty.xml": (b"", "empty file"),
    "whitespace.xml": (b"  \n\t\n", "empty file"),
    "garbage.xml": (b"\x00\xff\xfe this is not xml at all", "not well-formed XML"),
    "not-a-record.xml": (
        b"<?xml version='1.0'?><foo><bar/></foo>",
        "not a Rechtspraak open-data record",
    ),
    "no-ecli.xml": (
        b"<open-rechtspraak><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'"
        b" xmlns:dcterms='http://purl.org/dc/terms/'><rdf:Description>"
        b"<dcterms:identifier>12345</dcterms:identifier></rdf:Description></rdf:RDF>"
        b"</open-rechtspraak>",
        "no valid ECLI",
    ),
}


@pytest.mark.slow  # ingests 25 real decisions (their vectors: tests/known_vectors.py)
def test_every_malformed_file_is_recovered_or_reported(
    db: DbHandle, settings: Any, embedder: Any, tmp_path: Path
) -> None:
    assert len(MALFORMED) == 25
    folder = known_vectors.stage_malformed(tmp_path / "records")
    for name, (data, _) in BROKEN.items():
        (folder / name).write_bytes(data)
    # cut off mid-record: only a lenient parser reads it, so its status cannot be trusted
    small = corpus_file(SMALL).read_bytes()
    (folder / "truncated.xml").write_bytes(small[: len(small) // 2])
    # a folder named like a record is walked, not read as one
    (folder / "unreadable.xml").mkdir()
    (folder / "unreadable.xml" / "inner.txt").write_text("a folder named like a record")

    pipeline = IngestPipeline(db.database, embedder, settings)
    pipeline.known = known_vectors.load(embedder)
    encoded = embedder.encoded_texts
    report = ingest(pipeline, folder, started_by="test")
    # the shipped vectors covered the load: only the check against the live encoder ran
    assert embedder.encoded_texts - encoded <= 1, f"stale test vectors: {known_vectors.REBUILD}"

    assert report["status"] == "partial"  # finished, with errors listed
    total = len(MALFORMED) + len(BROKEN) + 1
    assert report["counts"]["seen"] == total
    assert report["counts"]["errors"] == len(BROKEN)

    errors = {e["details"]["file"]: e["reason"] for e in report["errors"]}
    assert set(errors) == set(BROKEN)
    for name, (_, expected) in BROKEN.items():
        assert errors[name].startswith(f"{name}: {expected}"), errors[name]

    # each corpus file was recovered: its decision is stored, searchable, and the repair listed
    warned = {e["external_id"] for e in report["warnings"]}
    for path in MALFORMED:
        ecli = ecli_of(path)
        row = case_row(db, ecli)
        assert row is not None and row["state"] == "active", path.name
        doc = document_row(db, ecli)
        assert doc is not None and doc["n_chunks"] > 0 and doc["search_state"] == "active"
        assert ecli in warned, path.name
    assert report["counts"]["added"] == len(MALFORMED)

    # the truncated record: kept as metadata, held until a person looks at it
    held = entries(report, "held", SMALL)
    assert len(held) == 1 and "malformed" in held[0]["reason"]
    row = case_row(db, SMALL)
    assert row is not None and row["state"] == "held"
    assert entries(report, "metadata_only", SMALL)
    assert any("lenient" in (e["reason"] or "") for e in entries(report, "warnings", SMALL))

    # a person confirms it; the same broken file read again does not undo that
    confirmed = confirm_case(db.database, SMALL, "admin@firm.nl")
    assert confirmed["state"] == "active"
    again = tmp_path / "again"
    again.mkdir()
    shutil.copy(folder / "truncated.xml", again / "truncated.xml")
    report = ingest(pipeline, again, started_by="test")
    assert not entries(report, "held", SMALL)
    row = case_row(db, SMALL)
    assert row is not None and row["state"] == "active"


def test_a_missing_folder_fails_the_run_cleanly(
    db: DbHandle, settings: Any, embedder: Any, tmp_path: Path
) -> None:
    pipeline = IngestPipeline(db.database, embedder, settings)
    report = ingest(pipeline, tmp_path / "nope", started_by="test")
    assert report["status"] == "failed" and "no folder" in report["error"]


def test_a_folder_without_records_says_so(
    db: DbHandle, settings: Any, embedder: Any, tmp_path: Path
) -> None:
    """A folder holding no *.xml (emptied since the run was asked for; the route and the
    CLI refuse one up front) loaded nothing and ended "succeeded" without a word."""
    (tmp_path / "ECLI_NL_HR_2019_1278.XML.txt").write_text("not a record", encoding="utf-8")
    pipeline = IngestPipeline(db.database, embedder, settings)
    report = ingest(pipeline, tmp_path, started_by="test")
    assert report["counts"].get("seen", 0) == 0, report["counts"]
    assert [w["reason"] for w in report["warnings"]] == [
        f"no Rechtspraak records (*.xml files) in {tmp_path}: nothing was loaded"
    ], report["warnings"]


def test_a_record_that_links_outside_the_folder_is_reported_not_read(
    settings: Any, tmp_path: Path
) -> None:
    """os.walk lists a link to a file as a file: a record linking to an XML file anywhere
    on the host was read and ingested as public case law."""
    from types import SimpleNamespace

    from app.caselaw.ingest import RechtspraakSource
    from connectors.base import DocumentFailure, SourceDocument

    folder = tmp_path / "records"
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(corpus_file(SMALL), elsewhere / "outside.xml")
    shutil.copy(corpus_file(SMALL), folder / "inside.xml")
    (folder / "link.xml").symlink_to(elsewhere / "outside.xml")
    (folder / "loop.xml").symlink_to(folder / "loop.xml")
    pipeline: Any = SimpleNamespace(settings=settings)
    items = list(RechtspraakSource(folder, pipeline).full(None))
    read = [i for i in items if isinstance(i, SourceDocument)]
    failed = {
        i.details["file"]: i.reason for i in items if isinstance(i, DocumentFailure) and i.details
    }
    assert len(read) == 1 and read[0].metadata.get("file") != "link.xml", read
    assert failed["link.xml"] == "link.xml: links outside the folder; not read", failed
    assert failed["loop.xml"].startswith("loop.xml: cannot read the file"), failed
