"""Compliance reads: who saw what, when; chain verification; export."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.audit import chain, repository
from app.audit.chain import RESULT_FIELDS, export_json, iso, retrieval_fields
from app.audit.repository import (
    AuditFilter,
    GateEventFilter,
    PolicyEventFilter,
    RetrievalFilter,
)
from app.auth import keys
from app.errors import NotFound, Unprocessable, envelope
from app.settings import Settings
from app.types import id_spellings
from app.walls.visibility import MatterView, MaySee

_MAX_SEQ = 2**63 - 1
_CURSOR = re.compile(r"^[A-Za-z0-9_-]{27}$")  # 20 bytes, unpadded base64url
_MAC_BYTES = 12


def cursor_key(settings: Settings) -> bytes:
    """The paging cursors' HMAC key (EWALL_CURSOR_SECRET, else a key no one outside knows)."""
    return keys.cursor_key(settings)


def _mac(key: bytes, kind: str, seq: int) -> bytes:
    return hmac.new(key, f"{kind}:{seq}".encode(), hashlib.sha256).digest()[:_MAC_BYTES]


def encode_cursor(seq: int, *, key: bytes, kind: str) -> str:
    """An opaque cursor: the last seq of a page and an HMAC binding it to its list."""
    raw = seq.to_bytes(8, "big") + _mac(key, kind, seq)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, *, key: bytes, kind: str) -> int | None:
    """The seq of a cursor this service signed for this list; 422 invalid_cursor otherwise."""
    if not cursor:
        return None
    invalid = Unprocessable("invalid_cursor", "The cursor is not valid.", field="cursor")
    if not _CURSOR.match(cursor):
        raise invalid
    raw = base64.urlsafe_b64decode(cursor + "=")
    seq = int.from_bytes(raw[:8], "big")
    if not 0 < seq <= _MAX_SEQ or not hmac.compare_digest(raw[8:], _mac(key, kind, seq)):
        raise invalid
    return seq


Items = Callable[[Connection, list[dict[str, Any]]], list[dict[str, Any]]]


def _sets(conn: Connection, rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    ids = sorted(
        {r["allowed_wall_groups_set"] for r in rows} | {r["source_principals_set"] for r in rows}
    )
    return repository.access_sets(conn, ids)


def _retrieval_dict(
    row: Mapping[str, Any], results: list[dict[str, Any]], sets: dict[str, list[str]]
) -> dict[str, Any]:
    return {
        **retrieval_fields(row),
        "seq": row["seq"],
        "allowed_wall_groups": sets.get(row["allowed_wall_groups_set"], []),
        "source_principals": sets.get(row["source_principals_set"], []),
        "session_id": row["session_id"],
        "session_matter_id": row["session_matter_id"],
        "session_scope": row["session_scope"],
        "query_model": row.get("query_model"),
        "hash": row["hash"],
        "prev_hash": row["prev_hash"],
        "results": results,
    }


def _results(conn: Connection, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[dict[str, Any]]]:
    out: dict[uuid.UUID, list[dict[str, Any]]] = {i: [] for i in ids}
    for r in repository.results_for(conn, ids):
        out[r["retrieval_id"]].append({f: r[f] for f in RESULT_FIELDS})
    return out


def _retrieval_items(conn: Connection, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    results = _results(conn, [r["retrieval_id"] for r in rows])
    sets = _sets(conn, rows)
    return [_retrieval_dict(r, results[r["retrieval_id"]], sets) for r in rows]


# the columns an event item shows as stored, after event_id, seq and at
_POLICY_EVENT_FIELDS = (
    "actor",
    "action",
    "object_type",
    "object_id",
    "reason",
    "details",
    "policy_version",
    "hash",
)
_GATE_EVENT_FIELDS = ("person_id", "gate", "ok", "request", "outcome", "hash", "prev_hash")


def _event_items(fields: tuple[str, ...]) -> Items:
    def items(_conn: Connection, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                "event_id": str(r["event_id"]),
                "seq": r["seq"],
                "at": iso(r["at"]),
                **{f: r[f] for f in fields},
            }
            for r in rows
        ]

    return items


# per list: the cursor's kind (a cursor of one list is invalid for another) and its items
_LISTS: dict[type[AuditFilter], tuple[str, Items]] = {
    RetrievalFilter: ("retrievals", _retrieval_items),
    PolicyEventFilter: ("policy-events", _event_items(_POLICY_EVENT_FIELDS)),
    GateEventFilter: ("gate-events", _event_items(_GATE_EVENT_FIELDS)),
}


def _filter_digest(where: AuditFilter) -> str:
    """The caller's filters, which a cursor is signed with: a cursor taken under one
    person_id and sent with another silently skipped that person's rows above its seq (a
    check of 2026-12-06). What the reader may see now (hidden_matters) is not the caller's
    filter and may change between pages."""
    fields = sorted(
        (f.name, repr(getattr(where, f.name)))
        for f in dataclasses.fields(where)
        if f.name != "hidden_matters"
    )
    return hashlib.sha256(repr(fields).encode()).hexdigest()[:16]


def _page(
    conn: Connection, where: AuditFilter, *, limit: int, cursor: str | None, cursor_secret: bytes
) -> dict[str, Any]:
    """One page of a list, newest first: the cursor (signed for its list) is the last seq of
    the previous page; one row more than ``limit`` is read to know whether a next page is."""
    kind, items = _LISTS[type(where)]
    kind = f"{kind}:{_filter_digest(where)}"
    before_seq = decode_cursor(cursor, key=cursor_secret, kind=kind)
    rows = repository.list_newest_first(conn, where, before_seq=before_seq, limit=limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    return {
        "items": items(conn, rows),
        "next_cursor": encode_cursor(rows[-1]["seq"], key=cursor_secret, kind=kind)
        if more and rows
        else None,
    }


def list_retrievals(
    conn: Connection,
    *,
    person_id: str | None,
    matter_id: str | None,
    chunk_id: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    cursor: str | None,
    purpose: str | None = None,
    cursor_secret: bytes,
    session_id: str | None = None,
    view: MatterView | None = None,
) -> dict[str, Any]:
    """A page of retrievals. With ``view`` (a reader who may not see every matter) the
    matter and chunk filters ignore results of hidden matters, and the page's items are
    withheld by ``withhold_matters``; None: the compliance view, everything as stored."""
    hidden = None
    if view is not None and not view.full:
        hidden = tuple(view.hidden or ())
        if matter_id is not None and not view.may_see(matter_id):
            # a matter unknown to the matrix may still be refused (an inactive reader)
            hidden = (*hidden, matter_id)
        # results recorded under a hidden matter's id decomposed (before ids were read in
        # NFC; audit rows are never rewritten) are that matter's: the filters match them too
        hidden = tuple(dict.fromkeys(h for m in hidden for h in id_spellings(m)))
    where = RetrievalFilter(
        person_id=person_id,
        matter_id=matter_id,
        chunk_id=chunk_id,
        since=since,
        until=until,
        purpose=purpose,
        session_id=session_id,
        hidden_matters=hidden,
    )
    page = _page(conn, where, limit=limit, cursor=cursor, cursor_secret=cursor_secret)
    if view is not None:
        withhold_matters(page["items"], view.may_see)
    return page


def withhold_matters(items: list[dict[str, Any]], may_see: MaySee) -> None:
    """Blank the results (and the session binding) that name a matter the reader may not see
    now: the rank stays, so the reader knows something was returned, but not from where.
    The one withholding of audit items; every route a non-compliance reader can reach goes
    through it (``list_retrievals`` given a view, ``withhold`` for a single item)."""
    for item in items:
        filters = item.get("filters") or {}
        if filters.get("matter_ids"):
            filters["matter_ids"] = [m for m in filters["matter_ids"] if may_see(m)]
        bound = item.get("session_matter_id")
        if bound is not None and not may_see(bound):
            item["session_matter_id"] = None
        for result in item["results"]:
            matter = result["matter_id"]
            if matter is not None and not may_see(matter):
                result.update(chunk_id=None, matter_id=None, content_sha256=None, withheld=True)


def get_retrieval(conn: Connection, retrieval_id: str) -> dict[str, Any]:
    """One retrieval as stored (the compliance view); readers with a narrower view pass the
    item through ``withhold``."""
    try:
        parsed = uuid.UUID(retrieval_id)
    except ValueError:
        raise NotFound("Retrieval", retrieval_id) from None
    row = repository.retrieval(conn, parsed)
    if row is None:
        raise NotFound("Retrieval", retrieval_id)
    return _retrieval_items(conn, [row])[0]


def withhold(item: dict[str, Any], view: MatterView) -> dict[str, Any]:
    """``item`` as a reader with ``view`` may read it."""
    if not view.full:
        withhold_matters([item], view.may_see)
    return item


EXPORT_PAGE = 500  # retrievals read per transaction of an export

# Whether the reader of an export may still read it, asked in a transaction: None when they
# may, else the reason they may not (a sentence for them).
Standing = Callable[[Connection], str | None]


def export_stopped(reason: str, details: dict[str, Any] | None = None) -> str:
    """The last line of an export whose reader lost the right to it part way: the error
    envelope, so a reader of JSON lines tells it from a retrieval (which has no "error")."""
    return json.dumps(envelope("export_stopped", reason, details))


def final_before(transaction: Callable[[], AbstractContextManager[Connection]]) -> datetime:
    """The instant before which the retrievals chain is final: a search resolved earlier is
    recorded by now, or never (app.audit.chain.APPEND_LAG_MAX_S), and no append still has to
    commit (sql/audit.sql, final_before)."""
    with transaction() as conn:
        return repository.final_before(conn, chain.FINAL_AFTER_S)


def export_lines(
    transaction: Callable[[], AbstractContextManager[Connection]],
    *,
    since: datetime | str | None,
    until: datetime | str | None,
    after_seq: int | None = None,
    page: int | None = None,
    standing: Standing | None = None,
) -> Iterator[str]:
    """One JSON line per retrieval, in chain order. ``after_seq``: only those after it (the
    last ``seq`` a previous export wrote), so exports continue one another without gaps.

    ``standing``: asked in each page's transaction, before the page is read, whether the
    reader may still have it, so that a person deactivated (or whose token expired) while
    the export runs receives no page read after: the roles checked when it began do not
    cover its end. Refused, the export ends with one line in the error envelope (code
    ``export_stopped``, the reason, and the ``after_seq`` to continue from) instead.

    Read a page at a time, each in a short transaction of its own (``transaction``), and
    written out after it ended: a client that reads slowly, or stops reading, holds no
    connection (a fuzz saw 16 stalled downloads take every connection of the pool, so that
    every search failed). Sequence numbers follow commit order, so paging by them skips no
    row; the export ends at the chain's head as it stood when it began."""
    page = EXPORT_PAGE if page is None else page
    last, upto = after_seq, None
    while True:
        with transaction() as conn:
            refused = None if standing is None else standing(conn)
            if refused is None:
                if upto is None:
                    upto = repository.last_retrieval_seq(conn)
                    if upto is None:
                        return  # no retrieval at all
                rows = repository.export_page(
                    conn, since=since, until=until, after_seq=last, upto=upto, limit=page
                )
                items = _retrieval_items(conn, rows) if rows else []
        if refused is not None:
            yield export_stopped(refused, {"after_seq": last}) + "\n"
            return
        yield from (export_json(i) + "\n" for i in items)
        if len(rows) < page:
            return
        last = int(rows[-1]["seq"])


def list_policy_events(
    conn: Connection,
    *,
    since: datetime | None,
    until: datetime | None,
    object_id: str | None,
    limit: int,
    cursor: str | None,
    cursor_secret: bytes,
) -> dict[str, Any]:
    where = PolicyEventFilter(since=since, until=until, object_id=object_id)
    return _page(conn, where, limit=limit, cursor=cursor, cursor_secret=cursor_secret)


def list_gate_events(
    conn: Connection,
    *,
    person_id: str | None,
    gate: str | None,
    ok: bool | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    cursor: str | None,
    cursor_secret: bytes,
    session_id: str | None = None,
) -> dict[str, Any]:
    """The gates chain, newest first: checks, refusals and probes, hashes instead of text."""
    where = GateEventFilter(
        person_id=person_id, gate=gate, ok=ok, session_id=session_id, since=since, until=until
    )
    return _page(conn, where, limit=limit, cursor=cursor, cursor_secret=cursor_secret)
