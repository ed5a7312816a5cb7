"""Relevance sets in the database, their visibility through the walls, import and export.

A set has queries; a query has graded judgements (0-3) of documents or chunks, each by one
person at one time. Target ids:

- document: ``<source>:<external_id>``, e.g. ``rechtspraak:ECLI:NL:HR:1996:AA2015`` (case
  law is ingested with source "rechtspraak" and the ECLI as external id);
- chunk: the chunk id, ``<source>:<external_id>:<16 hex>``.

File formats (``ewall eval import/export``):

- TREC: a queries file ``qid<TAB>text`` and a qrels file ``qid 0 docid grade``. A chunk
  target is written ``chunk:<chunk_id>``; whitespace and ``%`` inside a target id are
  percent-encoded, because qrels fields are separated by whitespace. Qrels carry one grade
  per target: the mean over raters, rounded half up.
- JSON lines: an optional header ``{"set": {"name": ..., "description": ...}}``, then one
  object per query ``{"query_key", "text", "as_person", "judgements": [{"target_kind",
  "target_id", "grade", "judged_by", "judged_at"}]}``. Every judgement is kept as it is.

Imports are administrative bulk loads of ground truth (the CLI with database access, or an
admin over the API, where each target is checked against the admin's own walls). Ratings
made on the rating page are checked against the rater's walls at the moment of rating.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from app.audit.chain import now_utc
from app.evaluation import repository as repo
from app.evaluation.repository import Judgement, QueryIn, TargetKind
from app.walls.access import Access, apply, current_access, visible_chunks

if TYPE_CHECKING:
    from app.db.engine import Database
    from app.walls.resolution import AccessResolver

MAX_GRADE = 3
CHUNK_PREFIX = "chunk:"
DOCUMENT_SAMPLE = 3  # chunks per document checked through app.walls.access

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_CHUNK_ID = re.compile(r"^[^\s:]+:.+:[0-9a-f]{16}$")
_DOCUMENT_ID = re.compile(r"^[^\s:]+:.+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_SPACE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # tabs, newlines ok


class FormatError(ValueError):
    """Bad input in a set, query, judgement or file; names the line when there is one."""

    def __init__(self, message: str, line: int | None = None, field: str | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.message = message
        self.line = line
        self.field = field


# --- values ----------------------------------------------------------------------------------


def check_name(value: str, what: str = "set name") -> str:
    value = value.strip()
    if not _NAME.match(value):
        raise FormatError(
            f"{what} {value[:60]!r} must be 1-100 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit",
            field=what.replace(" ", "_"),
        )
    return value


def check_target(kind: str, target_id: str) -> tuple[TargetKind, str]:
    target_id = target_id.strip()
    if len(target_id) > 2000 or _CONTROL.search(target_id):
        raise FormatError("target_id is too long or contains control characters", field="target_id")
    if kind == "chunk":
        if not _CHUNK_ID.match(target_id):
            raise FormatError(
                f"chunk target {target_id[:80]!r} must look like <source>:<external_id>:<16 hex>",
                field="target_id",
            )
        return "chunk", target_id
    if kind == "document":
        if not _DOCUMENT_ID.match(target_id):
            raise FormatError(
                f"document target {target_id[:80]!r} must look like <source>:<external_id>",
                field="target_id",
            )
        return "document", target_id
    raise FormatError(
        f"target_kind must be 'document' or 'chunk', not {kind[:20]!r}", field="target_kind"
    )


def check_grade(value: object) -> int:
    # bool is an int in Python; a JSON true must not become grade 1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_GRADE:
        raise FormatError(f"grade must be an integer 0-{MAX_GRADE}, not {value!r}", field="grade")
    return value


def document_of_chunk(chunk_id: str) -> str:
    """``<source>:<external_id>:<hash>`` -> ``<source>:<external_id>`` (the hash never holds
    a colon, external ids may: ECLIs do)."""
    return chunk_id.rsplit(":", 1)[0]


def document_target(source: str, external_id: str) -> str:
    return f"{source}:{external_id}"


# --- import and export (checked here, stored by app.evaluation.repository) ---------------


def upsert_judgements(
    conn: Connection, query_ids: dict[str, int], judgements: Sequence[Judgement]
) -> int:
    """Insert or re-grade; one row per (query, target, rater). Returns the rows written."""
    if not judgements:
        return 0
    now = now_utc()
    # one statement may not touch the same key twice: the last judgement in the input wins
    rows: dict[tuple[int, str, str, str], repo.JudgementRow] = {}
    for j in judgements:
        qid = query_ids.get(j.query_key)
        if qid is None:
            raise FormatError(f"judgement for unknown query {j.query_key!r}", field="query_key")
        rows[(qid, j.target_kind, j.target_id, j.judged_by)] = repo.JudgementRow(
            qid, j.target_kind, j.target_id, j.grade, j.judged_by, j.judged_at or now
        )
    repo.upsert_judgements(conn, list(rows.values()))
    return len(rows)


def import_queries(
    conn: Connection,
    name: str,
    description: str,
    created_by: str,
    queries: Sequence[QueryIn],
    *,
    replace: bool = False,
) -> int:
    """Create or extend a set from parsed queries; ``replace`` drops the set's other queries
    (and their judgements). A query whose text changed loses the judgements made for its old
    text (the same key now asks another question, and the old grades must not count for
    it); judgements given with it here are kept. Returns the set id."""
    keys = [q.key for q in queries]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise FormatError(f"query key {dup!r} occurs twice", field="query_key")
    set_id = repo.ensure_set(conn, check_name(name), description, created_by)
    if replace:
        repo.delete_queries_except(conn, set_id, keys)
    before = {q.key: q for q in repo.load_queries(conn, set_id)}
    changed = [
        before[q.key].query_id
        for q in queries
        if q.key in before and before[q.key].text != q.text
    ]
    repo.delete_judgements_of_queries(conn, changed)
    ids = repo.upsert_queries(conn, set_id, queries)
    upsert_judgements(conn, ids, [j for q in queries for j in q.judgements])
    return set_id


def export_queries(conn: Connection, set_id: int) -> list[QueryIn]:
    judgements = repo.load_judgements(conn, set_id)
    return [
        QueryIn(q.key, q.text, q.as_person, judgements.get(q.key, []))
        for q in repo.load_queries(conn, set_id)
    ]


# --- visibility through the walls ------------------------------------------------------------


def access_now(
    conn: Connection, resolver: AccessResolver, database: Database, person_id: str
) -> Access:
    """The person's access at this instant. The resolver caches the matrix snapshot until it
    is told a newer policy exists, so it is told: a wall raised a second ago counts."""
    # at the database's clock, read with the policy version (app/db/clock.py)
    return current_access(conn, resolver, database, person_id)


def visible_targets(
    conn: Connection, access: Access, targets: Iterable[tuple[str, str]]
) -> set[tuple[str, str]]:
    """The (kind, target_id) pairs among ``targets`` this person may read now.

    A chunk is visible when app.walls.access says so; a document when at least one of its
    chunks is. Unknown targets are simply not visible: the caller cannot tell "hidden" from
    "absent", which is the point.
    """
    wanted = set(targets)
    if not wanted or access.sees_nothing:
        return set()
    chunk_ids = {t for k, t in wanted if k == "chunk"}
    docs = sorted({t for k, t in wanted if k == "document"})
    doc_chunks: dict[str, set[str]] = defaultdict(set)
    if docs:
        split = [d.split(":", 1) for d in docs]
        # RLS is on for this read too: the lookup itself only returns the person's chunks
        apply(conn, access)
        for source, external_id, chunk_id in repo.chunks_of_documents(
            conn, [(s, e) for s, e in split], access.wall_groups, access.source_acl_ids
        ):
            doc_chunks[document_target(source, external_id)].add(chunk_id)
    # every chunk of a document carries the document's wall group, ACL and matter, so a few
    # of them answer for the whole document (and keep the check cheap for long documents)
    sample = {c for cs in doc_chunks.values() for c in sorted(cs)[:DOCUMENT_SAMPLE]}
    candidates = sorted(chunk_ids | sample)
    seen = {str(r["chunk_id"]) for r in visible_chunks(conn, access, candidates)}
    out = {("chunk", c) for c in chunk_ids if c in seen}
    out |= {("document", d) for d, cs in doc_chunks.items() if cs & seen}
    return out


# --- TREC files ------------------------------------------------------------------------------


def _encode_docid(value: str) -> str:
    return re.sub(r"[%\s]", lambda m: f"%{ord(m.group(0)):02X}", value)


def _decode_docid(value: str) -> str:
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), value)


def _content_lines(data: str) -> Iterator[tuple[int, str]]:
    for number, raw in enumerate(data.splitlines(), start=1):
        line = raw.strip()
        if line and not line.startswith("#"):
            yield number, raw.rstrip("\r\n")


def parse_queries_tsv(data: str) -> list[QueryIn]:
    out: list[QueryIn] = []
    for number, line in _content_lines(data):
        key, sep, query = line.partition("\t")
        if not sep or not query.strip():
            raise FormatError("expected 'qid<TAB>text'", number)
        try:
            out.append(QueryIn(check_name(key, "query key"), _query_text(query, number)))
        except FormatError as exc:
            raise FormatError(exc.message, number, exc.field) from None
    return out


def _query_text(value: str, line: int | None = None) -> str:
    value = " ".join(value.split())
    if not value or len(value) > 2000 or _CONTROL.search(value):
        raise FormatError("query text must be 1-2000 printable characters", line, "text")
    return value


def parse_qrels(data: str, judged_by: str) -> list[Judgement]:
    out: list[Judgement] = []
    for number, line in _content_lines(data):
        parts = line.split()
        if len(parts) != 4:
            raise FormatError("expected 'qid 0 docid grade'", number)
        qid, _iteration, docid, grade = parts
        try:
            key = check_name(qid, "query key")
            raw = _decode_docid(docid)
            kind = "chunk" if raw.startswith(CHUNK_PREFIX) else "document"
            kind_, target = check_target(kind, raw.removeprefix(CHUNK_PREFIX))
            number_ = int(grade) if re.fullmatch(r"-?\d+", grade) else grade
            out.append(Judgement(key, kind_, target, check_grade(number_), judged_by))
        except FormatError as exc:
            raise FormatError(exc.message, number, exc.field) from None
    return out


def merge_trec(queries: list[QueryIn], judgements: list[Judgement]) -> list[QueryIn]:
    by_key = {q.key: q for q in queries}
    if len(by_key) != len(queries):
        raise FormatError("a query key occurs twice in the queries file", field="query_key")
    unknown = sorted({j.query_key for j in judgements} - set(by_key))
    if unknown:
        raise FormatError(
            f"qrels name queries missing from the queries file: {unknown[:5]}", field="query_key"
        )
    for j in judgements:
        by_key[j.query_key].judgements.append(j)
    return queries


def consensus(judgements: Iterable[Judgement]) -> dict[tuple[TargetKind, str], int]:
    """One grade per target: the mean over raters, rounded half up (2.5 -> 3)."""
    grades: dict[tuple[TargetKind, str], list[int]] = defaultdict(list)
    for j in judgements:
        grades[(j.target_kind, j.target_id)].append(j.grade)
    return {t: math.floor(sum(g) / len(g) + 0.5) for t, g in grades.items()}


def format_queries_tsv(queries: Sequence[QueryIn]) -> str:
    return "".join(f"{q.key}\t{' '.join(q.text.split())}\n" for q in queries)


def format_qrels(queries: Sequence[QueryIn]) -> str:
    lines = []
    for q in queries:
        for (kind, target), grade in sorted(consensus(q.judgements).items()):
            docid = (CHUNK_PREFIX + target) if kind == "chunk" else target
            lines.append(f"{q.key} 0 {_encode_docid(docid)} {grade}\n")
    return "".join(lines)


# --- JSON lines ------------------------------------------------------------------------------


def parse_jsonl(data: str, judged_by: str) -> tuple[dict[str, str], list[QueryIn]]:
    """(header, queries). ``judged_by`` fills judgements that do not name their rater."""
    header: dict[str, str] = {}
    out: list[QueryIn] = []
    for number, line in _content_lines(data):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(f"not JSON: {exc.msg}", number) from None
        if not isinstance(obj, dict):
            raise FormatError("each line must be a JSON object", number)
        if "set" in obj:
            meta = obj["set"]
            if not isinstance(meta, dict):
                raise FormatError("'set' must be an object", number, "set")
            header = {k: str(meta[k]) for k in ("name", "description") if meta.get(k)}
            continue
        try:
            out.append(_query_from_json(obj, judged_by))
        except FormatError as exc:
            raise FormatError(exc.message, number, exc.field) from None
    return header, out


def _str_field(obj: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = obj.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 2000:
        raise FormatError(f"'{name}' must be a non-empty string", field=name)
    if _CONTROL_BUT_SPACE.search(value):
        raise FormatError(f"'{name}' must not contain control characters", field=name)
    return value.strip()


def _query_from_json(obj: dict[str, Any], judged_by: str) -> QueryIn:
    key = check_name(str(_str_field(obj, "query_key")), "query key")
    query = _query_text(str(_str_field(obj, "text")))
    as_person = _str_field(obj, "as_person", required=False)
    raw = obj.get("judgements", [])
    if not isinstance(raw, list):
        raise FormatError("'judgements' must be a list", field="judgements")
    judgements = []
    for item in raw:
        if not isinstance(item, dict):
            raise FormatError("each judgement must be an object", field="judgements")
        kind, target = check_target(
            str(item.get("target_kind", "document")), str(_str_field(item, "target_id"))
        )
        rater = _str_field(item, "judged_by", required=False) or judged_by
        at_raw = item.get("judged_at")
        at: datetime | None = None
        if at_raw is not None:
            try:
                at = datetime.fromisoformat(str(at_raw))
            except ValueError:
                raise FormatError(
                    f"judged_at {at_raw!r} is not an ISO date-time", field="judged_at"
                ) from None
            if at.tzinfo is None:
                raise FormatError("judged_at must carry a time zone", field="judged_at")
        judgements.append(Judgement(key, kind, target, check_grade(item.get("grade")), rater, at))
    return QueryIn(key, query, as_person, judgements)


def format_jsonl(
    queries: Sequence[QueryIn], *, name: str | None = None, description: str | None = None
) -> str:
    lines = []
    if name is not None:
        lines.append(
            json.dumps(
                {"set": {"name": name, "description": description or ""}}, ensure_ascii=False
            )
        )
    lines.extend(
        json.dumps(
            {
                "query_key": q.key,
                "text": q.text,
                "as_person": q.as_person,
                "judgements": [j.as_dict() for j in q.judgements],
            },
            ensure_ascii=False,
        )
        for q in queries
    )
    return "".join(line + "\n" for line in lines)
