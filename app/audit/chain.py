"""Hash chains over the append-only audit tables.

Each entry's hash is ``sha256(prev_hash | seq | canonical_json(entry))``. The canonical JSON
is built from the stored columns only, so verification recomputes it from what a reader sees:
an edited column, a deleted, swapped or inserted row all break the chain. The appends run in
the caller's transaction (a search and its audit row commit together or not at all).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any, Literal

from sqlalchemy import Connection, event

from app.audit import repository
from app.errors import AppError
from app.types import DISPLAY_CONTROLS

GENESIS = "0" * 64

CHAINS = ("retrievals", "policy", "gates")

# The gates chain's gate names: every value gate_events.gate holds, and so what
# GET /v1/audit/gate-events filters on (an unknown name there is a 422, not an empty page)
GateName = Literal["citations", "grounding", "session", "retrieval_read", "throttle"]
# ... and every value audit_retrievals.purpose holds: a search, a rater's page (/rate), an
# evaluation run, and the rows bench/ writes into the databases it measures
Purpose = Literal["search", "rating", "evaluation", "benchmark", "bench"]


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


# what json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
# default=_default) builds on every call, built once: the same encode(), so the same bytes
# (an encoder keeps no state between calls; a full verification encodes every row)
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default
)


def canonical_json(obj: Any) -> str:
    return _CANONICAL.encode(obj)


def _json_escape(found: re.Match[str]) -> str:
    return json.dumps(found[0])[1:-1]  # "\u202e"; a tag character as its surrogate pair


def escape_display_controls(json_text: str) -> str:
    """JSON text with each display control written as its escape (``\\u202e``): the same
    document to any JSON reader. Outside strings JSON holds none of them, so every one
    replaced is inside a string."""
    return DISPLAY_CONTROLS.sub(_json_escape, json_text)


def export_json(obj: Any) -> str:
    """``canonical_json`` as the audit's exports write it: each display control
    (``app.types.DISPLAY_CONTROLS``: a bidi override, a direction mark, a zero-width space)
    written as a JSON escape (``\\u202e``), which reads back as the same string. A line
    holds only such escapes where the record holds the character, so the export stays the
    exact record, and no viewer of the file (an editor, a pager, a browser) runs an override
    in a question over the rest of the line."""
    return escape_display_controls(canonical_json(obj))


def _jsonb_number(text: str) -> float | int:
    """A JSON fraction as PostgreSQL's jsonb gives it back: numeric has no negative zero
    ("-0.0" reads back as 0.0), and a number of 1e16 or more, which Python writes with an
    exponent ("1e+16"), reads back as the integer it is. Without this, an event holding
    either was reported as a row edited by every verification."""
    value = float(text)
    if value == 0:
        return 0.0
    if abs(value) >= 1e16:
        return int(Decimal(text))
    return value


def as_stored(value: Any) -> Any:
    """``value`` as a jsonb column will give it back to the verifier: the hash of an append
    must cover exactly that."""
    return json.loads(canonical_json(value), parse_float=_jsonb_number)


def iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat()


def chain_hash(prev_hash: str, seq: int, canonical: str) -> str:
    return hashlib.sha256(f"{prev_hash}|{seq}|{canonical}".encode()).hexdigest()


def now_utc() -> datetime:
    """This host's clock: for what only this process reads (a label, a file name, a report's
    time). What decides access, and what the audit orders by, is the database's clock
    (app.db.clock), the one clock every host shares."""
    return datetime.now(UTC)


# A search appends its retrieval at most this long after the instant its access was resolved
# at (its ``at``; the chain orders by seq, not by time): a later append is refused, and the
# search returns nothing (app.search.service). So a row whose ``at`` lies in a window that
# ended longer ago than FINAL_AFTER_S can no longer arrive, and an export of that window is
# final (the export says from when: X-Audit-Final-Before); without the bound, a search still
# running could commit a row with an earlier ``at`` into a window already exported.
# All three instants are the database's clock: ``at`` (app.db.clock; a replica's, bounded by
# the fence to the primary's: sql/replica.sql), the append's (audit.append_retrieval returns
# it) and the export's (audit.final_before), so no host's clock enters the argument.
APPEND_LAG_MAX_S = 120.0
FINAL_AFTER_S = APPEND_LAG_MAX_S + 10.0  # and a commit that follows its check a little late


# --- canonical forms, one per chain (they define what the hash covers) ---------------------


SESSION_FIELDS = ("session_id", "session_matter_id", "session_scope")
# Covered by the hash only when set, like the session fields: rows written before the query's
# model was recorded (NULL) hash exactly as they did then (migration 20261201_0030).
OPTIONAL_FIELDS = (*SESSION_FIELDS, "query_model")
RESULT_FIELDS = ("rank", "sub_rank", "chunk_id", "matter_id", "content_sha256", "score")


def result_order(result: Mapping[str, Any]) -> tuple[int, int]:
    """A result's place: its hit's rank, then 0 for the hit itself and 1, 2, ... for the
    other sections of the hit's document that a collapsed search named under it."""
    return int(result["rank"]), int(result.get("sub_rank") or 0)


def _canonical_result(result: Mapping[str, Any]) -> dict[str, Any]:
    out = {f: result[f] for f in ("rank", "chunk_id", "matter_id", "content_sha256", "score")}
    # named only when above 0: rows stored before sections were audited (all hits) hash
    # exactly as they did then (migration 20261202_0037)
    if result.get("sub_rank"):
        out["sub_rank"] = int(result["sub_rank"])
    return out


# The columns a retrieval row carries as they are, in the hash and in the compliance API.
RETRIEVAL_FIELDS = (
    "person_id", "purpose", "query", "mode", "k", "filters", "allowed_wall_groups_set",
    "source_principals_set", "policy_version", "model", "prompt_version", "strategy",
    "took_ms", "result_count",
)  # fmt: skip


def retrieval_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """A retrieval row's own fields as JSON values (without session, hashes or results)."""
    return {
        "retrieval_id": str(row["retrieval_id"]),
        "at": iso(row["at"]),
        "roles": list(row["roles"]),
        **{name: row[name] for name in RETRIEVAL_FIELDS},
    }


def retrieval_canonical(row: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> str:
    return _retrieval_canonical(
        row, [_canonical_result(r) for r in sorted(results, key=result_order)]
    )


def _retrieval_canonical(row: Mapping[str, Any], canonical_results: list[dict[str, Any]]) -> str:
    """``canonical_results``: the results' canonical forms in result order."""
    # The session fields are covered only when set: rows written before sessions existed
    # (all three NULL) hash exactly as they did then.
    session = {k: row[k] for k in OPTIONAL_FIELDS if row.get(k) is not None}
    return canonical_json({**session, **retrieval_fields(row), "results": canonical_results})


def policy_canonical(row: Mapping[str, Any]) -> str:
    return canonical_json(
        {
            "event_id": str(row["event_id"]),
            "at": iso(row["at"]),
            "actor": row["actor"],
            "action": row["action"],
            "object_type": row["object_type"],
            "object_id": row["object_id"],
            "reason": row["reason"],
            "details": row["details"],
            "policy_version": row["policy_version"],
        }
    )


def gate_canonical(row: Mapping[str, Any]) -> str:
    return canonical_json(
        {
            "event_id": str(row["event_id"]),
            "at": iso(row["at"]),
            "person_id": row["person_id"],
            "gate": row["gate"],
            "ok": row["ok"],
            "request": row["request"],
            "outcome": row["outcome"],
        }
    )


# --- appends ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Retrieval:
    """One retrieval as a search audits it: the row's own fields, the allowed wall groups and
    principals as lists (stored once per distinct set, the row names the set's id)."""

    retrieval_id: uuid.UUID
    at: datetime
    person_id: str
    roles: list[str]
    purpose: Purpose
    query: str
    mode: str
    k: int
    filters: dict[str, Any]
    allowed_wall_groups: Sequence[str]
    source_principals: Sequence[str]
    policy_version: int
    model: str | None
    prompt_version: str | None
    strategy: str
    took_ms: float
    result_count: int
    session_id: str | None = None
    session_matter_id: str | None = None
    session_scope: str | None = None
    query_model: str | None = None


@dataclass(frozen=True)
class RetrievedChunk:
    """A chunk the response named: its hit's rank, and 0 for the hit itself or 1, 2, ... for
    the other sections a collapsed search listed under it (result_order)."""

    rank: int
    chunk_id: str
    matter_id: str | None
    content_sha256: str
    score: float
    sub_rank: int = 0


Appended = repository.Appended


def access_set_id(members: Iterable[str]) -> str:
    """Content address of a set of wall groups or principals."""
    return hashlib.sha256(canonical_json(sorted(set(members))).encode()).hexdigest()


_STORED_SETS: dict[str, set[str]] = {}
_STORED_LOCK = threading.Lock()


def _stored_sets(conn: Connection) -> set[str]:
    """Access-set ids known to be committed in this database (filled after commits only)."""
    key = conn.engine.url.render_as_string(hide_password=True)
    with _STORED_LOCK:
        known = _STORED_SETS.setdefault(key, set())
        if len(known) > 100_000:
            known.clear()
        return known


def forget_stored_sets() -> None:
    """After an append failed: the database may have lost sets this process saw committed
    (a point-in-time restore, a failover to a lagging standby), and a row naming one fails
    its foreign key for ever. The next appends send their members again."""
    with _STORED_LOCK:
        _STORED_SETS.clear()


@lru_cache(maxsize=4096)
def _access_set(members: tuple[str, ...]) -> tuple[list[str], str]:
    """(sorted members, set id); searches of one person under one policy pass the same
    tuple, so the hashing of a thousand group ids happens once."""
    ordered = sorted(set(members))
    return ordered, access_set_id(ordered)


@dataclass(frozen=True)
class Fence:
    """The allowed sets a replica search used: the primary appends its audit row only if
    every returned chunk is still visible under them at the same policy version."""

    wall_groups: tuple[str, ...]
    source_acl_ids: tuple[str, ...]


def append_retrieval(
    conn: Connection,
    entry: Retrieval,
    results: Sequence[RetrievedChunk],
    *,
    within_s: float | None = None,
) -> Appended:
    """Write one retrieval and its results. Results go first (their FK is deferred); the
    chain step, which locks the chain head until commit, comes last. ``within_s``: refuse
    (503, the caller rolls back) when the row went in later than that after ``entry.at``,
    the wait for the chain head included (APPEND_LAG_MAX_S, for a search)."""
    out = repository.insert_retrieval(
        conn, _retrieval_params(conn, entry, results, None, within_s)
    )
    if out is None:  # no chain head to advance (a row a superuser deleted): fail closed
        raise AppError(
            "audit_unavailable",
            "The audit chain has no head to append to, so the search returns nothing.",
            503,
        )
    _in_time(entry, within_s, out)
    return out


def append_fenced_retrieval(
    conn: Connection,
    entry: Retrieval,
    results: Sequence[RetrievedChunk],
    fence: Fence,
    *,
    within_s: float | None = None,
) -> Appended | None:
    """``append_retrieval`` gated on the replica fence in the same statement (sql/audit.sql);
    None when the fence failed: the chain head did not move and the caller must roll back.
    The fence also holds the replica's ``entry.at`` to the primary's clock (within
    ``within_s`` behind it, not ahead, no wall boundary between: sql/replica.sql)."""
    out = repository.insert_retrieval(
        conn, _retrieval_params(conn, entry, results, fence, within_s)
    )
    if out is not None:
        _in_time(entry, within_s, out)
    return out


def _in_time(entry: Retrieval, within_s: float | None, out: Appended) -> None:
    """Both instants are the database's: ``entry.at`` and the append's own."""
    if within_s is None:
        return
    if out.appended_at is None:  # audit.append_retrieval returns it: never a host's clock
        raise RuntimeError("the retrieval's append returned no instant")
    if (out.appended_at - entry.at).total_seconds() > within_s:
        raise AppError(
            "audit_unavailable",
            "The search took too long to be recorded in the audit log, so it returns nothing.",
            503,
        )


def _retrieval_params(
    conn: Connection,
    entry: Retrieval,
    chunks: Sequence[RetrievedChunk],
    fence: Fence | None,
    within_s: float | None = None,
) -> dict[str, Any]:
    # the stored row's form, which the hash and the verifier read (Mapping, like a stored row);
    # shallow: asdict would deep-copy a thousand allowed groups on every search
    row = dict(vars(entry))
    results = [vars(chunk) for chunk in chunks]
    # round-trip the JSON so the hash covers exactly what jsonb will give back
    row["filters"] = as_stored(row["filters"])
    members: dict[str, list[str] | None] = {}
    known = _stored_sets(conn)
    new_ids: list[str] = []
    for list_key, set_key in (
        ("allowed_wall_groups", "allowed_wall_groups_set"),
        ("source_principals", "source_principals_set"),
    ):
        set_members, row[set_key] = _access_set(tuple(row.pop(list_key)))
        # a set already committed need not travel again (a thousand group ids per search)
        members[set_key] = None if row[set_key] in known else set_members
        if row[set_key] not in known:
            new_ids.append(row[set_key])
    if new_ids:
        event.listen(conn, "commit", lambda _c: known.update(new_ids), once=True)
    ordered = sorted(results, key=result_order)
    canonical = retrieval_canonical(row, ordered)
    params = dict(row)
    params.update(
        filters=canonical_json(row["filters"]),
        canonical=canonical,
        wall_group_members=members["allowed_wall_groups_set"],
        principal_members=members["source_principals_set"],
        result_ranks=[int(r["rank"]) for r in ordered],
        result_sub_ranks=[result_order(r)[1] for r in ordered],
        result_chunk_ids=[r["chunk_id"] for r in ordered],
        result_matter_ids=[r["matter_id"] for r in ordered],
        result_hashes=[r["content_sha256"] for r in ordered],
        result_scores=[float(r["score"]) for r in ordered],
        fenced=fence is not None,
        fence_wall_groups=list(fence.wall_groups) if fence is not None else None,
        fence_source_acl_ids=list(fence.source_acl_ids) if fence is not None else None,
        within_s=within_s,
    )
    return params


def append_policy_event(conn: Connection, row: dict[str, Any]) -> Appended:
    row = dict(row)
    row["details"] = as_stored(row["details"])
    canonical = policy_canonical(row)
    params = dict(row)
    params["details"] = canonical_json(row["details"])
    params["canonical"] = canonical
    return repository.insert_policy_event(conn, params)


def append_gate_event(
    conn: Connection,
    *,
    person_id: str,
    gate: GateName,
    ok: bool,
    request: Mapping[str, Any],
    outcome: Mapping[str, Any],
) -> Appended:
    row: dict[str, Any] = {
        "event_id": uuid.uuid4(),
        "at": now_utc(),
        "person_id": person_id,
        "gate": gate,
        "ok": ok,
        "request": as_stored(request),
        "outcome": as_stored(outcome),
    }
    canonical = gate_canonical(row)
    params = dict(row)
    params["request"] = canonical_json(row["request"])
    params["outcome"] = canonical_json(row["outcome"])
    params["canonical"] = canonical
    return repository.insert_gate_event(conn, params)


def record_refusal(
    conn: Connection,
    *,
    person_id: str,
    gate: GateName,
    request: Mapping[str, Any],
    error: AppError,
) -> Appended:
    """A refused attempt (403, 404 on a probe, 429) as a gate event, without content.

    ``request`` must hold ids, counts and hashes only: never query, draft or document text.
    The caller answers the error rather than raising it, so that the event commits.
    """
    return append_gate_event(
        conn,
        person_id=person_id,
        gate=gate,
        ok=False,
        request=request,
        outcome={"refused": {"status": error.status, "code": error.code}},
    )


# --- verification -------------------------------------------------------------------------


@dataclass
class ChainReport:
    chain: str
    ok: bool
    checked: int
    head: str
    first_bad_seq: int | None = None
    problem: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "checked": self.checked, "head": self.head}
        if not self.ok:
            out["first_bad_seq"] = self.first_bad_seq
            out["problem"] = self.problem
        return out


def verify_rows(
    chain: str,
    rows: Iterable[tuple[int, str, str, str]],
    head: tuple[int, str] | None = None,
    *,
    after: tuple[int, str] = (0, GENESIS),
) -> ChainReport:
    """rows: (seq, prev_hash, hash, canonical) in ascending seq order; head: (seq, hash).
    ``after``: the (seq, hash) the rows chain on from, the genesis unless a verified
    position (verify_chain_after); ``checked`` counts the rows given."""
    expected_seq = after[0] + 1
    prev = after[1]
    checked = 0
    for seq, prev_hash, stored_hash, canonical in rows:
        if seq != expected_seq:
            problem = (
                f"sequence gap: expected {expected_seq}, found {seq}"
                if seq > expected_seq
                else f"sequence out of order: expected {expected_seq}, found {seq}"
            )
            return ChainReport(chain, False, checked, prev, expected_seq, problem)
        if prev_hash != prev:
            return ChainReport(
                chain,
                False,
                checked,
                prev,
                seq,
                "previous-hash link broken (row removed, inserted or reordered)",
            )
        if chain_hash(prev_hash, seq, canonical) != stored_hash:
            return ChainReport(chain, False, checked, prev, seq, "hash mismatch (row edited)")
        prev = stored_hash
        checked += 1
        expected_seq += 1
    last = expected_seq - 1
    if head is not None and (head[0] != last or head[1] != prev):
        return ChainReport(
            chain,
            False,
            checked,
            prev,
            last + 1 if head[0] > last else head[0],
            f"chain head says seq {head[0]} but the log ends at seq {last} "
            "(rows removed from the end, or the head was altered)",
        )
    return ChainReport(chain, True, checked, prev)


def iter_retrieval_rows(
    conn: Connection, after_seq: int | None = None
) -> Iterator[tuple[int, str, str, str]]:
    """Every retrieval in chain order, or those after ``after_seq``, as verify_rows takes."""
    for row in repository.stream_retrieval_rows(conn, after_seq):
        yield int(row["seq"]), row["prev_hash"], row["hash"], stored_retrieval_canonical(row)


# a stored row's result arrays (sql/audit.sql), in RESULT_FIELDS order
_RESULT_ARRAYS = (
    "x_ranks", "x_sub_ranks", "x_chunk_ids", "x_matter_ids", "x_content_sha256s", "x_scores",
)  # fmt: skip


def stored_retrieval_canonical(row: Mapping[str, Any]) -> str:
    """``retrieval_canonical`` of a row as repository.stream_retrieval_rows gives it: its
    results as aligned arrays (x_ranks, ..., all NULL when it has none) in no set order.

    The same string as ``retrieval_canonical(row, results)`` with the results as dicts (a
    test holds the two together), without a dict per result built and read back: a full
    verification canonicalises every retrieval ever made. A result without a rank is no
    result, as the join this replaced read it."""
    if row["x_ranks"] is None:
        return _retrieval_canonical(row, [])
    arrays = (row[name] for name in _RESULT_ARRAYS)
    stored = [values for values in zip(*arrays, strict=True) if values[0] is not None]
    stored.sort(key=_stored_order)  # stable, on result_order's key
    return _retrieval_canonical(row, [_canonical_stored(*values) for values in stored])


def _stored_order(values: tuple[Any, ...]) -> tuple[int, int]:
    return int(values[0]), int(values[1] or 0)  # result_order


def _canonical_stored(
    rank: Any, sub_rank: Any, chunk_id: Any, matter_id: Any, content_sha256: Any, score: Any
) -> dict[str, Any]:
    """_canonical_result of one stored result."""
    out = {
        "rank": rank,
        "chunk_id": chunk_id,
        "matter_id": matter_id,
        "content_sha256": content_sha256,
        "score": score,
    }
    if sub_rank:
        out["sub_rank"] = int(sub_rank)
    return out


def _head(conn: Connection, chain: str) -> tuple[int, str] | None:
    head = repository.chain_head(conn, chain)
    return head if head is not None else (0, GENESIS)


def _verify_access_sets(conn: Connection, after_seq: int | None = None) -> ChainReport | None:
    """Each set a retrieval names (every retrieval, or those after ``after_seq``) must still
    exist and hash to its id; report the first retrieval using a missing or altered one."""
    missing = repository.first_retrieval_missing_set(conn, after_seq)
    if missing is not None:
        return ChainReport(
            "retrievals",
            False,
            0,
            GENESIS,
            missing,
            f"retrieval seq {missing} names an access set that was removed",
        )
    for set_id, members in repository.stream_access_sets(conn, after_seq):
        # a NULL member (no set the service writes has one) is an alteration, not a crash
        if not all(isinstance(m, str) for m in members) or access_set_id(members) != set_id:
            return ChainReport(
                "retrievals",
                False,
                0,
                GENESIS,
                repository.first_retrieval_using_set(conn, set_id, after_seq),
                f"access set {set_id[:12]}... was altered (its members no longer match)",
            )
    return None


def verify_chain(conn: Connection, chain: str) -> ChainReport:
    return _verify(conn, chain, None)


def verify_chain_after(conn: Connection, chain: str, after: tuple[int, str]) -> ChainReport:
    """A chain from a position an earlier full verification reached, (seq, hash): the row at
    that seq must still have that hash, and every row after it must chain on from it to the
    head. Only those rows are read (``checked`` counts them); a row at or before the
    position edited without its hash is for the next full verification to find."""
    seq, hash_ = after
    if seq > 0:
        stored = repository.hash_at(conn, chain, seq)
        if stored != hash_:
            found = "is gone" if stored is None else f"has hash {stored[:16]}..."
            return ChainReport(
                chain,
                False,
                0,
                hash_,
                seq,
                f"row {seq}, verified with hash {hash_[:16]}..., {found} (history at or "
                "before it was rewritten or removed)",
            )
    return _verify(conn, chain, after)


def _verify(conn: Connection, chain: str, after: tuple[int, str] | None) -> ChainReport:
    head = _head(conn, chain)
    start = after or (0, GENESIS)
    after_seq = None if after is None else after[0]
    if chain == "retrievals":
        report = verify_rows(chain, iter_retrieval_rows(conn, after_seq), head, after=start)
        bad_set = _verify_access_sets(conn, after_seq)
        if bad_set is not None and (
            report.ok or (bad_set.first_bad_seq or 0) < (report.first_bad_seq or 0)
        ):
            bad_set.checked = report.checked
            bad_set.head = report.head
            return bad_set
        return report
    if chain == "policy":
        rows = (
            (int(r["seq"]), r["prev_hash"], r["hash"], policy_canonical(r))
            for r in repository.stream_policy_events(conn, after_seq)
        )
        return verify_rows(chain, rows, head, after=start)
    if chain == "gates":
        rows = (
            (int(r["seq"]), r["prev_hash"], r["hash"], gate_canonical(r))
            for r in repository.stream_gate_events(conn, after_seq)
        )
        return verify_rows(chain, rows, head, after=start)
    raise ValueError(f"unknown chain {chain!r}")


def verify_all(conn: Connection) -> dict[str, Any]:
    return summarise({name: verify_chain(conn, name) for name in CHAINS})


def verify_all_after(conn: Connection, positions: Mapping[str, tuple[int, str]]) -> dict[str, Any]:
    """verify_all from the positions a full verification reached (verify_chain_after)."""
    return summarise({name: verify_chain_after(conn, name, positions[name]) for name in CHAINS})


def summarise(reports: Mapping[str, ChainReport]) -> dict[str, Any]:
    bad = next((r for r in reports.values() if not r.ok), None)
    retrievals = reports["retrievals"]
    out: dict[str, Any] = {
        "ok": bad is None,
        "checked": sum(r.checked for r in reports.values()),
        "head": retrievals.head,
        "chains": {name: r.as_dict() for name, r in reports.items()},
    }
    if bad is not None:
        out["first_bad_seq"] = bad.first_bad_seq
        out["problem"] = f"{bad.chain}: {bad.problem}"
        out["chain"] = bad.chain
    return out
