"""A full verification reads each retrieval once with its results, in a number of
statements that does not grow with the log, and recomputes from the stored row exactly the
canonical form the append hashed: unicode, awkward floats, nested filters, sessions,
sections and retrievals without results (bench.banner: before it read one row per result,
each carrying the whole retrieval, and ran at 1,000-2,000 rows/s)."""

from __future__ import annotations

import math
from typing import Any

from sqlalchemy import event, text

from app.audit import chain, repository
from app.audit.chain import RetrievedChunk, append_retrieval
from app.db.engine import begin_snapshot
from tests.conftest import DbHandle
from tests.helpers import audit_entry

AWKWARD = [0.1 + 0.2, -0.0, 1e-7, 1e16, 1 / 3, 5e-324, 1.7976931348623157e308, 12.0]
ODD_TEXT = 'Ünïcødé — €uro 日本語 \u2028 🙂 "quoted" back\\slash\nnew line\ttab \x01 ctrl'


def _chunk(rank: int, score: float, sub_rank: int = 0, matter: str | None = "M-1") -> Any:
    chunk_id = f"doc-{rank}#{sub_rank} {ODD_TEXT}"
    return RetrievedChunk(rank, chunk_id, matter, "ab" * 32, score, sub_rank)


VARIED: list[tuple[dict[str, Any], list[RetrievedChunk]]] = [
    (
        {
            "query": ODD_TEXT,
            "filters": {
                "matter_ids": ["M-1", "Ñ-2"],
                "z": {"b": [1, 2.5, None, True, {"ü": "é", "a": 0.30000000000000004}], "a": ""},
            },
        },
        [_chunk(r + 1, s) for r, s in enumerate(AWKWARD)],
    ),
    (
        {
            "session_id": "s-1",
            "session_matter_id": "M-1",
            "session_scope": "bound",
            "query_model": "model-x",
            "model": "gen-1",
            "prompt_version": "p-2",
            "took_ms": 0.1 + 0.2,
            "roles": ["lawyer", "partner"],
            "allowed_wall_groups": ["wg-é", "wg-b"],
            "source_principals": ["alice@firm.nl"],
        },
        [_chunk(1, math.nan), _chunk(2, math.inf), _chunk(3, -math.inf)],
    ),
    ({"result_count": 0}, []),
    (  # sections under their hits, a result without a matter, given out of order
        {},
        [_chunk(2, 0.5), _chunk(1, 0.9, 2), _chunk(1, 0.9), _chunk(1, 0.8, 1, None)],
    ),
]


def _append_varied(db: DbHandle) -> None:
    for fields, results in VARIED:
        with db.database.transaction() as conn:
            append_retrieval(conn, audit_entry(**fields), results)


def _as_dicts(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's results as the join before read them: a dict per result."""
    if row["x_ranks"] is None:
        return []
    arrays = [row[name] for name in chain._RESULT_ARRAYS]
    return [
        dict(zip(chain.RESULT_FIELDS, values, strict=True)) for values in zip(*arrays, strict=True)
    ]


def test_the_stored_rows_hash_as_appended(db: DbHandle) -> None:
    _append_varied(db)
    with db.database.engine.connect() as conn:
        begin_snapshot(conn)
        report = chain.verify_chain(conn, "retrievals")
        assert report.ok and report.checked == len(VARIED), report
        rows = list(repository.stream_retrieval_rows(conn))
    for row in rows:
        expected = chain.retrieval_canonical(row, _as_dicts(row))
        assert chain.stored_retrieval_canonical(row) == expected
        # in whatever order the database aggregated the results
        backwards = {**row, **{k: row[k] and row[k][::-1] for k in chain._RESULT_ARRAYS}}
        assert chain.stored_retrieval_canonical(backwards) == expected


def test_each_retrieval_is_read_once_with_its_results(db: DbHandle) -> None:
    """One row a retrieval, not one a result (each of which carried the whole retrieval)."""
    _append_varied(db)
    with db.database.engine.connect() as conn:
        begin_snapshot(conn)
        rows = list(repository.stream_retrieval_rows(conn))
        after = list(repository.stream_retrieval_rows(conn, after_seq=2))
    assert [int(r["seq"]) for r in rows] == [1, 2, 3, 4]
    assert [int(r["seq"]) for r in after] == [3, 4]
    assert [sorted(zip(r["x_ranks"] or [], r["x_sub_ranks"] or [], strict=True)) for r in rows] == [
        [(rank, 0) for rank in range(1, len(AWKWARD) + 1)],
        [(1, 0), (2, 0), (3, 0)],
        [],
        [(1, 0), (1, 1), (1, 2), (2, 0)],
    ]


def _statements(db: DbHandle) -> int:
    """The statements a full verification of all three chains runs, in one snapshot."""
    count = 0

    def counted(*_: Any) -> None:
        nonlocal count
        count += 1

    with db.database.engine.connect() as conn:
        begin_snapshot(conn)
        event.listen(conn, "before_cursor_execute", counted)
        driver = conn.connection.driver_connection
        assert driver is not None
        base = driver.server_cursor_factory

        class Counted(base):  # type: ignore[valid-type,misc]
            def execute(self, *args: Any, **kwargs: Any) -> Any:
                counted()
                return super().execute(*args, **kwargs)

        driver.server_cursor_factory = Counted
        try:
            report = chain.verify_all(conn)
        finally:
            driver.server_cursor_factory = base
            event.remove(conn, "before_cursor_execute", counted)
        assert report["ok"], report
    return count


def test_the_statements_do_not_grow_with_the_log(db: DbHandle) -> None:
    _append_varied(db)
    few = _statements(db)
    with db.database.transaction() as conn:
        for n in range(40):
            results = [_chunk(r, 1.0 / r) for r in range(1, 4)]
            append_retrieval(conn, audit_entry(query=f"q {n}"), results)
        assert conn.execute(text("SELECT count(*) FROM audit_retrievals")).scalar_one() == 44
    assert _statements(db) == few <= 15
