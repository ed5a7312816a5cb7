"""The audit domain's SQL (sql/audit.sql, sql/audit_read.sql): the only module of app/audit
that runs statements. Appends advance a chain head through ewall_audit_advance, the one
definition of the chain step (migration 20261201_0021)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.db import sqlfiles


@dataclass(frozen=True)
class Appended:
    seq: int
    hash: str
    # a retrieval's: the database's clock after its chain step (audit.append_retrieval)
    appended_at: datetime | None = None


@dataclass(frozen=True)
class RetrievalFilter:
    """Narrowing of the retrieval list; every field None means "any"."""

    person_id: str | None = None
    matter_id: str | None = None
    chunk_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    purpose: str | None = None
    session_id: str | None = None
    # matters whose results never satisfy the matter or chunk filter (the reader may not
    # see them now: app/walls/visibility.py); None: every matter counts
    hidden_matters: tuple[str, ...] | None = None


@dataclass(frozen=True)
class GateEventFilter:
    person_id: str | None = None
    gate: str | None = None
    ok: bool | None = None
    session_id: str | None = None  # the session the caller named with the check
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True)
class PolicyEventFilter:
    since: datetime | None = None
    until: datetime | None = None
    object_id: str | None = None


# --- appends (the chain step is in the same statement) ----------------------------------


def insert_retrieval(conn: Connection, params: Mapping[str, Any]) -> Appended | None:
    """audit.append_retrieval: the retrieval, its results and access sets, and the chain
    step. None when ``params["fenced"]`` and the replica fence held the chain step back."""
    out = conn.execute(sqlfiles.prepared("audit.append_retrieval"), dict(params)).first()
    return None if out is None else Appended(int(out.seq), str(out.hash), out.appended_at)


def insert_policy_event(conn: Connection, params: Mapping[str, Any]) -> Appended:
    out = conn.execute(sqlfiles.prepared("audit.append_policy_event"), dict(params)).one()
    return Appended(int(out.seq), str(out.hash))


def insert_gate_event(conn: Connection, params: Mapping[str, Any]) -> Appended:
    out = conn.execute(sqlfiles.prepared("audit.append_gate_event"), dict(params)).one()
    return Appended(int(out.seq), str(out.hash))


# --- verification reads --------------------------------------------------------------


def final_before(conn: Connection, margin_s: float) -> datetime:
    found: datetime = conn.execute(
        sqlfiles.query("audit.final_before"), {"margin_s": margin_s}
    ).scalar_one()
    return found


def chain_head(conn: Connection, chain: str) -> tuple[int, str] | None:
    """(seq, hash) of a chain's head row; None when the row is missing."""
    row = conn.execute(sqlfiles.query("audit.head"), {"chain": chain}).first()
    return None if row is None else (int(row.seq), str(row.hash))


def heads(conn: Connection) -> dict[str, tuple[int, str]]:
    """Every chain's head: chain -> (seq, hash)."""
    rows = conn.execute(sqlfiles.query("audit.heads")).all()
    return {str(row.chain): (int(row.seq), str(row.hash)) for row in rows}


def try_checkpoint_lock(conn: Connection, namespace: int) -> bool:
    """The scheduled checkpoint's session lock; False when another session holds it."""
    taken = conn.execute(sqlfiles.query("audit.try_checkpoint_lock"), {"namespace": namespace})
    return bool(taken.scalar())


def checkpoint_unlock(conn: Connection, namespace: int) -> None:
    conn.execute(sqlfiles.query("audit.checkpoint_unlock"), {"namespace": namespace})


def hash_at(conn: Connection, chain: str, seq: int) -> str | None:
    """The stored hash of ``chain``'s row ``seq``; None when there is no such row."""
    row = conn.execute(sqlfiles.query("audit.hash_at"), {"chain": chain, "seq": seq}).first()
    return None if row is None else str(row.hash)


def _stream(
    conn: Connection, block: str, params: Mapping[str, Any] | None = None
) -> Iterator[dict[str, Any]]:
    result = conn.execution_options(stream_results=True, yield_per=2000).execute(
        sqlfiles.query(block), dict(params or {})
    )
    for row in result.mappings():
        yield dict(row)


def _rows(conn: Connection, block: str, after_seq: int | None) -> Iterator[dict[str, Any]]:
    """A chain's rows in order: every one, or (``after_seq``) those after it only (the
    block's ``_after`` form)."""
    if after_seq is None:
        return _stream(conn, block)
    return _stream(conn, block + "_after", {"after_seq": after_seq})


def stream_retrieval_rows(
    conn: Connection, after_seq: int | None = None
) -> Iterator[dict[str, Any]]:
    """Every retrieval (or every one after ``after_seq``) with its results (the x_ arrays),
    one row each, in chain order.

    Straight from the driver, in binary, through a server-side cursor (one statement, the
    caller's snapshot): a full verification reads every retrieval ever made, and
    SQLAlchemy's per-row result objects and the text form of the arrays and timestamps cost
    more than the database does (bench.banner). Binary gives the same values as text (a
    float8 exactly, where its text form is only as exact as ``extra_float_digits``)."""
    params = {"after_seq": None if after_seq is None else int(after_seq)}
    # the block in the driver's parameter style (:after_seq -> %(after_seq)s)
    statement = str(
        sqlfiles.query("audit.retrieval_rows_with_results").compile(dialect=conn.dialect)
    )
    driver = conn.connection.driver_connection
    if driver is None:  # pragma: no cover - SQLAlchemy always has one here
        raise RuntimeError("no driver connection")
    with driver.cursor(name=f"ewall_verify_{uuid.uuid4().hex}", binary=True) as cur:
        cur.itersize = 2000
        cur.execute(statement, params)
        names = [column.name for column in cur.description or ()]
        for values in cur:
            yield dict(zip(names, values, strict=True))


def stream_policy_events(
    conn: Connection, after_seq: int | None = None
) -> Iterator[dict[str, Any]]:
    return _rows(conn, "audit.policy_event_rows", after_seq)


def stream_gate_events(conn: Connection, after_seq: int | None = None) -> Iterator[dict[str, Any]]:
    return _rows(conn, "audit.gate_event_rows", after_seq)


def stream_access_sets(
    conn: Connection, after_seq: int | None = None
) -> Iterator[tuple[str, list[str]]]:
    """Every access set, or those the retrievals after ``after_seq`` name."""
    for row in _rows(conn, "audit.all_access_sets", after_seq):
        yield str(row["set_id"]), list(row["members"])


def first_retrieval_missing_set(conn: Connection, after_seq: int | None = None) -> int | None:
    block, params = "audit.first_retrieval_missing_set", {}
    if after_seq is not None:
        block, params = block + "_after", {"after_seq": after_seq}
    seq = conn.execute(sqlfiles.query(block), params).scalar()
    return None if seq is None else int(seq)


def first_retrieval_using_set(
    conn: Connection, set_id: str, after_seq: int | None = None
) -> int | None:
    seq = conn.execute(
        sqlfiles.query("audit.first_retrieval_using_set"),
        {"set_id": set_id, "after_seq": after_seq},
    ).scalar()
    return None if seq is None else int(seq)


# --- compliance reads ------------------------------------------------------------------


def access_sets(conn: Connection, set_ids: Sequence[str]) -> dict[str, list[str]]:
    """The members of the stored access sets among ``set_ids``."""
    if not set_ids:
        return {}
    rows = conn.execute(sqlfiles.query("audit.access_sets"), {"set_ids": list(set_ids)})
    return {str(r.set_id): list(r.members) for r in rows}


def results_for(conn: Connection, retrieval_ids: Sequence[uuid.UUID]) -> list[dict[str, Any]]:
    """The result rows of these retrievals, by retrieval and rank."""
    if not retrieval_ids:
        return []
    rows = conn.execute(
        sqlfiles.query("audit_read.results_for"), {"retrieval_ids": list(retrieval_ids)}
    ).mappings()
    return [dict(r) for r in rows]


def retrieval(conn: Connection, retrieval_id: uuid.UUID) -> dict[str, Any] | None:
    row = (
        conn.execute(sqlfiles.query("audit_read.retrieval"), {"retrieval_id": retrieval_id})
        .mappings()
        .first()
    )
    return None if row is None else dict(row)


AuditFilter = RetrievalFilter | PolicyEventFilter | GateEventFilter

_LIST_BLOCKS: dict[type[AuditFilter], str] = {
    RetrievalFilter: "audit_read.list_retrievals",
    PolicyEventFilter: "audit_read.list_policy_events",
    GateEventFilter: "audit_read.list_gate_events",
}


def list_newest_first(
    conn: Connection, where: AuditFilter, *, before_seq: int | None, limit: int
) -> list[dict[str, Any]]:
    """Rows of the log that ``where`` filters (retrievals, policy events or gate events),
    newest first, at most ``limit``, below ``before_seq`` when given."""
    # psycopg sends a list, not a tuple, as an array
    fields = {k: list(v) if isinstance(v, tuple) else v for k, v in where.__dict__.items()}
    params = {**fields, "before_seq": before_seq, "limit": limit}
    rows = conn.execute(sqlfiles.query(_LIST_BLOCKS[type(where)]), params).mappings()
    return [dict(r) for r in rows]


def last_retrieval_seq(conn: Connection) -> int | None:
    seq = conn.execute(sqlfiles.query("audit_read.last_retrieval_seq")).scalar_one()
    return None if seq is None else int(seq)


def export_page(
    conn: Connection,
    *,
    since: datetime | str | None,
    until: datetime | str | None,
    after_seq: int | None,
    upto: int,
    limit: int,
) -> list[dict[str, Any]]:
    """The first ``limit`` retrievals in the window after ``after_seq`` and at or before
    ``upto``, oldest first."""
    result = conn.execute(
        sqlfiles.query("audit_read.export_retrievals"),
        {"since": since, "until": until, "after_seq": after_seq, "upto": upto, "limit": limit},
    )
    return [dict(row) for row in result.mappings()]
