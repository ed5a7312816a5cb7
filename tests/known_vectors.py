"""Passage vectors of the suite's encoder for the suite's two largest loads of real decisions.

tests/caselaw/test_ingest_malformed.py ingests the corpus's 25 malformed records and
tests/evaluation/test_starter_measure.py the 60 starter decisions, every suite run, with the
same encoder and the same chunks: on two cores about two and a half minutes of encoding, the
same vectors each time. ``data/known_vectors.npz`` holds them by the sha256 of each exact
encoder input, and both tests hand them to their pipeline (``IngestPipeline.known``), as the
demo loader does with its own (app/demo/vectors.py): the first vector taken is checked
against the live encoder, which still encodes every input the file does not hold, so a stale
file costs time and a wrong one is discarded, never stored.

Each test asserts that the file covered its load (at most the check was encoded): after a
change to those records, the chunker or the encoder input, rebuild it with
``make test-vectors`` (``python -m tests.known_vectors``), which runs both loads in a
throwaway embedded database.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from app.caselaw.ingest import ingest_rechtspraak_folder
from app.db.runtime import open_database
from app.demo import vectors
from app.embeddings import Embedder
from app.evaluation.starter import stage_starter_files
from app.ingest.pipeline import IngestPipeline
from app.known_vectors import KnownVectors
from tests.conftest import make_settings
from tests.fakes.rechtspraak import corpus_dir, rechtspraak_dir

FILE = Path(__file__).parent / "data" / "known_vectors.npz"
REBUILD = "make test-vectors"


def load(embedder: Embedder) -> KnownVectors | None:
    """The shipped vectors when they are ``embedder``'s (by model id), else None."""
    return vectors.load(embedder, FILE)


def stage_malformed(folder: Path) -> Path:
    """The corpus's malformed records, copied into ``folder`` as the test ingests them."""
    shutil.copytree(rechtspraak_dir() / "malformed", folder)
    return folder


def stage_starter(folder: Path) -> Path:
    """The starter set's decisions, copied into ``folder`` as the test ingests them."""
    stage_starter_files(corpus_dir(), folder)
    return folder


def build(path: Path = FILE) -> int:
    settings = make_settings(embedding_bulk_process=False)
    embedder = Embedder(settings)
    known = KnownVectors(embedder.model_id)
    try:
        with tempfile.TemporaryDirectory(prefix="ewall-test-vectors-") as tmp:
            run = settings.model_copy(update={"data_dir": Path(tmp) / "data"})
            with open_database(run) as database:
                pipeline = IngestPipeline(database, embedder, run)
                pipeline.known = known
                for name, stage in (
                    ("malformed records", stage_malformed),
                    ("starter decisions", stage_starter),
                ):
                    started = time.perf_counter()
                    folder = stage(Path(tmp) / name.replace(" ", "-"))
                    ingest_rechtspraak_folder(pipeline, folder, started_by="test-vectors")
                    sys.stderr.write(
                        f"{name}: {len(known.vectors)} vectors so far, "
                        f"{time.perf_counter() - started:.0f} s\n"
                    )
    finally:
        embedder.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    vectors.save(known, path)
    return len(known.vectors)


if __name__ == "__main__":
    sys.stdout.write(f"{build()} vectors written to {FILE}\n")
