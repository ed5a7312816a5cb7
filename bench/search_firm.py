"""The benchmark firm of bench.search: matters behind walls, people screened to a given
selectivity, a synthetic corpus loaded in bulk, and the query material."""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import text

from app.matrix.schemas import ClientImport, MatterImport, PersonImport
from app.matrix.service import apply_matrix
from app.walls.retag import run_once
from app.walls.schemas import Protects, WallIn
from app.walls.service import issue_wall
from bench.common import ClusteredVectors, TextGenerator, Vocabulary, progress_bar, sha256_hex
from bench.loading import load_chunks
from bench.server import BenchDatabase

DOC_TYPES = ("memo", "contract", "brief", "email", "advice", "other")


# --- the firm --------------------------------------------------------------------------


@dataclass
class Layout:
    """Who may see which matter. Each matter is its own wall group."""

    matters: list[str]
    people: dict[float, list[str]]
    allowed: dict[str, frozenset[int]]  # person -> indexes of the matters they may see
    dummy: str = "bench-screened-everywhere@firm.nl"

    @property
    def everyone(self) -> list[str]:
        return [p for people in self.people.values() for p in people]


def plan_layout(groups: int, levels: Sequence[float], people_per_level: int, seed: int) -> Layout:
    rng = np.random.default_rng([seed, 1])
    matters = [f"M-{i:05d}" for i in range(groups)]
    people: dict[float, list[str]] = {}
    allowed: dict[str, frozenset[int]] = {}
    for level in sorted(levels):
        size = max(1, round(level * groups))
        tag = f"{level * 100:g}pct"
        people[level] = []
        for j in range(people_per_level):
            person = f"bench-{tag}-{j}@firm.nl"
            people[level].append(person)
            chosen = (
                rng.choice(groups, size=size, replace=False) if size < groups else range(groups)
            )
            allowed[person] = frozenset(int(i) for i in chosen)
    return Layout(matters, people, allowed)


def build_firm(bdb: BenchDatabase, layout: Layout) -> dict[str, str]:
    """People, clients and matters through the bulk matrix import; one exclusionary wall per
    matter screening everyone not meant to see it. Returns matter -> wall group."""
    matters = layout.matters
    clients = sorted({f"C-{i // 10:04d}" for i in range(len(matters))})
    with bdb.database.transaction() as conn:
        apply_matrix(
            conn,
            actor="bench",
            people=[
                PersonImport(person_id=p, name=p.split("@")[0])
                for p in [*layout.everyone, layout.dummy]
            ],
            clients=[ClientImport(client_id=c, name=f"Cliënt {c}") for c in clients],
            matters=[
                MatterImport(matter_id=m, client_id=f"C-{i // 10:04d}", title=f"Zaak {m}")
                for i, m in enumerate(matters)
            ],
            may_widen_walls=True,
        )
    with progress_bar() as bar, bdb.database.transaction() as conn:
        task = bar.add_task("issue_wall", total=len(matters))
        for i, matter in enumerate(matters):
            screened = sorted(p for p in layout.everyone if i not in layout.allowed[p])
            issue_wall(
                conn,
                WallIn(
                    kind="exclusionary",
                    title=f"Wall {matter}",
                    reason="benchmark",
                    protects=Protects(matters=[matter]),
                    screened=[layout.dummy, *screened],
                ),
                actor="bench",
            )
            bar.advance(task)
    # the walls queued every matter for re-tagging; with no chunks yet that is immediate
    run_once(bdb.database, bdb.settings.retag_batch_size)
    with bdb.database.transaction() as conn:
        return {
            str(r[0]): str(r[1])
            for r in conn.execute(text("SELECT matter_id, wall_group_id FROM matter_wall_groups"))
        }


def chunk_batches(
    rows: int,
    documents: list[tuple[Any, ...]],
    chunks_per_document: int,
    text_gen: TextGenerator,
    vectors: ClusteredVectors,
    rng: np.random.Generator,
    matter_group: Mapping[str, str],
    batch_size: int = 5000,
) -> Iterator[list[tuple[Any, ...]]]:
    produced = 0
    while produced < rows:
        n = min(batch_size, rows - produced)
        bodies = text_gen.bodies(n)
        vecs = vectors.sample(rng, n)
        batch: list[tuple[Any, ...]] = []
        for j in range(n):
            index = produced + j
            doc = documents[index // chunks_per_document]
            body = bodies[j]
            sha = sha256_hex(body)
            batch.append(
                (
                    f"bench:{doc[2]}:{sha[:16]}",
                    doc[0],
                    "bench",
                    doc[2],
                    doc[4],
                    doc[5],
                    matter_group[doc[5]],
                    "public",
                    doc[6],
                    index % chunks_per_document,
                    body,
                    vecs[j],
                    sha,
                    int(body.count(" ") * 1.3) + 1,
                )
            )
        produced += n
        yield batch


def load_corpus(
    bdb: BenchDatabase,
    args: argparse.Namespace,
    layout: Layout,
    matter_group: Mapping[str, str],
    vocab: Vocabulary,
    vectors: ClusteredVectors,
) -> dict[str, Any]:
    rng = np.random.default_rng([args.seed, 2])
    n_docs = math.ceil(args.rows / args.chunks_per_document)
    # every matter gets its share of documents (a group with no chunks would make a
    # 0.1 % person's allowed set empty at small --rows), in random order: still
    # independent of the vectors
    matter_of_doc = rng.permutation(np.arange(n_docs) % len(layout.matters))
    type_of_doc = rng.integers(0, len(DOC_TYPES), n_docs)
    documents: list[tuple[Any, ...]] = []
    for d in range(n_docs):
        matter = layout.matters[int(matter_of_doc[d])]
        client = f"C-{int(matter_of_doc[d]) // 10:04d}"
        documents.append(
            (
                d + 1,
                "bench",
                f"D{d:08d}",
                "active",
                client,
                matter,
                DOC_TYPES[int(type_of_doc[d])],
                f"Document {d}",
                "public",
                None,
            )
        )
    text_gen = TextGenerator(vocab, args.words, np.random.default_rng([args.seed, 3]))
    batches = chunk_batches(
        args.rows,
        documents,
        args.chunks_per_document,
        text_gen,
        vectors,
        np.random.default_rng([args.seed, 4]),
        matter_group,
    )
    report = load_chunks(bdb, documents, batches, args.rows)
    return {
        "copy_s": report.copy_s,
        "stats_s": report.stats_s,
        "index_s": report.index_s,
        "analyze_s": report.analyze_s,
        "notices": report.notices,
    }


# --- query material --------------------------------------------------------------------


@dataclass
class TermBands:
    common: list[str]
    mid: list[str]
    rare: list[str]
    df: dict[str, int]


def term_bands(bdb: BenchDatabase, vocab: Vocabulary, total: int, seed: int) -> TermBands:
    """Query words by their real document frequency in the loaded corpus (lexeme_stats),
    not by rank: stop words vanish and stemming merges words, as they do for users."""
    rng = np.random.default_rng([seed, 5])
    head = list(vocab.words[: min(vocab.size, 20_000)])
    tail_ids = rng.choice(
        np.arange(min(vocab.size, 20_000), vocab.size),
        size=min(20_000, max(0, vocab.size - 20_000)),
        replace=False,
    )
    candidates = [str(w) for w in head] + [str(vocab.words[int(i)]) for i in tail_ids]
    with bdb.superuser() as conn:
        rows = conn.execute(
            """
            SELECT w, min(l.ndoc)
            FROM unnest(CAST(%s AS text[])) AS w
            CROSS JOIN LATERAL unnest(ewall_query_lexemes(w)) AS x(lexeme)
            JOIN lexeme_stats l ON l.lexeme = x.lexeme
            WHERE cardinality(ewall_query_lexemes(w)) = 1
            GROUP BY w
            """,
            (candidates,),
        ).fetchall()
    df = {str(w): int(n) for w, n in rows}
    n = max(total, 1)

    def band(low: float, high: float) -> list[str]:
        return sorted(w for w, d in df.items() if low * n <= d <= high * n)

    common = band(0.01, 0.10) or band(0.005, 0.25)
    mid = band(0.001, 0.01) or band(0.0005, 0.02)
    rare_cap = max(3.0, 0.0002 * n)
    rare = sorted(w for w, d in df.items() if 1 <= d <= rare_cap)
    return TermBands(common, mid, rare, df)


def pick(rng: np.random.Generator, words: Sequence[str], n: int) -> list[str]:
    if not words:
        return ["recht"] * n
    return [words[int(i)] for i in rng.integers(0, len(words), n)]


def sparse_queries(bands: TermBands, n: int, seed: int) -> dict[str, list[str]]:
    rng = np.random.default_rng([seed, 6])
    out: dict[str, list[str]] = {"common": [], "rare": [], "hybrid": []}
    for _ in range(n):
        c = pick(rng, bands.common, 3)
        out["common"].append(f"de {c[0]} van het {c[1]} en {c[2]}")
        r = pick(rng, bands.rare, 2)
        out["rare"].append(f"{r[0]} bij {r[1]}")
        m, c1, r1 = (
            pick(rng, bands.mid, 1)[0],
            pick(rng, bands.common, 1)[0],
            pick(rng, bands.rare, 1)[0],
        )
        out["hybrid"].append(f"wat zegt de rechter over {m} en {c1} bij {r1}")
    return out
