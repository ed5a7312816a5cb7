"""The gates' SQL (sql/gates.sql, the session blocks of sql/sessions.sql): the only module of
app/gates that runs statements. The gates' audit events are written by app.audit.chain, and
the replica plumbing lives in app.db.replicas."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import Connection

from app.db import sqlfiles


@dataclass(frozen=True)
class SessionMatter:
    person_id: str
    matter_id: str | None  # None: public sources (no matter)
    chunks: int


@dataclass(frozen=True)
class SessionDocument:
    person_id: str
    document: str  # "<source>:<external_id>"
    matter_id: str | None  # its matter now
    source_acl_id: str  # its source ACL now
    quarantined: bool = False  # visible to no one now (e.g. refiled under an unknown matter)
    # why no one may be returned it now, whatever its matter and ACL: "deleted" (the firm no
    # longer holds it), or its search state ("withdrawn", "held": a decision hidden from all)
    hidden: str | None = None
    read_in: tuple[str, ...] = ()  # the matters the retrievals recorded it under


def known_dead_cases(conn: Connection, eclis: list[str]) -> dict[str, tuple[str, str | None]]:
    """ECLI upper-cased -> (state, by) for those the case-law index holds as not active."""
    upper = [e.upper() for e in eclis]
    rows = conn.execute(sqlfiles.query("gates.known_dead_cases"), {"eclis": upper})
    return {str(r.ecli): (str(r.state), r.by) for r in rows}


def retrieval_owner(conn: Connection, retrieval_id: uuid.UUID) -> str | None:
    """The person who made the retrieval; None when there is no such retrieval."""
    owner = conn.execute(
        sqlfiles.query("gates.retrieval_owner"), {"retrieval_id": retrieval_id}
    ).scalar_one_or_none()
    return None if owner is None else str(owner)


def retrieval_session(conn: Connection, retrieval_id: uuid.UUID) -> str | None:
    """The session the retrieval was made in; None when none (or no such retrieval)."""
    found = conn.execute(
        sqlfiles.query("gates.retrieval_session"), {"retrieval_id": retrieval_id}
    ).scalar_one_or_none()
    return None if found is None else str(found)


def retrieval_results(conn: Connection, retrieval_id: uuid.UUID) -> dict[str, str]:
    """chunk_id -> content hash as audited, in rank order."""
    rows = conn.execute(sqlfiles.query("gates.retrieval_results"), {"retrieval_id": retrieval_id})
    return {str(r.chunk_id): str(r.content_sha256) for r in rows}


def session_matters(
    conn: Connection, session_id: str, person_id: str | None
) -> list[SessionMatter]:
    """Per person, every matter a session's retrievals returned chunks of."""
    rows = conn.execute(
        sqlfiles.query("sessions.session_matters"),
        {"session_id": session_id, "person_id": person_id},
    )
    return [
        SessionMatter(
            str(r.person_id), None if r.matter_id is None else str(r.matter_id), int(r.chunks)
        )
        for r in rows
    ]


def session_documents(
    conn: Connection, session_id: str, person_id: str | None
) -> list[SessionDocument]:
    """Per person, every document the session read, as the firm holds it now (``hidden``
    ``deleted`` for one it no longer holds)."""
    rows = conn.execute(
        sqlfiles.query("sessions.session_documents"),
        {"session_id": session_id, "person_id": person_id},
    )
    return [
        SessionDocument(
            str(r.person_id),
            str(r.document),
            None if r.matter_id is None else str(r.matter_id),
            "" if r.source_acl_id is None else str(r.source_acl_id),
            bool(r.quarantined),
            "deleted" if r.gone else None if r.search_state == "active" else str(r.search_state),
            tuple(sorted(str(m) for m in r.read_in)),
        )
        for r in rows
    ]
