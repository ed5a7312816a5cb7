"""The search path as the README names it: the modules POST /v1/search runs, and the HNSW
settings scoped to the one statement that needs them (not the audit append after it)."""

from __future__ import annotations

import dataclasses
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import event, text

from app.db import sqlfiles
from app.db.sqlfiles import text_array
from app.search import repository
from app.search.repository import HnswScan, HybridParams
from app.settings import Settings
from tests.conftest import DbHandle, Tokens, make_client
from tests.helpers import Firm, ok, retag

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"
README = ROOT / "README.md"
# what the settings statement sets, read back in the same transaction
SETTINGS = ("enable_seqscan", "hnsw.iterative_scan", "hnsw.ef_search", "hnsw.max_scan_tuples")
SHOW = "SELECT " + ", ".join(f"current_setting('{s}', true)" for s in SETTINGS)


def _firm(client: TestClient, auth: Tokens) -> Firm:
    f = Firm(client, auth)
    f.person("alice@firm.nl")
    f.client_("C-1", "Acme B.V.")
    f.matter("M-1", "C-1", team=["alice@firm.nl"])
    for i in range(6):
        f.document(
            f"d{i}",
            f"octrooi inbreuk nummer {i} over de uitvinding",
            client_id="C-1",
            matter_id="M-1",
        )
    retag(client)
    return f


@contextmanager
def _hnsw_forced(client: TestClient) -> Iterator[None]:
    settings = client.app.state.resources.settings  # type: ignore[attr-defined]
    saved = settings.exact_max_rows
    settings.__dict__["exact_max_rows"] = 0
    try:
        yield
    finally:
        settings.__dict__["exact_max_rows"] = saved


def _kind(statement: str) -> str | None:
    if "hnsw.iterative_scan" in statement:
        return "settings"
    if "policy_version_seen" in statement:
        return "hybrid"
    if "WITH fence AS MATERIALIZED" in statement:  # audit.append_retrieval
        return "audit"
    return None


def test_hnsw_settings_hold_for_the_statement_only(client: TestClient, auth: Tokens) -> None:
    """The HNSW form plans with enable_seqscan off and its scan settings; the audit append
    that follows in the same transaction runs with the values from before them."""
    firm = _firm(client, auth)
    engine = client.app.state.resources.database.engine  # type: ignore[attr-defined]
    seen: list[tuple[str, str, tuple[str, ...]]] = []

    def show(cursor: Any) -> tuple[str, ...]:
        # the same connection and transaction as the statement, on a cursor of its own
        row = cursor.connection.execute(SHOW).fetchone()
        return tuple(row)

    def before(_c: Any, cursor: Any, statement: str, *_a: Any) -> None:
        kind = _kind(statement)
        if kind in ("settings", "audit"):
            seen.append(("before", kind, show(cursor)))

    def after(_c: Any, cursor: Any, statement: str, *_a: Any) -> None:
        if _kind(statement) == "hybrid":
            seen.append(("after", "hybrid", show(cursor)))

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    try:
        with _hnsw_forced(client):
            strategy = firm.search("alice@firm.nl", "octrooi uitvinding", k=3)["strategy"]
    finally:
        event.remove(engine, "before_cursor_execute", before)
        event.remove(engine, "after_cursor_execute", after)
    assert strategy.startswith("hnsw"), (strategy, seen)
    kinds = [(when, kind) for when, kind, _ in seen]
    assert kinds[:2] == [("before", "settings"), ("after", "hybrid")], kinds
    assert kinds[-1] == ("before", "audit"), kinds
    prior, during, audit = seen[0][2], seen[1][2], seen[-1][2]
    assert during[0] == "off" and during[1] == "relaxed_order", during  # the statement's own
    assert audit == prior, (prior, audit)  # the audit append: as before the statement
    assert audit[0] == "on"


def test_hybrid_params_are_exactly_the_statement_parameters() -> None:
    """One field per named parameter of the hybrid statement, no more; the dense form
    (:dense_hnsw) is run_hybrid's own argument."""
    fields = {f.name for f in dataclasses.fields(HybridParams)} | {"dense_hnsw"}
    sql = sqlfiles.raw(repository.BLOCKS["hybrid"])
    named = set(re.findall(r"(?<![:\w]):([a-z_][a-z0-9_]*)", sql))
    assert named == fields, sorted(named ^ fields)


def _params(policy_version: int) -> HybridParams:
    return HybridParams(
        qvec="[" + ",".join(["0.05"] * 384) + "]",
        match_tsq="",
        headline_tsq="",
        rank_lexemes=[],
        rank_weights=[],
        rank_idf_weights=[],
        names=[],
        typed_tsq=None,
        wall_groups="{open}",
        source_acl_ids=["public"],
        policy_version=policy_version,
        doc_types=None,
        sources=None,
        matter_ids=None,
        modified_from=None,
        modified_to=None,
        session_matter_id=None,
        use_dense=True,
        use_sparse=False,
        dense_weight=1.0,
        sparse_weight=0.0,
        rrf_k=60,
        k=5,
        dense_candidates=20,
        sparse_candidates=20,
        sparse_impact=False,
        sparse_sum=False,
        sparse_group_index=True,
        sparse_gin=True,
        collapse=False,
    )


def test_the_repository_resets_the_scan_settings_after_the_statement(
    db: DbHandle, settings: Settings
) -> None:
    with db.database.transaction() as conn:
        conn.execute(text("SELECT CAST('[1]' AS vector)"))  # loads pgvector: its settings
        before = conn.execute(text(SHOW)).one()
        version = int(conn.execute(text("SELECT version FROM policy_state WHERE id = 1")).one()[0])
        found = repository.run_hybrid(conn, "hnsw", _params(version), HnswScan(123, 45_678))
        assert found.policy_version_seen == version and found.hits == []
        after = conn.execute(text(SHOW)).one()
        assert after[0] == "on" and tuple(after) == tuple(before), (before, after)


# --- the modules of a search -----------------------------------------------------------


def _readme_modules() -> list[str]:
    """The modules the README's "How a search runs" names as the path of a search."""
    text_ = README.read_text(encoding="utf-8")
    section = text_[text_.index("## How a search runs") :]
    section = section[: section.index("\n## ", 1)]
    listed = section[section.index("Modules on the path") :].split("\n\n", 1)[0]
    return re.findall(r"`(app/[\w/]+\.py)`", listed)


@contextmanager
def _traced(handler: Any) -> Iterator[set[str]]:
    """The app/ modules whose Python code runs while ``handler`` runs, in any thread
    started meanwhile (the endpoint runs in a worker thread of a fresh client)."""
    ran: set[str] = set()
    depth: dict[int, int] = {}  # per thread: how deep inside the handler

    def profile(frame: FrameType, what: str, _arg: Any) -> None:
        me = threading.get_ident()
        if frame.f_code is handler and what in ("call", "return"):
            depth[me] = depth.get(me, 0) + (1 if what == "call" else -1)
        if what == "call" and depth.get(me, 0):
            path = Path(frame.f_code.co_filename)
            if path.is_relative_to(APP):
                ran.add(path.relative_to(ROOT).as_posix())

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        yield ran
    finally:
        sys.setprofile(None)
        threading.setprofile(None)


def test_a_search_runs_the_modules_the_readme_names(
    client: TestClient, auth: Tokens, db: DbHandle, settings: Settings, embedder: Any
) -> None:
    """The README's list of the modules of a search is the list of those that run: a module
    added to the path fails here until the README names it."""
    from app.search import router

    _firm(client, auth)
    ran: set[str] = set()
    for forced in (False, True):  # both dense forms, each through a fresh app (cold caches)
        body = {"query": "octrooi uitvinding", "k": 3, "session_id": "s-1"}
        headers = auth("alice@firm.nl", "lawyer")
        for cached in (text_array, sqlfiles.query, sqlfiles.prepared):
            cached.cache_clear()  # a cached call would not run its module
        with (
            _traced(router.search.__code__) as this_search,
            make_client(db, settings, embedder) as traced,
            _maybe_hnsw(forced, traced),
        ):
            found = ok(traced.post("/v1/search", json=body, headers=headers))
        assert found["results"] and found["strategy"].startswith("hnsw") == forced, found
        ran |= this_search
    assert {"app/search/router.py", "app/search/repository.py"} <= ran, sorted(ran)
    assert sorted(ran) == sorted(_readme_modules())


@contextmanager
def _maybe_hnsw(forced: bool, client: TestClient) -> Iterator[None]:
    if forced:
        with _hnsw_forced(client):
            yield
    else:
        yield
