"""Compliance reads: who saw what, when; chain verification; export."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, text

from app.audit.chain import canonical_json, iso
from app.db import sqlfiles
from app.errors import NotFound, Unprocessable


def encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"seq:{seq}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int | None:
    if not cursor:
        return None
    invalid = Unprocessable("invalid_cursor", "The cursor is not valid.", field="cursor")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        raw = base64.urlsafe_b64decode(padded.encode()).decode()
    except (ValueError, UnicodeDecodeError):
        raise invalid from None
    prefix, _, value = raw.partition(":")
    if prefix != "seq" or not value.isdigit():
        raise invalid
    return int(value)


def _sets(conn: Connection, rows: list[Any]) -> dict[str, list[str]]:
    ids = sorted(
        {r["allowed_wall_groups_set"] for r in rows} | {r["source_principals_set"] for r in rows}
    )
    if not ids:
        return {}
    return {
        r["set_id"]: list(r["members"])
        for r in conn.execute(sqlfiles.query("audit.access_sets"), {"set_ids": ids}).mappings()
    }


def _retrieval_dict(
    row: Any, results: list[dict[str, Any]], sets: dict[str, list[str]]
) -> dict[str, Any]:
    return {
        "retrieval_id": str(row["retrieval_id"]),
        "seq": row["seq"],
        "at": iso(row["at"]),
        "person_id": row["person_id"],
        "roles": list(row["roles"]),
        "purpose": row["purpose"],
        "query": row["query"],
        "mode": row["mode"],
        "k": row["k"],
        "filters": row["filters"],
        "allowed_wall_groups": sets.get(row["allowed_wall_groups_set"], []),
        "source_principals": sets.get(row["source_principals_set"], []),
        "allowed_wall_groups_set": row["allowed_wall_groups_set"],
        "source_principals_set": row["source_principals_set"],
        "policy_version": row["policy_version"],
        "model": row["model"],
        "prompt_version": row["prompt_version"],
        "strategy": row["strategy"],
        "took_ms": row["took_ms"],
        "result_count": row["result_count"],
        "session_id": row["session_id"],
        "session_matter_id": row["session_matter_id"],
        "session_scope": row["session_scope"],
        "hash": row["hash"],
        "prev_hash": row["prev_hash"],
        "results": results,
    }


def _results(conn: Connection, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[dict[str, Any]]]:
    out: dict[uuid.UUID, list[dict[str, Any]]] = {i: [] for i in ids}
    if not ids:
        return out
    for r in conn.execute(
        sqlfiles.query("audit_read.results_for"), {"retrieval_ids": ids}
    ).mappings():
        out[r["retrieval_id"]].append(
            {
                "rank": r["rank"],
                "chunk_id": r["chunk_id"],
                "matter_id": r["matter_id"],
                "content_sha256": r["content_sha256"],
                "score": r["score"],
            }
        )
    return out


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
    session_id: str | None = None,
) -> dict[str, Any]:
    rows = list(
        conn.execute(
            sqlfiles.query("audit_read.list_retrievals"),
            {
                "person_id": person_id,
                "matter_id": matter_id,
                "chunk_id": chunk_id,
                "since": since,
                "until": until,
                "before_seq": decode_cursor(cursor),
                "limit": limit + 1,
                "purpose": purpose,
                "session_id": session_id,
            },
        ).mappings()
    )
    more = len(rows) > limit
    rows = rows[:limit]
    results = _results(conn, [r["retrieval_id"] for r in rows])
    sets = _sets(conn, rows)
    items = [_retrieval_dict(r, results[r["retrieval_id"]], sets) for r in rows]
    return {
        "items": items,
        "next_cursor": encode_cursor(rows[-1]["seq"]) if more and rows else None,
    }


def withhold_matters(items: list[dict[str, Any]], may_see: Callable[[str], bool]) -> None:
    """Blank the results (and the session binding) that name a matter the reader may not see
    now: the rank stays, so the reader knows something was returned, but not from where."""
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
    try:
        parsed = uuid.UUID(retrieval_id)
    except ValueError:
        raise NotFound("Retrieval", retrieval_id) from None
    row = (
        conn.execute(
            text("SELECT * FROM audit_retrievals WHERE retrieval_id = :id"), {"id": parsed}
        )
        .mappings()
        .first()
    )
    if row is None:
        raise NotFound("Retrieval", retrieval_id)
    return _retrieval_dict(row, _results(conn, [parsed])[parsed], _sets(conn, [row]))


def export_lines(
    conn: Connection, *, since: datetime | str | None, until: datetime | str | None
) -> Iterator[str]:
    rows = (
        conn.execution_options(stream_results=True, yield_per=1000)
        .execute(sqlfiles.query("audit_read.export_retrievals"), {"since": since, "until": until})
        .mappings()
    )
    batch: list[Any] = []

    def flush(batch: list[Any]) -> Iterator[str]:
        results = _results(conn, [r["retrieval_id"] for r in batch])
        sets = _sets(conn, batch)
        for r in batch:
            yield canonical_json(_retrieval_dict(r, results[r["retrieval_id"]], sets)) + "\n"

    for row in rows:
        batch.append(row)
        if len(batch) >= 500:
            yield from flush(batch)
            batch = []
    if batch:
        yield from flush(batch)


def list_policy_events(
    conn: Connection,
    *,
    since: datetime | None,
    until: datetime | None,
    object_id: str | None,
    limit: int,
    cursor: str | None,
) -> dict[str, Any]:
    rows = list(
        conn.execute(
            sqlfiles.query("audit_read.list_policy_events"),
            {
                "since": since,
                "until": until,
                "object_id": object_id,
                "before_seq": decode_cursor(cursor),
                "limit": limit + 1,
            },
        ).mappings()
    )
    more = len(rows) > limit
    rows = rows[:limit]
    items = [
        {
            "event_id": str(r["event_id"]),
            "seq": r["seq"],
            "at": iso(r["at"]),
            "actor": r["actor"],
            "action": r["action"],
            "object_type": r["object_type"],
            "object_id": r["object_id"],
            "reason": r["reason"],
            "details": r["details"],
            "policy_version": r["policy_version"],
            "hash": r["hash"],
        }
        for r in rows
    ]
    return {
        "items": items,
        "next_cursor": encode_cursor(rows[-1]["seq"]) if more and rows else None,
    }
