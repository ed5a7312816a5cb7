"""The sparse leg's impact postings (sql/functions/search_postings.v1.sql, migration
20261203_0045): kept equal to the chunks by every write, visible under the chunks' rule, and
read in impact order with a stop that loses nothing against scoring every part."""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.db import migrate
from app.settings import Settings
from bench.loading import rebuild_postings
from tests import pg
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, ok, retag

LAWYER = "alice@firm.nl"
FILLER = (
    "De rechtbank overweegt dat partijen uitvoerig hebben gecorrespondeerd over de levering "
    "van de goederen, de facturen en de betalingstermijnen die in de overeenkomst staan. "
)

Posting = tuple[str, int, str, str, str, int, int, float]


def _impact(tf: int, n_tokens: int) -> float:
    """BM25's term weight with k1 3, b 0.9 and the fixed reference length 2,000."""
    return tf * 4.0 / (tf + 3.0 * (0.1 + 0.9 * max(n_tokens, 1) / 2000.0))


def _expected(conn: psycopg.Connection[Any]) -> list[Posting]:
    """The postings recounted here from the chunks: per lexeme and document part (document,
    wall group, source ACL, matter), the occurrences and the part's length."""
    tf: dict[tuple[str, int, str, str, str], int] = defaultdict(int)
    length: dict[tuple[int, str, str, str], int] = defaultdict(int)
    rows = conn.execute(
        "SELECT chunk_id, document_id, wall_group_id, source_acl_id, coalesce(matter_id, ''), "
        "token_count FROM chunks WHERE NOT suppressed"
    ).fetchall()
    for chunk_id, document, group, acl, matter, tokens in rows:
        part = (int(document), str(group), str(acl), str(matter))
        length[part] += int(tokens)
        for lexeme, positions in conn.execute(
            "SELECT lexeme, positions FROM chunks, unnest(body_tsv) WHERE chunk_id = %s",
            (chunk_id,),
        ).fetchall():
            tf[(str(lexeme), *part)] += len(positions) if positions else 1
    return sorted(
        (
            lexeme,
            document,
            group,
            acl,
            matter,
            n,
            length[(document, group, acl, matter)],
            _impact(n, length[(document, group, acl, matter)]),
        )
        for (lexeme, document, group, acl, matter), n in tf.items()
    )


def _stored(conn: psycopg.Connection[Any]) -> list[Posting]:
    return sorted(
        (str(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4]), int(r[5]), int(r[6]), float(r[7]))
        for r in conn.execute(
            "SELECT lexeme, document_id, wall_group_id, source_acl_id, matter_id, tf, n_tokens, "
            "impact FROM search_postings"
        ).fetchall()
    )


def _assert_postings_match_chunks(db: DbHandle) -> int:
    with psycopg.connect(db.superuser_url) as conn:
        expected, stored = _expected(conn), _stored(conn)
    assert [p[:7] for p in stored] == [p[:7] for p in expected]
    for s, e in zip(stored, expected, strict=True):
        assert s[7] == pytest.approx(e[7], rel=1e-6)
    return len(stored)


def _parts(*sentences: str) -> str:
    return "\n\n".join(f"Deel {n}. {s} " + FILLER * 6 for n, s in enumerate(sentences, 1))


def _one_matter_firm(client: TestClient, auth: Tokens) -> Firm:
    """LAWYER on the team of matter M-1 of client C-1, its wall group in place."""
    firm = Firm(client, auth)
    firm.person(LAWYER)
    firm.client_("C-1")
    firm.matter("M-1", "C-1", team=[LAWYER])
    retag(client)
    return firm


def test_postings_follow_ingestion_retagging_suppression_and_deletion(
    db: DbHandle, client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    firm.person(LAWYER)
    firm.person("bob@firm.nl")
    firm.client_("C-1")
    firm.client_("C-2")
    firm.matter("M-1", "C-1", team=[LAWYER, "bob@firm.nl"])
    firm.matter("M-2", "C-2", team=["bob@firm.nl"])
    retag(client)
    firm.document(
        "a", _parts("De dwangsom.", "De huur.", "Het octrooi."), client_id="C-1", matter_id="M-1"
    )
    firm.document("b", "Een korte brief over de dwangsom.", client_id="C-2", matter_id="M-2")
    assert _assert_postings_match_chunks(db) > 10

    # re-ingested shorter: the old chunks go, the lengths and impacts follow
    firm.document("a", "Nu kort: de dwangsom.", client_id="C-1", matter_id="M-1")
    _assert_postings_match_chunks(db)

    # a wall moves M-2 to a new wall group: its postings move with its chunks
    firm.wall(kind="exclusionary", protects={"matters": ["M-2"]}, screened=[LAWYER])
    retag(client)
    _assert_postings_match_chunks(db)

    with psycopg.connect(db.superuser_url) as conn:
        conn.execute("UPDATE chunks SET suppressed = true WHERE external_id = 'b'")
    _assert_postings_match_chunks(db)
    with psycopg.connect(db.superuser_url) as conn:
        # a re-embed changes no counted column: nothing is rebuilt (the rows stay as they are)
        before = conn.execute("SELECT xmin::text FROM search_postings ORDER BY 1").fetchall()
        conn.execute("UPDATE chunks SET embedding = embedding")
        after = conn.execute("SELECT xmin::text FROM search_postings ORDER BY 1").fetchall()
    assert before == after

    ok(client.delete("/v1/documents/api/a", headers=auth("admin@firm.nl", "admin")))
    _assert_postings_match_chunks(db)


def test_the_migration_builds_the_postings_of_chunks_already_there(
    db: DbHandle, client: TestClient, auth: Tokens, settings: Settings
) -> None:
    """Down to 20261203_0044 (the old ranking back, no postings) and up again with chunks in
    place, one of them suppressed: the backfill equals the recount."""
    firm = _one_matter_firm(client, auth)
    firm.document("a", _parts("De dwangsom.", "De huur."), client_id="C-1", matter_id="M-1")
    firm.document("b", "Het octrooi en de dwangsom.", client_id="C-1", matter_id="M-1")
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute("UPDATE chunks SET suppressed = true WHERE external_id = 'b'")
    before = _assert_postings_match_chunks(db)
    kw: dict[str, Any] = {"app_role": pg.APP_ROLE, "embedding_dim": settings.embedding_dim}
    migrate.downgrade(db.superuser_url, revision="20261203_0044", **kw)
    with psycopg.connect(db.superuser_url) as conn:
        assert conn.execute("SELECT to_regclass('search_postings')").fetchone() == (None,)
    migrate.upgrade(db.superuser_url, **kw)
    assert _assert_postings_match_chunks(db) == before > 0
    # the search reads them
    assert firm.documents_found(LAWYER, "dwangsom", mode="sparse") == ["a"]


def test_the_bench_bulk_rebuild_gives_the_same_postings_and_indexes(
    db: DbHandle, client: TestClient, auth: Tokens
) -> None:
    """bench.loading.rebuild_postings (after a load with the triggers off) drops the key and
    indexes, refills the table and builds the same definitions again."""
    firm = _one_matter_firm(client, auth)
    firm.document("a", _parts("De dwangsom.", "De huur."), client_id="C-1", matter_id="M-1")
    indexes = "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'search_postings'"
    with psycopg.connect(db.superuser_url) as conn:
        before = sorted(conn.execute(indexes).fetchall())
        conn.execute("TRUNCATE search_postings")
        rebuild_postings(conn)
        assert sorted(conn.execute(indexes).fetchall()) == before
    assert len(before) == 4
    assert _assert_postings_match_chunks(db) > 0


def test_the_service_role_reads_only_the_postings_it_may_see(
    db: DbHandle, client: TestClient, auth: Tokens
) -> None:
    """Row-level security on search_postings is the chunks' rule: a posting says a word is
    in a document, so the service role reads only those of the allowed keys."""
    firm = _one_matter_firm(client, auth)
    firm.document("a", "De dwangsom is verbeurd.", client_id="C-1", matter_id="M-1")
    with psycopg.connect(db.app_url) as conn:
        assert conn.execute("SELECT count(*) FROM search_postings").fetchone() == (0,)
        groups = conn.execute("SELECT array_agg(DISTINCT wall_group_id) FROM chunks").fetchone()
        conn.execute("SELECT set_config('ewall.allowed_wall_groups', '{nobody}', false)")
        conn.execute("SELECT set_config('ewall.allowed_source_acls', '{public}', false)")
        assert conn.execute("SELECT count(*) FROM search_postings").fetchone() == (0,)
    assert groups == (None,)  # the chunks hide the same way
    with psycopg.connect(db.superuser_url) as conn:
        row = conn.execute(
            "SELECT '{' || string_agg(DISTINCT wall_group_id, ',') || '}', "
            "'{' || string_agg(DISTINCT source_acl_id, ',') || '}' FROM search_postings"
        ).fetchone()
        total = conn.execute("SELECT count(*) FROM search_postings").fetchone()
    assert row is not None and total is not None
    with psycopg.connect(db.app_url) as conn:
        conn.execute("SELECT set_config('ewall.allowed_wall_groups', %s, false)", (row[0],))
        conn.execute("SELECT set_config('ewall.allowed_source_acls', %s, false)", (row[1],))
        assert conn.execute("SELECT count(*) FROM search_postings").fetchone() == total


# every visible part of the lexemes' postings, best first, scored by {score}
_FULL_RANKING = """
SELECT p.document_id, p.wall_group_id, p.source_acl_id, p.matter_id,
       {score} AS score
FROM unnest(%(lexemes)s::text[], %(weights)s::float8[]) AS q(lexeme, w)
JOIN search_postings p ON p.lexeme = q.lexeme
WHERE p.wall_group_id = ANY(%(groups)s) AND p.source_acl_id = ANY(%(acls)s)
  AND p.matter_id <> ALL(%(pending)s)
GROUP BY 1, 2, 3, 4
ORDER BY score DESC, 1, 2, 3, 4
LIMIT %(n)s
"""
BRUTE_FORCE = _FULL_RANKING.format(score="sum(q.w * p.impact)")

TOPK = """
SELECT document_id, wall_group_id, source_acl_id, matter_id, score
FROM ewall_sparse_impact_topk(%(lexemes)s, %(weights)s, %(groups)s, %(acls)s, %(pending)s,
                              %(n)s)
"""


def _copy_postings(conn: psycopg.Connection[Any], rows: list[Any]) -> None:
    with conn.cursor().copy(
        "COPY search_postings (lexeme, document_id, wall_group_id, source_acl_id, "
        "matter_id, tf, n_tokens, impact) FROM STDIN"
    ) as copy:
        for r in rows:
            copy.write_row(r)


def test_impact_order_finds_the_brute_force_top_k_on_random_postings(db: DbHandle) -> None:
    """Random postings (12,000 documents, lists longer than a first round reads, 30 wall groups, 3 ACLs, a pending matter, a
    few documents split across keys): for random allowed sets, lexemes, weights and k, the
    threshold algorithm's top k is scoring every visible part's top k: the same scores, the
    same parts where scores differ. Postings of keys not allowed change nothing."""
    rng = random.Random(29)
    lexemes = [f"w{i}" for i in range(12)]
    rows = []
    for document in range(12_000):
        group = f"g{rng.randrange(30)}"
        acl = rng.choice(["public", "acl-1", "acl-2"])
        matter = rng.choice(["m-1", "m-2", "m-3", "m-pending", ""])
        parts = [(group, acl, matter)]
        if document % 97 == 0:  # a document split across two keys
            parts.append((f"g{rng.randrange(30)}", "public", matter))
        for g, a, m in parts:
            for i, lexeme in enumerate(lexemes):
                if rng.random() < 0.6 / (i + 1):
                    rows.append((lexeme, document, g, a, m, 1, 1, rng.random() * 4))
    with psycopg.connect(db.superuser_url) as conn:
        _copy_postings(conn, rows)
        conn.execute("ANALYZE search_postings")
        for trial in range(200):
            asked = rng.sample(lexemes, rng.randint(1, 6))
            args = {
                "lexemes": asked,
                "weights": [rng.uniform(0.1, 5.0) for _ in asked],
                "groups": [f"g{i}" for i in rng.sample(range(30), rng.randint(1, 30))],
                "acls": rng.sample(["public", "acl-1", "acl-2"], rng.randint(1, 3)),
                "pending": ["m-pending"] if trial % 2 else [],
                "n": rng.choice([1, 5, 10, 50, 100]),
            }
            expected = conn.execute(BRUTE_FORCE, args).fetchall()
            found = conn.execute(TOPK, args).fetchall()
            assert [round(r[4], 9) for r in found] == [round(r[4], 9) for r in expected], args
            assert {r[:4] for r in found if _unique(r[4], expected)} == {
                r[:4] for r in expected if _unique(r[4], expected)
            }


def _unique(score: float, rows: list[Any]) -> bool:
    return sum(1 for r in rows if round(r[4], 9) == round(score, 9)) == 1


def _rounds(conn: psycopg.Connection[Any], args: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """The impact top-k's rows and what each of its rounds said (RAISE DEBUG)."""
    said: list[str] = []
    conn.add_notice_handler(lambda d: said.append(d.message_primary or ""))
    conn.execute("SET client_min_messages = debug1")
    rows = conn.execute(TOPK, args).fetchall()
    conn.execute("RESET client_min_messages")
    return rows, [m.removeprefix("ewall_sparse_impact_topk: ") for m in said]


@pytest.mark.parametrize("shared", [False, True])
def test_a_round_that_cannot_end_is_not_scored(db: DbHandle, shared: bool) -> None:
    """Three lexemes of 3,000 postings each, impacts falling evenly, and the top 10 asked.
    Each document in one list only: after the first round (1,024 postings per list) every
    part met holds one list's impact, under a third of what an unread part may still score
    (B, three lists' floors), so that round is not scored; the next reads the lists to their
    end and is. Each document in all three lists: the first round's lower bounds are the
    exact scores, far above B, and it is scored and ends. The top 10 is brute force's
    either way."""
    rows = []
    for i, lexeme in enumerate(["a", "b", "c"]):
        for rank in range(3_000):
            document = rank if shared else i * 3_000 + rank
            rows.append((lexeme, document, "g", "public", "", 1, 1, 1 - rank / 3_000 + i / 1e5))
    args = {
        "lexemes": ["a", "b", "c"],
        "weights": [1.0, 1.0, 1.0],
        "groups": ["g"],
        "acls": ["public"],
        "pending": [],
        "n": 10,
    }
    with psycopg.connect(db.superuser_url) as conn:
        _copy_postings(conn, rows)
        found, said = _rounds(conn, args)
        expected = conn.execute(BRUTE_FORCE, args).fetchall()
    assert [(r[0], round(r[4], 9)) for r in found] == [(r[0], round(r[4], 9)) for r in expected]
    if shared:
        assert said == ["depth 1024 scored"]
    else:
        assert said == ["depth 1024 not scored", "depth 4096 scored"]


# The full ranking the hybrid statement's sparse_top makes of every visible part: scores
# rounded to 1e-9 in float8, a tie broken by part (sql/search.sql)
ROUNDED_BRUTE_FORCE = _FULL_RANKING.format(score="round(sum(q.w * p.impact) * 1e9) / 1e9")

# Impacts (exact in a real) for lexemes a, b, c of weights 0.1, 0.2, 0.3 whose three-term
# sums come out the same in every order of adding them, and differ from one another in the
# last bit only: 0.45 three ways, 0.6 two ways. Each list lowest first, so a cut on the
# unrounded sums keeps the higher document ids of a tie.
TIES = (
    (1, (1.25, 0.5, 0.75)),  # 0.45 - 1 ulp
    (2, (1.25, 1.25, 0.25)),  # 0.45
    (3, (1.5, 0.75, 0.5)),  # 0.45 + 1 ulp
    (4, (1.25, 1.25, 0.75)),  # 0.6
    (5, (1.5, 1.5, 0.5)),  # 0.6 + 1 ulp
    (6, (4.0, 2.0, 4.0)),  # 2.0, alone
)


def test_the_cut_and_order_are_those_of_rounded_scores_ties_broken_by_part(
    db: DbHandle,
) -> None:
    """Parts whose exact sums differ in the last bits only (each one's the same in any order
    of adding): for every n the impact top-k returns the first n parts of the rounded,
    tie-broken full ranking, in its order and with its scores. Version 2 cut on the unrounded
    sums, and kept 5 before 4 and 3 before 1 (migration 20261208_0058)."""
    weights = [0.1, 0.2, 0.3]
    sums = {
        document: {
            sum(weights[i] * impacts[i] for i in order)
            for order in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
        }
        for document, impacts in TIES
    }
    assert all(len(s) == 1 for s in sums.values())  # no order of adding decides here
    assert len({s.pop() for s in sums.values()}) == len(TIES)  # ... but the last bits differ
    rows = [
        (lexeme, document, "g", "public", "", 1, 1, impacts[i])
        for i, lexeme in enumerate(["a", "b", "c"])
        for document, impacts in TIES
    ]
    with psycopg.connect(db.superuser_url) as conn:
        _copy_postings(conn, rows)
        conn.execute("ANALYZE search_postings")
        for n in range(1, len(TIES) + 2):
            args = {
                "lexemes": ["a", "b", "c"],
                "weights": weights,
                "groups": ["g"],
                "acls": ["public"],
                "pending": [],
                "n": n,
            }
            expected = conn.execute(ROUNDED_BRUTE_FORCE, args).fetchall()
            assert [r[0] for r in expected] == [6, 4, 5, 1, 2, 3][:n]
            assert conn.execute(TOPK, args).fetchall() == expected, n


def test_impact_order_is_the_rounded_ranking_on_random_postings_with_many_ties(
    db: DbHandle,
) -> None:
    """Random postings whose scores tie often once rounded (impacts in steps of 0.25,
    weights in tenths), with lists longer than a first round reads, several wall groups and
    ACLs and a pending matter: for random allowed sets, lexemes and n, the impact top-k is
    the rounded, tie-broken full ranking's first n, exactly (parts, order, scores)."""
    rng = random.Random(58)
    lexemes = [f"w{i}" for i in range(6)]
    rows = []
    for document in range(6_000):
        group = f"g{rng.randrange(8)}"
        acl = rng.choice(["public", "acl-1"])
        matter = rng.choice(["m-1", "m-2", "m-pending", ""])
        for i, lexeme in enumerate(lexemes):
            if rng.random() < 0.9 / (i + 1):
                impact = rng.randint(1, 16) / 4
                rows.append((lexeme, document, group, acl, matter, 1, 1, impact))
    with psycopg.connect(db.superuser_url) as conn:
        _copy_postings(conn, rows)
        conn.execute("ANALYZE search_postings")
        for trial in range(60):
            asked = rng.sample(lexemes, rng.randint(2, 5))
            args = {
                "lexemes": asked,
                "weights": [rng.choice([0.1, 0.2, 0.3, 0.7, 1.1]) for _ in asked],
                "groups": [f"g{i}" for i in rng.sample(range(8), rng.randint(1, 8))],
                "acls": rng.sample(["public", "acl-1"], rng.randint(1, 2)),
                "pending": ["m-pending"] if trial % 2 else [],
                "n": rng.choice([1, 5, 10, 50, 100]),
            }
            expected = conn.execute(ROUNDED_BRUTE_FORCE, args).fetchall()
            assert conn.execute(TOPK, args).fetchall() == expected, args
