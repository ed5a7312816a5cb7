"""Export folders: files plus a metadata sidecar (JSON lines or CSV).

Sidecar columns / keys: external_id, path (relative to the folder), client_id, matter_id,
doc_type, title, author, modified_at (RFC 3339), version, optional acl (a JSON object
{"default": "private", "allow": [...], "deny": [...]}).

Tri-state metadata: a key that is missing from a JSON line (or a column missing from the
CSV header) is ABSENT; an empty cell, an empty string or JSON null is PRESENT BUT EMPTY.
Problems with one entry (missing or unreadable file, unreadable row, a key given twice, a
list where text belongs, bad ACL) are yielded as `DocumentFailure`s (with the sidecar line)
for the run report; they never stop the load. A sidecar that cannot place any row (none in
the folder, a link out of it, a CSV header naming a column twice or lacking external_id or
path) refuses the whole run up front (`check_path`). Files that no row names are listed in
the run's warnings, and so are columns or keys that no field reads (a typo: "matter_idd").

`FolderSource` is a `Source` with no optional capability: it loads what the folder holds
and never sweeps (several folders share the source name, and a file left out of an export is
not a deletion).
"""

from __future__ import annotations

import csv
import io
import json
import mimetypes
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from app.types import EXTERNAL_ID_MAX, is_principal, principal_key, storable
from connectors.base import (
    BaseSource,
    Checkpoint,
    DocumentFailure,
    SourceAcl,
    SourceDocument,
    SourceItem,
    SourcePathError,
)
from connectors.dms.acl import unresolvable_acl
from connectors.files import FileTooLargeError, NotReadError, open_regular, read_regular

SIDECAR_NAMES = ("metadata.jsonl", "metadata.csv", "sidecar.jsonl", "sidecar.csv")
MAX_FILE_BYTES = 50 * 1024 * 1024
# a sidecar is held in memory for the whole run: about 300,000 rows of 400 bytes
MAX_SIDECAR_BYTES = 128 * 1024 * 1024
_UNNAMED_SHOWN = 10  # files named in the warning about files no row names
EXTRA_TYPES = {
    ".eml": "message/rfc822",
    ".xml": "application/xml",
    ".md": "text/plain",
    ".txt": "text/plain",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}


# keys read as text: a number is written as it reads, a list or an object is an error; a
# fraction (1001.0, 1e3) has no one text, so it names no document, file, client or matter
_TEXT_KEYS = ("external_id", "path", "client_id", "matter_id", "doc_type", "title", "author",
              "modified_at", "version")
_ID_KEYS = ("external_id", "path", "client_id", "matter_id")
_KEYS = (*_TEXT_KEYS, "acl")  # every column / key read; any other is named in the warnings


@dataclass(frozen=True)
class _EntryError:
    external_id: str | None
    reason: str
    line: int
    acl_unread: bool = False  # its access list could not be read: the stored copy admits nobody


def _tri(row: dict[str, Any], key: str) -> str | None:
    if key not in row:
        return None
    value = row[key]
    if value is None:
        return ""
    return str(value)


def parse_acl(value: Any, *, given: bool = False) -> SourceAcl | None:
    """Absent -> no source rules (public within the firm, walls apply). ``given``: the key
    is in the row; then an empty value (null, "") is an error, never public: rules that were
    not exported are not "no rules"."""
    if value is None or value == "":
        if given:
            raise ValueError("acl is empty: leave the key out for public within the firm")
        return None
    data = json.loads(value) if isinstance(value, str) else value
    if not isinstance(data, dict):
        raise ValueError("acl must be a JSON object")  # noqa: TRY004 - reported as bad metadata
    default = str(data.get("default", "private")).lower()
    if default not in ("public", "view", "private"):
        raise ValueError(f"acl.default must be public, view or private, not {default!r}")
    allow = data.get("allow", []) or []
    deny = data.get("deny", []) or []
    if not isinstance(allow, list) or not isinstance(deny, list):
        raise ValueError("acl.allow and acl.deny must be lists")  # noqa: TRY004
    rules = {}
    for key, given_list in (("allow", allow), ("deny", deny)):
        principals = frozenset(principal_key(str(p)) for p in given_list if str(p).strip())
        # "bob" for "folder:user:bob" would match nobody: a deny that lapses, a grant lost
        wrong = sorted(p for p in principals if not is_principal(p))
        if wrong:
            raise ValueError(
                f"acl.{key}: {wrong[0]!r} is not '<source>:user:<id>' or '<source>:group:<id>'"
            )
        rules[key] = principals
    return SourceAcl(
        default=default,  # type: ignore[arg-type]
        allow=rules["allow"],
        deny=rules["deny"],
    )


def _parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"modified_at {value!r} is not an RFC 3339 time") from None
    if parsed.tzinfo is None:
        raise ValueError(f"modified_at {value!r} has no time zone")
    return parsed


class _RepeatedKeyError(ValueError):
    pass


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once: json keeps the last of two, so a line
    naming matter_id twice was filed under the second in silence."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RepeatedKeyError(f"{key!r} is given twice")
        out[key] = value
    return out


def _decoded(raw: bytes, fallback: list[int] | None = None) -> str:
    """UTF-8 line by line, a line that is not read as cp1252 (its number added to
    ``fallback``): decoding the whole file as cp1252 for one such line garbled every UTF-8
    title, author and matter id of the others ("Café" read as "CafÃ©")."""
    lines = raw.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    out = []
    for number, line in enumerate(lines, start=1):
        try:
            out.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            out.append(line.decode("cp1252", errors="replace"))
            if fallback is not None:
                fallback.append(number)
    return "\n".join(out)


def _has_rows(sidecar: BinaryIO, csv_file: bool) -> bool:
    """Whether the sidecar holds a line that is not blank (past a CSV's header), read
    until the first one."""
    if csv_file:
        sidecar.readline()
    return any(line.strip() for line in sidecar)


def _header_problem(sidecar: BinaryIO) -> str | None:
    """Why a CSV sidecar's header cannot place its rows (a column named twice gave the
    last cell in silence: a second matter_id filed every row under it), or None."""
    head = sidecar.readline(1 << 20)
    try:
        names = next(csv.reader(io.StringIO(_decoded(head))), [])
    except csv.Error as exc:
        return f"its header cannot be read ({exc})"
    named = [n.strip() for n in names]
    # an unnamed column (a spreadsheet's header with trailing commas) places nothing
    twice = sorted({n for n in named if n and named.count(n) > 1})
    if twice:
        return f"the header names {', '.join(map(repr, twice))} more than once"
    lacking = [n for n in ("external_id", "path") if n not in names]
    if lacking:
        return f"the header has no {' and no '.join(lacking)} column"
    return None


def _find_sidecar(root: Path) -> Path:
    """The metadata sidecar of the folder ``root`` (resolved); FileNotFoundError when there is
    no folder, `SourcePathError` when it holds no sidecar or one that links out of it."""
    if not root.is_dir():
        raise FileNotFoundError(f"export folder {root} does not exist")
    sidecar = next((root / n for n in SIDECAR_NAMES if (root / n).is_file()), None)
    if sidecar is None:
        raise SourcePathError(
            f"no metadata sidecar in {root} (expected one of {', '.join(SIDECAR_NAMES)})",
            "sidecar_missing",
        )
    if root not in sidecar.resolve().parents:  # a link: not followed out of the folder
        raise SourcePathError(
            f"the metadata sidecar {sidecar.name} in {root} links outside the folder",
            "sidecar_invalid",
        )
    return sidecar


@contextmanager
def _sidecar_read(sidecar: Path) -> Iterator[None]:
    """Reading the sidecar (`connectors.files`: a regular file of at most MAX_SIDECAR_BYTES,
    judged by the descriptor, since the name found above may be a pipe by now); what stops
    it is a `SourcePathError`, a permission refused too: the same read fails on a retry."""
    try:
        yield
    except SourcePathError:
        raise
    except NotReadError as exc:
        too_large = isinstance(exc, FileTooLargeError)
        split = "; split the export into several folders" if too_large else ""
        raise SourcePathError(
            f"the metadata sidecar {sidecar.name} in {sidecar.parent}: {exc.reason}{split}",
            "sidecar_invalid",
        ) from None
    except FileNotFoundError:
        # removed between being found and read: missing, as if it had never been there
        raise SourcePathError(
            f"the metadata sidecar {sidecar.name} in {sidecar.parent} is gone (removed "
            "after it was found)",
            "sidecar_missing",
        ) from None
    except OSError as exc:
        raise SourcePathError(
            f"the metadata sidecar {sidecar.name} in {sidecar.parent} cannot be read: "
            f"{exc.strerror or exc}",
            "sidecar_invalid",
        ) from exc


def _check_sidecar(sidecar: Path, content: BinaryIO) -> None:
    """`SourcePathError` when the sidecar cannot place any row: a CSV header that cannot,
    or no row at all (a run would load nothing, say nothing, and read as a listing of no
    documents)."""
    csv_file = sidecar.suffix == ".csv"
    if csv_file:
        problem = _header_problem(content)
        if problem:
            raise SourcePathError(
                f"{sidecar.name} in {sidecar.parent}: {problem}", "sidecar_invalid"
            )
        content.seek(0)
    if not _has_rows(content, csv_file):
        where = f"{sidecar.name} in {sidecar.parent}"
        raise SourcePathError(f"{where} holds no rows", "sidecar_invalid")


class _Lines:
    """The sidecar's lines, counted as the csv module takes them (its own count stops at a
    record it refuses)."""

    def __init__(self, content: str) -> None:
        self.read = 0
        self._lines = iter(io.StringIO(content))

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        self.read += 1
        return line


def _csv_records(content: str) -> Iterator[tuple[int, dict[str | Any, Any] | _EntryError]]:
    """The rows with the line each starts on; a record the csv module refuses (a field
    over its limit) is an entry of its own, and reading goes on after it."""
    lines = _Lines(content)
    reader = csv.DictReader(lines)
    try:
        reader.fieldnames  # noqa: B018 - reads the header before the first row
    except csv.Error as exc:
        yield 1, _EntryError(None, f"line 1: not CSV ({exc})", 1)
        return
    while True:
        number = lines.read + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield number, _EntryError(None, f"line {number}: not CSV ({exc})", number)
            if lines.read < number:  # nothing read past it: nothing more to read
                return
            continue
        yield number, row


class FolderSource(BaseSource):
    kind = "folder"

    def __init__(self, path: Path | str, source: str = "folder") -> None:
        self.given_path = str(path)
        self.root = Path(path).expanduser().resolve()
        self.name = source
        self.scope = f"path={self.root}"
        self._total: int | None = None
        # read once, whole, and checked as read: the count and the load parse these bytes,
        # not a file that may have changed (or become a pipe) since the check
        self.sidecar: Path = _find_sidecar(self.root)
        with _sidecar_read(self.sidecar):
            self._content = read_regular(self.sidecar, MAX_SIDECAR_BYTES)
        _check_sidecar(self.sidecar, io.BytesIO(self._content))
        self._named: set[Path] = set()  # the files that rows name, found or not
        self._cp1252_lines: list[int] = []  # sidecar lines that are not UTF-8
        self._unknown: dict[str, int] = {}  # keys / columns not read, with their first line
        self._loaded = False

    @staticmethod
    def check_path(path: Path | str) -> Path:
        """The folder's metadata sidecar; FileNotFoundError when there is no folder, and
        `SourcePathError` when it holds no sidecar (no file of it could be placed). Reads
        no more of it than the check needs (the route and the CLI ask before queuing)."""
        sidecar = _find_sidecar(Path(path).expanduser().resolve())
        with _sidecar_read(sidecar), open_regular(sidecar, MAX_SIDECAR_BYTES) as handle:
            _check_sidecar(sidecar, handle)
        return sidecar

    def _rows(self) -> Iterator[tuple[int, dict[str, Any] | _EntryError]]:
        self._cp1252_lines, self._unknown = [], {}
        content = _decoded(self._content, self._cp1252_lines)
        if self.sidecar.suffix == ".jsonl":
            # lines end at "\n" only: JSON holds U+2028 or a form feed unescaped in a string
            for number, line in enumerate(content.split("\n"), start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line, object_pairs_hook=_once_each)
                except (json.JSONDecodeError, _RepeatedKeyError) as exc:
                    why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                    yield number, _EntryError(None, f"line {number}: not JSON ({why})", number)
                    continue
                if not isinstance(row, dict):
                    yield (
                        number,
                        _EntryError(None, f"line {number}: not a JSON object", number),
                    )
                    continue
                self._note_unknown(row, number)
                yield number, row
        else:
            for number, row in _csv_records(content):
                if isinstance(row, _EntryError):
                    yield number, row
                    continue
                self._note_unknown(row, 1)  # the header's columns
                if None in row:  # more cells than header columns
                    yield (
                        number,
                        _EntryError(
                            row.get("external_id"), f"line {number}: too many cells", number
                        ),
                    )
                    continue
                missing = [k for k, v in row.items() if v is None]
                if missing:  # a row cut short: its last cells are not empty, they are not there
                    spans = next((k for k, v in row.items() if v and "\n" in v), None)
                    yield number, _EntryError(
                        (row.get("external_id") or "").strip() or None,
                        f"line {number}: too few cells (no {missing[0]} cell; the header names "
                        f"{len(row)} columns)" + (
                            f"; its {spans} cell runs over several lines (a quote left open?):"
                            f" {row[spans]!r:.120}" if spans else ""
                        ), number,
                    )  # fmt: skip
                    continue
                yield number, {k: v for k, v in row.items() if k is not None}

    def _note_unknown(self, row: dict[str | Any, Any], line: int) -> None:
        """A key or column that no field reads (a typo, "matter_idd"): dropped in silence, the
        document was quarantined as "matter_id absent" and nothing named the typo."""
        for key in row:
            if key not in _KEYS and key is not None:
                self._unknown.setdefault(str(key), line)

    def count(self) -> int:
        return sum(1 for _ in self._rows())

    def run_params(self) -> dict[str, Any]:
        return {"path": self.given_path, "source": self.name}

    def total(self) -> int | None:
        if self._total is None:
            self._total = self.count()  # of the sidecar read when the source was made
        return self._total

    def full(self, resume: Checkpoint | None) -> Iterator[SourceItem]:
        first_line: dict[str, int] = {}
        for number, row in self._rows():
            item = row if isinstance(row, _EntryError) else self._document(number, row)
            if isinstance(item, SourceDocument):
                # one row per document: a second would overwrite the first silently
                first = first_line.setdefault(item.external_id, number)
                if first != number:
                    item = _EntryError(
                        item.external_id,
                        f"line {number}: external_id is listed again (first on line {first});"
                        " the first row stands",
                        number,
                    )
            if isinstance(item, _EntryError):
                yield DocumentFailure(
                    self.name,
                    item.external_id,
                    item.reason,
                    details={"line": item.line},
                    acl=unresolvable_acl("access list unreadable") if item.acl_unread else None,
                )
            else:
                yield item
        self._loaded = True

    def warnings(self) -> list[str]:
        """After a whole load: the sidecar lines read as cp1252, and the files of the
        folder that no row names (not ingested, and before this said nowhere: an export
        whose sidecar lost rows lost them quietly)."""
        if not self._loaded:
            return []
        notes = []
        if self._unknown:
            csv_file = self.sidecar.suffix == ".csv"
            names = [f"{k!r}" if csv_file else f"{k!r} (first on line {n})"
                     for k, n in self._unknown.items()]  # fmt: skip
            more = len(names) - _UNNAMED_SHOWN
            notes.append(
                f"{'the header names column(s)' if csv_file else 'sidecar key(s)'} that no "
                f"field reads, ignored: {', '.join(names[:_UNNAMED_SHOWN])}"
                f"{f' and {more} more' if more > 0 else ''} (read: {', '.join(_KEYS)})"
            )
        if self._cp1252_lines:
            lines = self._cp1252_lines
            shown = ", ".join(map(str, lines[:_UNNAMED_SHOWN]))
            rest = len(lines) - _UNNAMED_SHOWN
            notes.append(
                f"sidecar line(s) {shown}{f' and {rest} more' if rest > 0 else ''} are not "
                "UTF-8: read as cp1252"
            )
        unnamed: list[str] = []
        for folder, dirs, files in os.walk(self.root):  # links to folders are not entered
            dirs.sort()
            for name in sorted(files):
                path = Path(folder, name)
                if path.parent == self.root and name in SIDECAR_NAMES:
                    continue
                try:
                    named = path.resolve() in self._named
                except (OSError, RuntimeError):
                    named = False
                if not named:
                    unnamed.append(str(path.relative_to(self.root)))
        if not unnamed:
            return notes
        shown = ", ".join(repr(n) for n in unnamed[:_UNNAMED_SHOWN])
        more = len(unnamed) - _UNNAMED_SHOWN
        return [
            *notes,
            f"{len(unnamed)} file(s) in the folder named by no row of the sidecar, not "
            f"ingested: {shown}{f' and {more} more' if more > 0 else ''}",
        ]

    def _document(self, number: int, row: dict[str, Any]) -> SourceDocument | _EntryError:
        wrong = next((k for k in _TEXT_KEYS if not isinstance(row.get(k), str | int | float | None)
                      or isinstance(row.get(k), bool)
                      or (isinstance(row.get(k), float) and k in _ID_KEYS)), None)  # fmt: skip
        if wrong is not None:  # a list's or an object's repr is no title, id or matter
            ident = row.get("external_id")
            return _EntryError(
                ident.strip() or None if isinstance(ident, str) else None,
                f"line {number}: {wrong} must be a string, not {type(row[wrong]).__name__}",
                number,
            )
        external_id = str(row.get("external_id") or "").strip()
        if not external_id:
            return _EntryError(None, f"line {number}: external_id is missing", number)
        if len(external_id) > EXTERNAL_ID_MAX:
            return _EntryError(
                None, f"line {number}: external_id is longer than {EXTERNAL_ID_MAX} characters",
                number,
            )  # fmt: skip
        if not storable(external_id):  # the report names it escaped, the store never sees it
            return _EntryError(
                None, f"line {number}: external_id {external_id!r} holds a control character",
                number,
            )  # fmt: skip
        rel = str(row.get("path") or "").strip()
        if not rel:
            return _EntryError(external_id, "path is missing", number)
        if "\n" in rel or "\r" in rel:  # the rows after it went into this cell
            return _EntryError(
                external_id, f"path {rel!r} runs over several lines (a quote left open?)",
                number,
            )  # fmt: skip
        if not storable(rel):
            return _EntryError(external_id, f"path {rel!r} holds a control character", number)
        try:
            file_path = (self.root / rel).resolve()
            if self.root not in file_path.parents:
                return _EntryError(external_id, f"path {rel!r} points outside the folder", number)
            self._named.add(file_path)
            # read here: a file that cannot be read is this row's entry; raised out of the
            # load, it failed the whole run and left the rows after it unread. Judged by the
            # descriptor opened: a name checked and then opened could be a pipe by then
            content = read_regular(file_path, MAX_FILE_BYTES)
        except FileNotFoundError:
            return _EntryError(external_id, f"file {rel!r} is missing on disk", number)
        except NotReadError as exc:  # a pipe, a device, a folder; or too large
            return _EntryError(external_id, f"file {rel!r}: {exc.reason}", number)
        # a name too long, no permission, ...; a loop of links is a RuntimeError from
        # resolve() (Python 3.11): raised out of the load, it failed the whole run
        except (OSError, RuntimeError) as exc:
            return _EntryError(external_id, f"file {rel!r} cannot be read: {exc}", number)
        try:
            # a CSV row has every column: an empty acl cell is no rules, as before; a JSON
            # line that names the key says something, and an empty value is no answer
            jsonl = self.sidecar.suffix == ".jsonl"
            acl = parse_acl(row.get("acl"), given=jsonl and "acl" in row)
        except (ValueError, json.JSONDecodeError) as exc:
            # the rules given cannot be read: a deny among them must not wait for a good row
            return _EntryError(external_id, f"bad metadata: {exc}", number, acl_unread=True)
        try:
            modified = _parse_time(_tri(row, "modified_at") or None)
        except (ValueError, json.JSONDecodeError) as exc:
            return _EntryError(external_id, f"bad metadata: {exc}", number)
        suffix = file_path.suffix.lower()
        mime = EXTRA_TYPES.get(suffix) or mimetypes.guess_type(file_path.name)[0]
        return SourceDocument(
            source=self.name,
            external_id=external_id,
            title=_tri(row, "title"),
            doc_type=_tri(row, "doc_type"),
            client_id=_tri(row, "client_id"),
            matter_id=_tri(row, "matter_id"),
            author=_tri(row, "author"),
            modified_at=modified,
            version=_tri(row, "version") or None,
            acl=acl,
            content=content,
            mime_type=mime,
            metadata={"filename": file_path.name, "path": rel},
        )
