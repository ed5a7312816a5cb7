"""`make demo-vectors`: rebuild app/demo/data/vectors.npz (app/demo/vectors.py).

Loads the demo with the default encoder, once from the shared corpus (``../shared/corpus``
or the folder given) and once from the packaged sample, each into a fresh embedded database,
and saves the vector of every encoder input the two loads produced.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from app.db.runtime import open_database
from app.demo.loader import load_demo
from app.demo.vectors import FILE, save
from app.embeddings import Embedder
from app.known_vectors import KnownVectors
from app.settings import Settings


def build(corpus_dir: Path, path: Path = FILE) -> int:
    settings = Settings()
    embedder = Embedder(settings)
    known = KnownVectors(embedder.model_id)
    try:
        for corpus in (corpus_dir, Path(tempfile.gettempdir()) / "ewall-no-corpus"):
            with tempfile.TemporaryDirectory(prefix="ewall-demo-vectors-") as tmp:
                run = settings.model_copy(
                    update={"data_dir": Path(tmp), "corpus_dir": corpus, "database_url": None}
                )
                started = time.perf_counter()
                with open_database(run) as database:
                    summary = load_demo(database, run, embedder, known=known)
                sys.stderr.write(
                    f"demo from {summary['case_law']['origin']}: {summary['chunks']} chunks, "
                    f"{len(known.vectors)} vectors so far, {time.perf_counter() - started:.0f} s\n"
                )
    finally:
        embedder.close()
    save(known, path)
    return len(known.vectors)


if __name__ == "__main__":
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/corpus")
    sys.stdout.write(f"{build(corpus)} vectors written to {FILE}\n")
