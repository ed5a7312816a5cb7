"""A metadata sidecar that is malformed ends as a refusal (the whole sidecar: 422 on
POST /v1/ingest/runs, exit 2 from the CLI) or as one report entry per row it cannot read,
never as a crash of the run nor as a row read in silence as something it does not say
(invariant 7)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from connectors.base import DocumentFailure, SourceDocument, SourcePathError
from connectors.files import read_regular
from connectors.folder.source import FolderSource
from tests.conftest import DbHandle, Tokens
from tests.helpers import ADMIN, Firm

HEADER = "external_id,path,client_id,matter_id"


def _folder(root: Path, name: str, content: bytes | str) -> Path:
    root.mkdir(exist_ok=True)
    (root / "a.txt").write_text("Memo over de huur.", encoding="utf-8")
    data = content.encode("utf-8") if isinstance(content, str) else content
    (root / name).write_bytes(data)
    return root


def _items(root: Path) -> list[DocumentFailure | SourceDocument]:
    source = FolderSource(root)
    items = [i for i in source.full(None) if isinstance(i, DocumentFailure | SourceDocument)]
    source.close()
    return items


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        (f"{HEADER},matter_id", "'matter_id' more than once"),
        ("path,client_id,matter_id", "no external_id column"),
        ("external_id,client_id,matter_id", "no path column"),
    ],
)
def test_a_csv_header_that_cannot_place_its_rows_is_refused(
    tmp_path: Path, header: str, problem: str
) -> None:
    """A column named twice gave the last cell in silence: every row of a header naming
    matter_id twice was filed under its second matter (another wall group)."""
    root = _folder(tmp_path, "metadata.csv", f"{header}\nR-1,a.txt,C-1,M-1,M-2\n")
    with pytest.raises(SourcePathError, match=problem) as raised:
        FolderSource(root)
    assert raised.value.code == "sidecar_invalid"


@pytest.mark.parametrize(
    ("name", "content"),
    [("metadata.jsonl", ""), ("metadata.jsonl", "\n  \n"), ("metadata.csv", f"{HEADER}\n\n")],
)
def test_a_sidecar_that_holds_no_rows_is_refused(tmp_path: Path, name: str, content: str) -> None:
    """It places nothing: the run loaded nothing and ended succeeded without a word."""
    root = _folder(tmp_path, name, content)
    with pytest.raises(SourcePathError, match="holds no rows") as raised:
        FolderSource(root)
    assert raised.value.code == "sidecar_invalid"


def test_unnamed_columns_of_a_spreadsheet_header_are_no_column_named_twice(
    tmp_path: Path,
) -> None:
    """A spreadsheet saved as CSV names columns past its last used one with nothing
    ("...,matter_id,,"): two empty names place no cell, and the run was refused as a header
    naming '' twice."""
    root = _folder(tmp_path, "metadata.csv", f"{HEADER},,\nR-1,a.txt,C-1,M-1,,\n")
    (document,) = _items(root)
    assert isinstance(document, SourceDocument), document
    assert (document.external_id, document.matter_id) == ("R-1", "M-1")


def test_the_route_refuses_a_sidecar_it_cannot_read(
    client: TestClient, auth: Tokens, tmp_path: Path
) -> None:
    root = _folder(tmp_path, "metadata.csv", f"{HEADER},matter_id\nR-1,a.txt,C-1,M-1,M-2\n")
    r = client.post(
        "/v1/ingest/runs", json={"connector": "folder", "path": str(root)}, headers=auth(*ADMIN)
    )
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "sidecar_invalid" and error["details"]["field"] == "path", error
    assert "'matter_id' more than once" in error["message"]


def test_a_json_line_naming_a_key_twice_is_an_entry_not_its_last_value(tmp_path: Path) -> None:
    row = '{"external_id": "R-1", "path": "a.txt", "client_id": "C-1", "matter_id": "M-1"'
    root = _folder(tmp_path, "metadata.jsonl", f'{row}, "matter_id": "M-2"}}\n{row}}}\n')
    first, second = _items(root)
    assert isinstance(first, DocumentFailure), first
    assert "line 1" in first.reason and "'matter_id' is given twice" in first.reason
    assert isinstance(second, SourceDocument) and second.matter_id == "M-1"


def test_a_line_separator_inside_a_json_string_does_not_end_the_line(tmp_path: Path) -> None:
    """splitlines() cut a JSON line at U+2028 (JSON.stringify leaves it unescaped): one
    title with it made two "not JSON" entries and lost its document."""
    row = {"external_id": "R-1", "path": "a.txt", "client_id": "C-1", "matter_id": "M-1",
           "title": "Memo\u2028huur\x0cbijlage"}
    root = _folder(tmp_path, "metadata.jsonl", json.dumps(row, ensure_ascii=False) + "\n")
    [item] = _items(root)
    assert isinstance(item, SourceDocument), item
    assert item.title == "Memo\u2028huur\x0cbijlage"


def test_a_csv_field_over_the_csv_limit_is_an_entry_and_the_rows_after_it_load(
    tmp_path: Path,
) -> None:
    """csv.Error raised out of the source: the run closed as interrupted, the rows after
    the long one unread, and a queued run tried again twice to the same end."""
    rows = [
        HEADER + ",title",
        "R-1,a.txt,C-1,M-1,kort",
        "R-2,a.txt,C-1,M-1," + "x" * 200_000,
        "R-3,a.txt,C-1,M-1,kort",
    ]
    [one, long, three] = _items(_folder(tmp_path, "metadata.csv", "\n".join(rows) + "\n"))
    assert isinstance(one, SourceDocument) and isinstance(three, SourceDocument)
    assert (one.external_id, three.external_id) == ("R-1", "R-3")
    assert isinstance(long, DocumentFailure) and long.reason.startswith("line 3: not CSV")


def test_a_quote_left_open_names_the_rows_it_swallowed(tmp_path: Path) -> None:
    """The open quote took the next row into the path: reported as a missing file, the
    second row vanished without a word of its own."""
    content = f'{HEADER}\nR-1,"a.txt,C-1,M-1\nR-2,a.txt,C-1,M-1\n'
    [item] = _items(_folder(tmp_path, "metadata.csv", content))
    assert isinstance(item, DocumentFailure), item
    assert "runs over several lines" in item.reason and "R-2" in item.reason


def test_a_sidecar_that_links_outside_the_folder_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "metadata.jsonl").write_text(
        '{"external_id": "R-1", "path": "a.txt", "client_id": "C-1", "matter_id": "M-1"}\n',
        encoding="utf-8",
    )
    root = tmp_path / "export"
    root.mkdir()
    (root / "a.txt").write_text("Memo over de huur.", encoding="utf-8")
    os.symlink(elsewhere / "metadata.jsonl", root / "metadata.jsonl")
    with pytest.raises(SourcePathError, match="links outside the folder") as raised:
        FolderSource(root)
    assert raised.value.code == "sidecar_invalid"


def test_a_list_or_an_object_where_text_belongs_is_an_entry(tmp_path: Path) -> None:
    """str() of it was stored: a title "['a']", a path "['x']" reported as a missing file."""
    base = {"path": "a.txt", "client_id": "C-1", "matter_id": "M-1"}
    rows = [
        {**base, "external_id": "R-1", "title": ["Memo"]},
        {**base, "external_id": "R-2", "matter_id": {"id": "M-1"}},
        {**base, "external_id": "R-3", "path": ["a.txt"]},
        {**base, "external_id": "R-4", "client_id": True},
        {**base, "external_id": "R-5", "matter_id": 1001.0},
        {**base, "external_id": 5, "version": 2.1},
    ]
    content = "\n".join(json.dumps(r) for r in rows) + "\n"
    *wrong, numbers = _items(_folder(tmp_path, "metadata.jsonl", content))
    assert [(w.external_id, type(w).__name__) for w in wrong] == [
        (f"R-{n}", "DocumentFailure") for n in range(1, 6)
    ]
    reasons = [w.reason for w in wrong if isinstance(w, DocumentFailure)]
    assert reasons == [
        "line 1: title must be a string, not list",
        "line 2: matter_id must be a string, not dict",
        "line 3: path must be a string, not list",
        "line 4: client_id must be a string, not bool",
        "line 5: matter_id must be a string, not float",
    ]
    assert isinstance(numbers, SourceDocument)  # a version 2.1 reads as written (2.1)
    assert (numbers.external_id, numbers.version) == ("5", "2.1")


def test_files_no_row_names_and_files_that_cannot_be_read_are_in_the_report(
    client: TestClient,
    auth: Tokens,
    db: DbHandle,
    embedder: Any,
    settings: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file no row named was left out without a word; a file that could not be read (no
    permission) raised out of the load: the run failed and the rows after it were not
    read. (Tests run as root, who reads every file: the refusal is the file system's.)"""
    from app.ingest.pipeline import IngestPipeline
    from app.ingest.runs import ingest_folder

    firm = Firm(client, auth)
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1")
    root = tmp_path / "export"
    root.mkdir()
    (root / "sub").mkdir()
    for name in ("a.txt", "locked.txt", "c.txt", "left-out.txt", "sub/also-left-out.txt"):
        (root / name).write_text("Memo " + name + " over de huur.", encoding="utf-8")
    base = {"client_id": "C-1", "matter_id": "M-1"}
    rows = [
        {**base, "external_id": "R-1", "path": "a.txt"},
        {**base, "external_id": "R-2", "path": "locked.txt"},
        {**base, "external_id": "R-3", "path": "c.txt"},
        {**base, "external_id": "R-4", "path": "gone.txt"},
    ]
    (root / "metadata.jsonl").write_text("\n".join(json.dumps(r) for r in rows), "utf-8")
    def refused(path: Path, limit: int) -> bytes:
        if path.name == "locked.txt":
            raise PermissionError(13, "Permission denied", str(path))
        return read_regular(path, limit)

    monkeypatch.setattr("connectors.folder.source.read_regular", refused)
    report = ingest_folder(
        IngestPipeline(db.database, embedder, settings), root, started_by="admin@firm.nl"
    )
    assert report["status"] == "partial", report
    assert sorted(e["external_id"] for e in report["added"]) == ["R-1", "R-3"]
    reasons = {e["external_id"]: e["reason"] for e in report["errors"]}
    assert set(reasons) == {"R-2", "R-4"}, reasons
    assert "cannot be read" in reasons["R-2"] and "Permission denied" in reasons["R-2"]
    [warning] = [w["reason"] for w in report["warnings"]]
    assert warning.startswith("2 file(s) in the folder named by no row"), warning
    assert "'left-out.txt'" in warning and "'sub/also-left-out.txt'" in warning
    assert "gone.txt" not in warning and "metadata.jsonl" not in warning


def test_one_line_that_is_not_utf8_leaves_the_other_lines_as_written(tmp_path: Path) -> None:
    """The whole sidecar was decoded as cp1252 for one such line: every other title was
    stored garbled ("Café" as "CafÃ©") and a matter id written in UTF-8 no longer matched."""
    rows = [
        '{"external_id": "R-1", "path": "a.txt", "client_id": "C-1", "matter_id": "M-Zürich",'
        ' "title": "Café"}'.encode(),
        '{"external_id": "R-2", "path": "a.txt", "client_id": "C-1", "matter_id": "M-1",'
        ' "title": "Café"}'.encode("cp1252"),
    ]
    source = FolderSource(_folder(tmp_path, "metadata.jsonl", b"\n".join(rows) + b"\n"))
    first, second = source.full(None)
    assert isinstance(first, SourceDocument) and isinstance(second, SourceDocument)
    assert (first.title, first.matter_id) == ("Café", "M-Zürich")
    assert second.title == "Café"
    assert source.warnings() == ["sidecar line(s) 2 are not UTF-8: read as cp1252"]


def test_a_csv_row_cut_short_is_an_entry_and_an_empty_last_cell_is_not(tmp_path: Path) -> None:
    """Cells missing at the end of a row were read as empty: a row cut off in its title
    was stored with the title cut, and one cut before its matter_id was quarantined as
    "present but empty", which it was not."""
    content = f"{HEADER},title\nR-1,a.txt,C-1,M-1\nR-2,a.txt,C-1,M-1,\nR-3,a.txt,C-1\n"
    short, empty, shorter = _items(_folder(tmp_path, "metadata.csv", content))
    assert isinstance(short, DocumentFailure) and short.external_id == "R-1"
    assert short.reason == "line 2: too few cells (no title cell; the header names 5 columns)"
    assert isinstance(empty, SourceDocument) and empty.title == ""
    assert isinstance(shorter, DocumentFailure) and "no matter_id cell" in shorter.reason


@pytest.mark.parametrize("name", ["metadata.jsonl", "metadata.csv"])
def test_columns_no_field_reads_are_named_once_in_the_warnings(tmp_path: Path, name: str) -> None:
    """A typo in a column or key ("matter_idd") was dropped in silence: every document was
    quarantined as "matter_id absent", and nothing said which column was not read."""
    rows = [
        {"external_id": f"R-{n}", "path": "a.txt", "client_id": "C-1", "matter_idd": "M-1",
         **({"Title": "Memo"} if n > 1 else {})}
        for n in (1, 2, 3)
    ]
    if name.endswith(".jsonl"):
        content = "\n".join(json.dumps(row) for row in rows) + "\n"
    else:
        content = f"{HEADER.replace('matter_id', 'matter_idd')},Title\n" + "".join(
            f"{r['external_id']},a.txt,C-1,M-1,Memo\n" for r in rows
        )
    source = FolderSource(_folder(tmp_path, name, content))
    docs = list(source.full(None))
    assert all(isinstance(d, SourceDocument) and d.matter_id is None for d in docs), docs
    read = "external_id, path, client_id, matter_id, doc_type, title, author, modified_at, " \
        "version, acl"
    assert source.warnings() == [
        f"sidecar key(s) that no field reads, ignored: 'matter_idd' (first on line 1), 'Title' "
        f"(first on line 2) (read: {read})"
        if name.endswith(".jsonl") else
        f"the header names column(s) that no field reads, ignored: 'matter_idd', 'Title' "
        f"(read: {read})"
    ]
