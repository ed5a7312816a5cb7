"""Conflict matrix and walls benchmark: access resolution latency and re-tag time.

    python -m bench.walls                     # 5k people, 50k matters, 2k walls, 10k-chunk re-tag
    python -m bench.walls --people 500 --matters 5000 --walls 200 --rows 2000 --background 5000

The matrix is built with the bulk import (``apply_matrix``) and the walls with
``issue_wall``, a few hundred per transaction. Then, in the same process:

- ``AccessResolver.resolve`` for random people with the resolution cache on (what a search
  pays once the person's answer is cached for this policy version), beside the uncached
  figure (``resolve_with`` on the loaded snapshot with the cache off: what the first search
  of each person after a policy change pays) and, separately, the snapshot load and the
  derived structures a new snapshot computes once;
- re-tagging a 10,000-chunk matter after a wall is issued on it: ``run_once`` with the
  default batch size until the queue is empty, against a table that also holds
  ``--background`` other chunks (every index, HNSW included, is maintained by the UPDATE).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from rich.table import Table
from sqlalchemy import text

from app.matrix.schemas import (
    ClientImport,
    GroupImport,
    MatterImport,
    PartyIn,
    PersonImport,
)
from app.matrix.service import apply_matrix
from app.settings import Settings
from app.walls.graph import MatrixSnapshot
from app.walls.resolution import AccessResolver, read_snapshot
from app.walls.retag import run_once
from app.walls.schemas import Protects, WallIn
from app.walls.service import issue_wall
from bench.common import (
    ClusteredVectors,
    Latency,
    Phases,
    Stopwatch,
    TextGenerator,
    add_common_arguments,
    build_vocabulary,
    console,
    fmt_ms,
    fmt_ratio,
    progress_bar,
    quiet_logging,
    sha256_hex,
    verdict,
    write_json,
)
from bench.loading import load_chunks
from bench.server import (
    BenchDatabase,
    auto_shared_buffers,
    bench_database,
    bench_server,
    print_facts,
    server_config,
    server_facts,
)

RESOLVE_P95_GOAL_MS = 2.0
RETAG_GOAL_S = 30.0
DB_NAME = "ewall_bench_walls"
WALLS_PER_TRANSACTION = 250
PARTY_NAMES = (
    "Bakker",
    "Jansen",
    "De Vries",
    "Van den Berg",
    "Visser",
    "Smit",
    "Meijer",
    "Mulder",
    "De Boer",
    "Bos",
    "Vos",
    "Peters",
    "Hendriks",
    "Dekker",
    "Brouwer",
)


def person_id(i: int) -> str:
    return f"p{i:05d}@firm.nl"


def build_matrix(bdb: BenchDatabase, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """People with DMS aliases, nested source groups of aliases, clients (a tenth of them
    subsidiaries), matters with teams and parties: one all-or-nothing bulk import."""
    people = [
        PersonImport(person_id=person_id(i), name=f"Medewerker {i}", aliases=[f"dms:user:{i:05d}"])
        for i in range(args.people)
    ]
    groups = [
        GroupImport(
            source="dms",
            group_id=f"g{g:04d}",
            members=sorted({f"dms:user:{int(i):05d}" for i in rng.integers(0, args.people, 30)}),
        )
        for g in range(args.source_groups)
    ]
    n_clients = args.clients or max(1, args.matters // 10)
    clients = []
    for c in range(n_clients):
        parent = None
        if c >= 10 and rng.random() < 0.1:
            parent = f"C{int(rng.integers(0, c // 2)):05d}"
        clients.append(
            ClientImport(client_id=f"C{c:05d}", name=f"Cliënt {c} B.V.", parent_id=parent)
        )
    matters = []
    for m in range(args.matters):
        team = sorted(
            {person_id(int(i)) for i in rng.integers(0, args.people, int(rng.integers(2, 9)))}
        )
        parties = [
            PartyIn(
                name=f"{PARTY_NAMES[int(rng.integers(0, len(PARTY_NAMES)))]} {m}",
                role="adverse" if rng.random() < 0.7 else "related",
            )
            for _ in range(int(rng.integers(1, 4)))
        ]
        matters.append(
            MatterImport(
                matter_id=f"M{m:06d}",
                client_id=f"C{int(rng.integers(0, n_clients)):05d}",
                title=f"Zaak {m}",
                team=team,
                parties=parties,
            )
        )
    with bdb.database.transaction() as conn:
        apply_matrix(
            conn,
            actor="bench",
            people=people,
            clients=clients,
            matters=matters,
            source_groups=groups,
            may_widen_walls=True,
        )


def wall_bodies(
    args: argparse.Namespace, rng: np.random.Generator, exclude_matter: str
) -> list[WallIn]:
    """A plausible mix: mostly exclusionary walls around one to three matters screening a
    few people, some around a whole client (its subsidiaries' matters included), a fifth
    inclusionary, and a tenth with an effective window (a time boundary for the cache)."""
    now = datetime.now(UTC)
    n_clients = args.clients or max(1, args.matters // 10)
    bodies = []
    for w in range(args.walls):
        roll = rng.random()
        people = sorted(
            {person_id(int(i)) for i in rng.integers(0, args.people, int(rng.integers(1, 11)))}
        )
        if roll < 0.1:
            protects = Protects(clients=[f"C{int(rng.integers(0, n_clients)):05d}"])
        else:
            protects = Protects(
                matters=sorted(
                    {
                        f"M{int(i):06d}"
                        for i in rng.integers(0, args.matters, int(rng.integers(1, 4)))
                    }
                    - {exclude_matter}
                )
                or [f"M{(w * 7919) % args.matters:06d}"]
            )
        window: dict[str, Any] = {}
        if rng.random() < 0.1:
            window = {"effective_until": now + timedelta(days=int(rng.integers(30, 365)))}
        if roll < 0.8:
            bodies.append(
                WallIn(
                    kind="exclusionary",
                    title=f"Wall {w}",
                    reason="benchmark",
                    protects=protects,
                    screened=people,
                    **window,
                )
            )
        else:
            bodies.append(
                WallIn(
                    kind="inclusionary",
                    title=f"Wall {w}",
                    reason="benchmark",
                    protects=protects,
                    allowed=people,
                    **window,
                )
            )
    return bodies


def issue_walls(bdb: BenchDatabase, bodies: list[WallIn]) -> None:
    with progress_bar() as bar:
        task = bar.add_task("issue_wall", total=len(bodies))
        for start in range(0, len(bodies), WALLS_PER_TRANSACTION):
            with bdb.database.transaction() as conn:
                for body in bodies[start : start + WALLS_PER_TRANSACTION]:
                    issue_wall(conn, body, actor="bench")
                    bar.advance(task)


def drain_retag_queue(bdb: BenchDatabase) -> None:
    with bdb.database.transaction() as conn:
        pending = int(conn.execute(text("SELECT count(*) FROM retag_pending")).scalar_one())
    with progress_bar(transient=True) as bar:
        task = bar.add_task("re-tag queue (matters without chunks)", total=pending)
        while pending:
            run_once(bdb.database, bdb.settings.retag_batch_size, max_batches=100)
            with bdb.database.transaction() as conn:
                left = int(conn.execute(text("SELECT count(*) FROM retag_pending")).scalar_one())
            bar.advance(task, pending - left)
            if left >= pending:
                raise RuntimeError("the re-tag queue does not drain")
            pending = left


# --- resolution --------------------------------------------------------------------------


def measure_resolution(
    bdb: BenchDatabase, settings: Settings, args: argparse.Namespace, rng: np.random.Generator
) -> dict[str, Any]:
    database = bdb.database
    samples = [person_id(int(i)) for i in rng.integers(0, args.people, args.queries)]
    unique = sorted(set(samples))
    loads: list[float] = []
    derives: list[float] = []
    colds: list[float] = []
    uncached: list[float] = []
    cached: list[float] = []
    snap: MatrixSnapshot | None = None
    with progress_bar() as bar:
        task = bar.add_task(
            "resolution", total=2 * args.snapshot_loads + 2 * len(samples) + len(unique)
        )
        # snapshot: the load itself, and the derived structures a new snapshot builds once
        for _ in range(args.snapshot_loads):
            watch = Stopwatch()
            snap = read_snapshot(database)
            loads.append(watch.elapsed())
            watch = Stopwatch()
            snap.allowed_groups(samples[0], datetime.now(UTC))
            derives.append(watch.elapsed())
            bar.advance(task)
        if snap is None:
            raise ValueError("--snapshot-loads must be at least 1")

        # cold: a fresh resolver's first answer (snapshot load + derive + compute)
        for person in samples[: args.snapshot_loads]:
            cold = AccessResolver()
            watch = Stopwatch()
            cold.resolve(database, person, datetime.now(UTC))
            colds.append(watch.elapsed())
            bar.advance(task)

        # uncached: the per-person computation on the loaded snapshot, nothing remembered
        no_cache = AccessResolver(cache=False)
        for person in samples:
            at = datetime.now(UTC)
            watch = Stopwatch()
            no_cache.resolve_with(snap, person, at)
            uncached.append(watch.elapsed())
            bar.advance(task)

        # cached: the service's resolver as searches use it, after each sampled person's
        # first search (that first one is the uncached figure above)
        cached_resolver = AccessResolver()
        for person in unique:
            cached_resolver.resolve(database, person, datetime.now(UTC))
            bar.advance(task)
        for person in samples:
            at = datetime.now(UTC)
            watch = Stopwatch()
            cached_resolver.resolve(database, person, at)
            cached.append(watch.elapsed())
            bar.advance(task)
    sizes = [
        len(cached_resolver.resolve(database, p, datetime.now(UTC)).wall_groups)
        for p in samples[:50]
    ]
    return {
        "cached": Latency.of(cached),
        "uncached": Latency.of(uncached),
        "snapshot_load": Latency.of(loads),
        "snapshot_derive": Latency.of(derives),
        "cold": Latency.of(colds),
        "wall_groups": len(snap.groups),
        "allowed_groups_mean": float(np.mean(sizes)),
        "people_sampled": len(unique),
    }


# --- re-tag --------------------------------------------------------------------------------


def load_retag_corpus(bdb: BenchDatabase, args: argparse.Namespace, target: str) -> None:
    """Background chunks spread over random matters, plus ``--rows`` chunks of the matter to
    re-tag, all carrying their matter's current wall group."""
    settings = bdb.settings
    with bdb.database.transaction() as conn:
        groups = {
            str(r[0]): str(r[1])
            for r in conn.execute(text("SELECT matter_id, wall_group_id FROM matter_wall_groups"))
        }
        clients = {
            str(r[0]): str(r[1])
            for r in conn.execute(text("SELECT matter_id, client_id FROM matters"))
        }
    rng = np.random.default_rng([args.seed, 11])
    per_doc = 20
    background_docs = math.ceil(args.background / per_doc) if args.background else 0
    target_docs = math.ceil(args.rows / per_doc)
    matter_ids = sorted(groups)
    documents: list[tuple[Any, ...]] = []
    for d in range(background_docs + target_docs):
        matter = (
            target if d >= background_docs else matter_ids[int(rng.integers(0, len(matter_ids)))]
        )
        documents.append(
            (
                d + 1,
                "bench",
                f"D{d:08d}",
                "active",
                clients[matter],
                matter,
                "other",
                f"Document {d}",
                "public",
                None,
            )
        )
    vocab = build_vocabulary(args.corpus if args.corpus.is_dir() else None, 100_000, 1.0, args.seed)
    text_gen = TextGenerator(vocab, args.words, np.random.default_rng([args.seed, 12]))
    vectors = ClusteredVectors(
        settings.embedding_dim, max(20, (args.background + args.rows) // 500), 1.0, args.seed
    )
    vrng = np.random.default_rng([args.seed, 13])
    total = args.background + args.rows

    def batches() -> Any:
        produced = 0
        while produced < total:
            n = min(5000, total - produced)
            bodies = text_gen.bodies(n)
            vecs = vectors.sample(vrng, n)
            batch = []
            for j in range(n):
                index = produced + j
                # background chunks first, then the target matter's own documents
                doc = (
                    documents[index // per_doc]
                    if index < args.background
                    else documents[background_docs + (index - args.background) // per_doc]
                )
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
                        groups[doc[5]],
                        "public",
                        "other",
                        index % per_doc,
                        body,
                        vecs[j],
                        sha,
                        int(body.count(" ") * 1.3) + 1,
                    )
                )
            produced += n
            yield batch

    load_chunks(bdb, documents, batches(), total)


def measure_retag(bdb: BenchDatabase, target: str, args: argparse.Namespace) -> dict[str, Any]:
    database = bdb.database
    batch_size = bdb.settings.retag_batch_size
    with database.transaction() as conn:
        before = str(
            conn.execute(
                text("SELECT wall_group_id FROM matter_wall_groups WHERE matter_id = :m"),
                {"m": target},
            ).scalar_one()
        )
        _, version = issue_wall(
            conn,
            WallIn(
                kind="exclusionary",
                title="Re-tag benchmark wall",
                reason="benchmark",
                protects=Protects(matters=[target]),
                screened=[person_id(0)],
            ),
            actor="bench",
        )
        after = str(
            conn.execute(
                text("SELECT target_wall_group_id FROM retag_pending WHERE matter_id = :m"),
                {"m": target},
            ).scalar_one()
        )
    batches: list[float] = []
    moved = 0
    watch = Stopwatch()
    with progress_bar() as bar:
        task = bar.add_task(f"re-tag {target} ({batch_size} per batch)", total=args.rows)
        while True:
            step = Stopwatch()
            progress = run_once(database, batch_size, max_batches=1)
            if progress.chunks_moved:
                batches.append(step.elapsed())
            moved += progress.chunks_moved
            bar.advance(task, progress.chunks_moved)
            with database.transaction() as conn:
                left = int(conn.execute(text("SELECT count(*) FROM retag_pending")).scalar_one())
            if not left:
                break
            if not progress.chunks_moved and not progress.matters_done:
                raise RuntimeError("re-tagging made no progress")
    seconds = watch.elapsed()
    with bdb.superuser() as su:
        wrong = su.execute(
            "SELECT count(*) FROM chunks WHERE matter_id = %s AND wall_group_id <> %s",
            (target, after),
        ).fetchone()
    return {
        "seconds": seconds,
        "moved": moved,
        "batches": Latency.of(batches),
        "batch_size": batch_size,
        "from_group": before,
        "to_group": after,
        "policy_version": version,
        "left_in_old_group": int(wrong[0]) if wrong else -1,
    }


# --- report ------------------------------------------------------------------------------


def print_report(
    res: dict[str, Any], retag: dict[str, Any], args: argparse.Namespace, setup: dict[str, float]
) -> None:
    cached: Latency = res["cached"]
    table = Table(
        title=f"Walls at {args.people:,} people, {args.matters:,} matters, "
        f"{args.walls:,} walls ({res['wall_groups']:,} wall groups; "
        f"a person may see {res['allowed_groups_mean']:,.0f} on average)",
        header_style="bold",
    )
    for name, justify in (
        ("measure", "left"),
        ("n", "right"),
        ("p50", "right"),
        ("p95", "right"),
        ("p95 vs cached", "right"),
        ("goal", "left"),
        ("", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]

    def row(label: str, lat: Latency, goal: str = "", ok: bool | None = None) -> None:
        table.add_row(
            label,
            str(lat.n),
            f"{fmt_ms(lat.p50_ms)} ms",
            f"{fmt_ms(lat.p95_ms)} ms",
            fmt_ratio(lat.p95_ms, cached.p95_ms),
            goal,
            verdict(ok),
        )

    row(
        "resolve, resolution cache on",
        cached,
        f"p95 <= {RESOLVE_P95_GOAL_MS:g} ms",
        cached.p95_ms <= RESOLVE_P95_GOAL_MS,
    )
    row("resolve, no cache (resolve_with, loaded snapshot)", res["uncached"])
    row("snapshot load (read_snapshot)", res["snapshot_load"])
    row("derived structures of a new snapshot", res["snapshot_derive"])
    row("cold: fresh resolver, first resolve", res["cold"])
    table.add_section()
    batches: Latency = retag["batches"]
    table.add_row(
        f"re-tag a {retag['moved']:,}-chunk matter ({batches.n} "
        f"batches of {retag['batch_size']:,})",
        "1",
        "",
        f"{retag['seconds']:.1f} s",
        f"{retag['moved'] / max(retag['seconds'], 1e-9):,.0f} chunks/s",
        f"<= {RETAG_GOAL_S:g} s",
        verdict(retag["seconds"] <= RETAG_GOAL_S),
    )
    table.add_row(
        "  one re-tag batch",
        str(batches.n),
        f"{fmt_ms(batches.p50_ms)} ms",
        f"{fmt_ms(batches.p95_ms)} ms",
        "",
        "",
        "",
    )
    console.print(table)
    console.print(
        f"setup: matrix import {setup.get('matrix import', 0):.1f} s, {args.walls:,} walls "
        f"{setup.get('issue walls', 0):.1f} s "
        f"({setup.get('issue walls', 0) / max(args.walls, 1) * 1000:.1f} ms per wall); "
        f"chunks left in the old group after the re-tag: {retag['left_in_old_group']}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.walls",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_arguments(
        parser, rows=10_000, queries=2000, rows_help="chunks of the matter to re-tag"
    )
    parser.add_argument("--people", type=int, default=5000)
    parser.add_argument("--matters", type=int, default=50_000)
    parser.add_argument("--walls", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=0, help="0: matters / 10")
    parser.add_argument("--source-groups", type=int, default=200)
    parser.add_argument(
        "--background",
        type=int,
        default=50_000,
        help="other chunks in the table during the re-tag (default 50,000)",
    )
    parser.add_argument("--words", type=int, default=160, help="mean words per chunk")
    parser.add_argument("--snapshot-loads", type=int, default=5)
    args = parser.parse_args(argv)
    quiet_logging()
    phases = Phases()
    started = time.perf_counter()
    settings = Settings(
        database_url=None, log_json=False, retag_worker=False, statement_timeout_ms=600_000
    )
    rng = np.random.default_rng([args.seed, 10])
    target = f"M{args.matters - 1:06d}"
    shared_buffers = (
        auto_shared_buffers(args.background + args.rows)
        if args.shared_buffers == "auto"
        else args.shared_buffers
    )
    results: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}
    with (
        bench_server(
            data_dir=args.data_dir, keep=args.keep, config=server_config(shared_buffers)
        ) as server,
        bench_database(
            server,
            settings,
            DB_NAME,
            signature=None,
            keep=args.keep or bool(args.data_dir),
        ) as bdb,
    ):
        with bdb.superuser() as su:
            results["server"] = server_facts(su)
        print_facts("server", results["server"])
        with phases("matrix import"):
            build_matrix(bdb, args, rng)
        with phases("issue walls"):
            issue_walls(bdb, wall_bodies(args, rng, target))
        with phases("drain re-tag queue"):
            drain_retag_queue(bdb)
        with phases("resolution"):
            resolution = measure_resolution(bdb, settings, args, rng)
        with phases("load chunks"):
            load_retag_corpus(bdb, args, target)
        with phases("re-tag"):
            retag = measure_retag(bdb, target, args)
    print_report(resolution, retag, args, phases.seconds)
    results["resolution"] = {
        k: v.as_dict() if isinstance(v, Latency) else v for k, v in resolution.items()
    }
    results["retag"] = {k: v.as_dict() if isinstance(v, Latency) else v for k, v in retag.items()}
    results["phases_s"] = {k: round(v, 2) for k, v in phases.seconds.items()}
    results["total_s"] = round(time.perf_counter() - started, 1)
    console.print(
        "phases: "
        + ", ".join(f"{k} {v:.0f} s" for k, v in phases.seconds.items())
        + f"; total {results['total_s']:.0f} s"
    )
    write_json(args.json_path, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
