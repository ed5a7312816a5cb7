"""Small helpers that drive the service through its public API."""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from psycopg import sql

from app.audit.chain import Retrieval, RetrievedChunk, append_retrieval
from tests.conftest import DbHandle, Tokens

ADMIN = ("admin@firm.nl", "admin", "conflicts")


def superuser_rows(db: DbHandle, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Rows read past row-level security: what is stored, not what a person may see."""
    with psycopg.connect(db.superuser_url) as conn:
        return list(conn.execute(sql, params).fetchall())


def lock_waiters(db: DbHandle) -> list[int]:
    """Server processes of the service's connections that wait for a lock."""
    with psycopg.connect(db.superuser_url) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'ewall' "
            "AND datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchall()
    return [int(r[0]) for r in rows]


_HNSW_INDEXES = (
    "SELECT i.relname, pg_get_indexdef(i.oid), x.indisvalid FROM pg_index x "
    "JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am am ON am.oid = i.relam "
    "WHERE am.amname = 'hnsw' AND (x.indrelid = 'chunks'::regclass OR x.indrelid IN "
    "(SELECT inhrelid FROM pg_inherits WHERE inhparent = 'chunks'::regclass)) ORDER BY 1"
)


@contextmanager
def graph_built_after_load(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Bulk loads into chunks without the HNSW graph, which is built again afterwards from
    its own definition (the same opclass, m and ef_construction, on every partition): one
    index build instead of 10,000 graph insertions (about 5 s instead of 22 s for the
    10,000-chunk corpora). What the tests use is the graph, not how it grew."""
    before = conn.execute(_HNSW_INDEXES).fetchall()
    defs = [
        (str(r[0]), str(r[1]))
        for r in conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' "
            "AND tablename = 'chunks' AND indexdef ~ ' USING hnsw '"
        )
    ]
    assert defs, "chunks has no HNSW index"
    for name, _ in defs:
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    yield
    for _, definition in defs:
        # a partitioned table's definition reads "ON ONLY": that would build no partition's
        conn.execute(definition.replace(" ON ONLY ", " ON ", 1))
    assert conn.execute(_HNSW_INDEXES).fetchall() == before


LOCK_MODES = frozenset({"SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"})


@contextmanager
def table_locked(db: DbHandle, table: str, mode: str) -> Iterator[None]:
    """``LOCK TABLE table IN mode MODE`` on a superuser connection until the block ends
    (rolled back): what that mode conflicts with waits there, what it allows passes."""
    if mode not in LOCK_MODES:  # a keyword, which no parameter can carry: only known ones
        raise ValueError(f"unknown lock mode {mode!r}")
    statement = sql.SQL("LOCK TABLE {} IN {} MODE").format(sql.Identifier(table), sql.SQL(mode))
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute(statement)
        yield
        conn.rollback()


# Bound, never listening, held for the process's life: a connection there is refused, and
# no other xdist worker's server can take the port meanwhile (as it could once closed).
_REFUSING: list[socket.socket] = []


def unreachable_database_url() -> str:
    """A PostgreSQL URL at a local port where nothing listens (refused at once)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    _REFUSING.append(sock)
    port = sock.getsockname()[1]
    return f"postgresql://nobody:x@127.0.0.1:{port}/nothing"


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


class Firm:
    """Builds a firm through the API (as a conflicts partner and admin)."""

    def __init__(self, client: TestClient, auth: Tokens) -> None:
        self.client = client
        self.auth = auth
        self.h = auth(*ADMIN)

    def person(
        self, person_id: str, *, active: bool = True, aliases: list[str] | None = None
    ) -> int:
        body = {
            "name": person_id.split("@", maxsplit=1)[0].title(),
            "active": active,
            "aliases": aliases or [],
        }
        return int(
            ok(self.client.put(f"/v1/people/{person_id}", json=body, headers=self.h))[
                "policy_version"
            ]
        )

    def client_(self, client_id: str, name: str | None = None, parent: str | None = None) -> int:
        body = {"name": name or client_id, "parent_id": parent}
        return int(
            ok(self.client.put(f"/v1/clients/{client_id}", json=body, headers=self.h))[
                "policy_version"
            ]
        )

    def matter(
        self,
        matter_id: str,
        client_id: str,
        team: list[str] | None = None,
        parties: list[dict[str, str]] | None = None,
        title: str = "",
    ) -> int:
        body = {
            "client_id": client_id,
            "title": title or matter_id,
            "team": team or [],
            "parties": parties or [],
        }
        return int(
            ok(self.client.put(f"/v1/matters/{matter_id}", json=body, headers=self.h))[
                "policy_version"
            ]
        )

    def wall(self, **body: Any) -> str:
        body.setdefault("title", "wall")
        body.setdefault("reason", "test")
        return str(ok(self.client.post("/v1/walls", json=body, headers=self.h), 201)["wall_id"])

    def lift(self, wall_id: str, reason: str = "no longer needed") -> int:
        return int(
            ok(
                self.client.post(
                    f"/v1/walls/{wall_id}/lift", json={"reason": reason}, headers=self.h
                )
            )["policy_version"]
        )

    def document(
        self,
        external_id: str,
        text: str,
        *,
        client_id: str | None = None,
        matter_id: str | None = None,
        source: str = "api",
        **extra: Any,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"source": source, "external_id": external_id, "text": text, **extra}
        if client_id is not None:
            body["client_id"] = client_id
        if matter_id is not None:
            body["matter_id"] = matter_id
        return dict(ok(self.client.post("/v1/documents", json=body, headers=self.h)))

    def access(self, person_id: str, matter_id: str) -> dict[str, Any]:
        return dict(
            ok(
                self.client.get(
                    f"/v1/people/{person_id}/access",
                    params={"matter_id": matter_id},
                    headers=self.h,
                )
            )
        )

    def search(self, person_id: str, query: str, **body: Any) -> dict[str, Any]:
        payload = {"query": query, **body}
        return dict(
            ok(self.client.post("/v1/search", json=payload, headers=self.auth(person_id, "lawyer")))
        )

    def documents_found(self, person_id: str, query: str, **body: Any) -> list[str]:
        """The external ids of the hits, in rank order."""
        return [
            r["document"]["external_id"] for r in self.search(person_id, query, **body)["results"]
        ]

    def matters_seen(self, person_id: str, query: str, **body: Any) -> set[str | None]:
        return {r["matter_id"] for r in self.search(person_id, query, **body)["results"]}


def one_matter_firm(
    client: TestClient, auth: Tokens, lawyer: str, documents: dict[str, str]
) -> Firm:
    """A firm of one lawyer on the team of matter M-1 of client C-1, which holds
    ``documents`` (external id -> text), re-tagged."""
    firm = Firm(client, auth)
    firm.person(lawyer)
    firm.client_("C-1")
    firm.matter("M-1", "C-1", team=[lawyer])
    for external_id, text in documents.items():
        firm.document(external_id, text, client_id="C-1", matter_id="M-1")
    retag(client)
    return firm


def retag(client: TestClient) -> None:
    """Drain the re-tag queue now (tests run the app without the background worker)."""
    from app.walls.retag import run_once

    resources = client.app.state.resources  # type: ignore[attr-defined]
    run_once(resources.database, resources.settings.retag_batch_size)


def audit_entry(**fields: Any) -> Retrieval:
    """A retrieval's audit row with plain values; ``fields`` replace them."""
    values: dict[str, Any] = {
        "retrieval_id": uuid.uuid4(),
        "at": datetime.now(UTC),
        "person_id": "lawyer@firm.nl",
        "roles": ["lawyer"],
        "purpose": "search",
        "query": "octrooi",
        "mode": "hybrid",
        "k": 10,
        "filters": {},
        "allowed_wall_groups": ["open"],
        "source_principals": [],
        "policy_version": 1,
        "model": None,
        "prompt_version": None,
        "strategy": "exact",
        "took_ms": 1.0,
        "result_count": 1,
        **fields,
    }
    return Retrieval(**values)


def policy_event(**fields: Any) -> dict[str, Any]:
    """A policy event's row (a wall issued) with plain values; ``fields`` replace them."""
    return {
        "event_id": uuid.uuid4(),
        "at": datetime.now(UTC),
        "actor": "carl@firm.nl",
        "action": "wall.issued",
        "object_type": "wall",
        "object_id": "W-1",
        "reason": "test",
        "details": {},
        "policy_version": 1,
        **fields,
    }


def retrieved(
    client: TestClient,
    person_id: str,
    matter_id: str,
    session_id: str,
    *,
    hours_ago: float = 1,
    query: str = "octrooi",
    chunk_id: str | None = None,
) -> None:
    """An audited retrieval of one chunk of ``matter_id``, an hour ago unless told."""
    entry = audit_entry(
        at=datetime.now(UTC) - timedelta(hours=hours_ago),
        person_id=person_id,
        query=query,
        session_id=session_id,
    )
    result = RetrievedChunk(
        rank=1,
        chunk_id=chunk_id or f"api:doc-{matter_id}:0123456789abcdef",
        matter_id=matter_id,
        content_sha256="0" * 64,
        score=1.0,
    )
    resources = client.app.state.resources  # type: ignore[attr-defined]
    with resources.database.transaction() as conn:
        append_retrieval(conn, entry, [result])


def read_answer(port: int, raw: bytes) -> bytes:
    """Everything the server sends back for ``raw`` until it closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(raw)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


def assert_envelope(answer: bytes) -> None:
    """A raw HTTP answer that is a 400 with the error envelope, code malformed_request."""
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    assert status_line.startswith("HTTP/1.1 400 "), answer[:300]
    headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    assert headers["content-type"] == "application/json", headers
    assert int(headers["content-length"]) == len(body), (headers, body)
    error = json.loads(body)["error"]
    assert error["code"] == "malformed_request" and error["message"], error


def cli_environment(monkeypatch: pytest.MonkeyPatch, db: DbHandle) -> None:
    """``ewall`` as an operator runs it, at the test database: its settings come from the
    environment (the caller clears get_settings' cache around the command)."""
    monkeypatch.setenv("EWALL_DATABASE_URL", db.app_url)
    monkeypatch.setenv("EWALL_MIGRATIONS_DATABASE_URL", db.superuser_url)
    monkeypatch.setenv("EWALL_LOG_JSON", "false")
    monkeypatch.setenv("EWALL_LOG_LEVEL", "WARNING")
