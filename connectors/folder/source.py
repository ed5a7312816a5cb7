"""Export folders: files plus a metadata sidecar (JSON lines or CSV).

Sidecar columns / keys: external_id, path (relative to the folder), client_id, matter_id,
doc_type, title, author, modified_at (RFC 3339), version, optional acl (a JSON object
{"default": "private", "allow": [...], "deny": [...]}).

Tri-state metadata: a key that is missing from a JSON line (or a column missing from the
CSV header) is ABSENT; an empty cell, an empty string or JSON null is PRESENT BUT EMPTY.
Problems with one entry (missing file, unreadable row, bad ACL) are yielded as
`DocumentFailure`s (with the sidecar line) for the run report; they never stop the load.

`FolderSource` is a `Source` with no optional capability: it loads what the folder holds
and never sweeps (several folders share the source name, and a file left out of an export is
not a deletion).
"""

from __future__ import annotations

import csv
import io
import json
import mimetypes
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

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

SIDECAR_NAMES = ("metadata.jsonl", "metadata.csv", "sidecar.jsonl", "sidecar.csv")
MAX_FILE_BYTES = 50 * 1024 * 1024
EXTRA_TYPES = {
    ".eml": "message/rfc822",
    ".xml": "application/xml",
    ".md": "text/plain",
    ".txt": "text/plain",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}


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


class FolderSource(BaseSource):
    kind = "folder"

    def __init__(self, path: Path | str, source: str = "folder") -> None:
        self.given_path = str(path)
        self.root = Path(path).expanduser().resolve()
        self.name = source
        self.scope = f"path={self.root}"
        self._total: int | None = None
        self.sidecar: Path | None = self.check_path(self.root)

    @staticmethod
    def check_path(path: Path | str) -> Path:
        """The folder's metadata sidecar; FileNotFoundError when there is no folder, and
        `SourcePathError` when it holds no sidecar (no file of it could be placed)."""
        root = Path(path).expanduser().resolve()
        if not root.is_dir():
            raise FileNotFoundError(f"export folder {root} does not exist")
        sidecar = next((root / n for n in SIDECAR_NAMES if (root / n).is_file()), None)
        if sidecar is None:
            raise SourcePathError(
                f"no metadata sidecar in {root} (expected one of {', '.join(SIDECAR_NAMES)})",
                "sidecar_missing",
            )
        return sidecar

    def _rows(self) -> Iterator[tuple[int, dict[str, Any] | _EntryError]]:
        if self.sidecar is None:  # the constructor refuses folders without one
            return
        raw = self.sidecar.read_bytes()
        try:
            content = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            content = raw.decode("cp1252", errors="replace")
        if self.sidecar.suffix == ".jsonl":
            for number, line in enumerate(content.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    yield (
                        number,
                        _EntryError(None, f"line {number}: not JSON ({exc.msg})", number),
                    )
                    continue
                if not isinstance(row, dict):
                    yield (
                        number,
                        _EntryError(None, f"line {number}: not a JSON object", number),
                    )
                    continue
                yield number, row
        else:
            reader = csv.DictReader(io.StringIO(content))
            for number, row in enumerate(reader, start=2):
                if None in row:  # more cells than header columns
                    yield (
                        number,
                        _EntryError(
                            row.get("external_id"), f"line {number}: too many cells", number
                        ),
                    )
                    continue
                yield number, {k: v for k, v in row.items() if k is not None}

    def count(self) -> int:
        return sum(1 for _ in self._rows())

    def run_params(self) -> dict[str, Any]:
        return {"path": self.given_path, "source": self.name}

    def total(self) -> int | None:
        if self._total is None:
            self._total = self.count()
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

    def _document(self, number: int, row: dict[str, Any]) -> SourceDocument | _EntryError:
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
        if not storable(rel):
            return _EntryError(external_id, f"path {rel!r} holds a control character", number)
        try:
            file_path = (self.root / rel).resolve()
            if self.root not in file_path.parents:
                return _EntryError(external_id, f"path {rel!r} points outside the folder", number)
            if not file_path.is_file():
                return _EntryError(external_id, f"file {rel!r} is missing on disk", number)
            size = file_path.stat().st_size
        except OSError as exc:  # a name too long, a loop of links, no permission, ...
            return _EntryError(external_id, f"file {rel!r} cannot be read: {exc}", number)
        if size > MAX_FILE_BYTES:
            return _EntryError(external_id, f"file {rel!r} is larger than 50 MB", number)
        try:
            # a CSV row has every column: an empty acl cell is no rules, as before; a JSON
            # line that names the key says something, and an empty value is no answer
            jsonl = self.sidecar is not None and self.sidecar.suffix == ".jsonl"
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
            content=file_path.read_bytes(),
            mime_type=mime,
            metadata={"filename": file_path.name, "path": rel},
        )
