"""Export folders: files plus a metadata sidecar (JSON lines or CSV).

Sidecar columns / keys: external_id, path (relative to the folder), client_id, matter_id,
doc_type, title, author, modified_at (RFC 3339), version, optional acl (a JSON object
{"default": "private", "allow": [...], "deny": [...]}).

Tri-state metadata: a key that is missing from a JSON line (or a column missing from the
CSV header) is ABSENT; an empty cell, an empty string or JSON null is PRESENT BUT EMPTY.
Problems with one entry (missing file, unreadable row, bad ACL) are yielded as
`FolderEntryError`s for the run report; they never stop the crawl.
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

from connectors.base import SourceAcl, SourceDocument

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
class FolderEntryError:
    external_id: str | None
    reason: str
    line: int | None = None


def _tri(row: dict[str, Any], key: str) -> str | None:
    if key not in row:
        return None
    value = row[key]
    if value is None:
        return ""
    return str(value)


def parse_acl(value: Any) -> SourceAcl | None:
    """None/absent -> no source rules (public within the firm, walls apply)."""
    if value is None or value == "":
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
    return SourceAcl(
        default=default,  # type: ignore[arg-type]
        allow=frozenset(str(p).strip().lower() for p in allow if str(p).strip()),
        deny=frozenset(str(p).strip().lower() for p in deny if str(p).strip()),
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


class FolderConnector:
    source = "folder"

    def __init__(self, path: Path | str, source: str = "folder") -> None:
        self.root = Path(path).expanduser().resolve()
        self.source = source
        if not self.root.is_dir():
            raise FileNotFoundError(f"export folder {self.root} does not exist")
        self.sidecar = next(
            (self.root / n for n in SIDECAR_NAMES if (self.root / n).is_file()), None
        )
        if self.sidecar is None:
            raise FileNotFoundError(
                f"no metadata sidecar in {self.root} (expected one of {', '.join(SIDECAR_NAMES)})"
            )

    def _rows(self) -> Iterator[tuple[int, dict[str, Any] | FolderEntryError]]:
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
                        FolderEntryError(None, f"line {number}: not JSON ({exc.msg})", number),
                    )
                    continue
                if not isinstance(row, dict):
                    yield (
                        number,
                        FolderEntryError(None, f"line {number}: not a JSON object", number),
                    )
                    continue
                yield number, row
        else:
            reader = csv.DictReader(io.StringIO(content))
            for number, row in enumerate(reader, start=2):
                if None in row:  # more cells than header columns
                    yield (
                        number,
                        FolderEntryError(
                            row.get("external_id"), f"line {number}: too many cells", number
                        ),
                    )
                    continue
                yield number, {k: v for k, v in row.items() if k is not None}

    def count(self) -> int:
        return sum(1 for _ in self._rows())

    def load_all(self) -> Iterator[SourceDocument | FolderEntryError]:
        for number, row in self._rows():
            if isinstance(row, FolderEntryError):
                yield row
                continue
            yield self._document(number, row)

    def _document(self, number: int, row: dict[str, Any]) -> SourceDocument | FolderEntryError:
        external_id = str(row.get("external_id") or "").strip()
        if not external_id:
            return FolderEntryError(None, f"line {number}: external_id is missing", number)
        rel = str(row.get("path") or "").strip()
        if not rel:
            return FolderEntryError(external_id, "path is missing", number)
        file_path = (self.root / rel).resolve()
        if self.root not in file_path.parents:
            return FolderEntryError(external_id, f"path {rel!r} points outside the folder", number)
        if not file_path.is_file():
            return FolderEntryError(external_id, f"file {rel!r} is missing on disk", number)
        size = file_path.stat().st_size
        if size > MAX_FILE_BYTES:
            return FolderEntryError(external_id, f"file {rel!r} is larger than 50 MB", number)
        try:
            acl = parse_acl(row.get("acl"))
            modified = _parse_time(_tri(row, "modified_at") or None)
        except (ValueError, json.JSONDecodeError) as exc:
            return FolderEntryError(external_id, f"bad metadata: {exc}", number)
        suffix = file_path.suffix.lower()
        mime = EXTRA_TYPES.get(suffix) or mimetypes.guess_type(file_path.name)[0]
        return SourceDocument(
            source=self.source,
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
