"""Vectors already encoded by the model (app/known_vectors.py ``KnownVectors``, shipped for the
demo firm by app/demo/vectors.py) are taken instead of encoding, exactly as stored; a set
that is not the live encoder's is discarded after one check, never stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.demo import vectors as demo_vectors
from app.ingest.pipeline import IngestPipeline
from app.ingest.runs import ingest_folder
from app.known_vectors import KnownVectors
from app.settings import Settings
from tests import pg
from tests.conftest import DbHandle, fresh_database
from tests.helpers import superuser_rows

PARAGRAPHS = [
    "De huurder vordert ontbinding van de huurovereenkomst wegens ernstige gebreken aan "
    "het gehuurde, waaronder vocht en schimmel in de slaapkamers.",
    "De verhuurder stelt dat de gebreken door de huurder zelf zijn veroorzaakt en dat hij "
    "die binnen een redelijke termijn heeft verholpen.",
    "Het octrooi beschermt een werkwijze voor het vervaardigen van een tablet met "
    "vertraagde afgifte van de werkzame stof.",
]


@pytest.fixture
def other_db(pg_server: pg.Server, settings: Settings) -> Iterator[DbHandle]:
    """A second fresh database: the same documents loaded on another machine."""
    with fresh_database(pg_server, settings) as handle:
        yield handle


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "export"
    docs.mkdir()
    (docs / "huur.txt").write_text("\n\n".join(PARAGRAPHS[:2]), encoding="utf-8")
    (docs / "octrooi.txt").write_text(PARAGRAPHS[2], encoding="utf-8")
    (docs / "metadata.jsonl").write_text(
        '{"external_id": "K-1", "path": "huur.txt", "matter_id": "M-1"}\n'
        '{"external_id": "K-2", "path": "octrooi.txt", "matter_id": "M-1"}\n',
        encoding="utf-8",
    )
    return docs


def _load(
    handle: DbHandle, embedder: Any, settings: Settings, folder: Path, known: KnownVectors
) -> None:
    pipeline = IngestPipeline(handle.database, embedder, settings)
    pipeline.known = known
    report = ingest_folder(pipeline, folder, started_by="admin@firm.nl")
    # no conflict matrix: quarantined, but stored with their vectors
    assert report["counts"]["quarantined"] == 2, report


def _stored(handle: DbHandle) -> dict[str, str]:
    rows = superuser_rows(handle, "SELECT chunk_id, embedding::text FROM chunks")
    return {str(chunk_id): str(vector) for chunk_id, vector in rows}


def _floats(literal: str) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.array([float(x) for x in literal.strip("[]").split(",")], dtype=np.float32)


def test_known_vectors_are_taken_instead_of_encoded_and_stored_as_they_are(
    db: DbHandle, other_db: DbHandle, embedder: Any, settings: Settings, folder: Path
) -> None:
    known = KnownVectors(embedder.model_id)
    encoded = embedder.encoded_texts
    _load(db, embedder, settings, folder, known)
    first = _stored(db)
    assert len(first) >= 2 and len(known.vectors) == len(first)  # every input encoded, kept
    assert embedder.encoded_texts - encoded == len(first) and known.taken == 0

    encoded = embedder.encoded_texts
    _load(other_db, embedder, settings, folder, known)
    assert known.taken == len(first)
    assert embedder.encoded_texts - encoded == 1  # only the check of the first one taken
    assert _stored(other_db) == first


def test_known_vectors_of_other_weights_are_discarded_after_one_check(
    db: DbHandle, other_db: DbHandle, embedder: Any, settings: Settings, folder: Path
) -> None:
    recorded = KnownVectors(embedder.model_id)
    _load(db, embedder, settings, folder, recorded)
    live = _stored(db)
    rng = np.random.default_rng(7)
    wrong = {
        key: (v := rng.standard_normal(embedder.dimension).astype(np.float32)) / np.linalg.norm(v)
        for key in recorded.vectors
    }
    stale = KnownVectors(embedder.model_id, wrong)

    encoded = embedder.encoded_texts
    _load(other_db, embedder, settings, folder, stale)
    assert stale.taken == 0 and stale.checked
    assert embedder.encoded_texts - encoded == 1 + len(live)  # the check, then every input
    stored = _stored(other_db)
    assert stored.keys() == live.keys()
    for chunk_id, vector in stored.items():
        got, want = _floats(vector), _floats(live[chunk_id])
        assert float(got @ want) / float(np.linalg.norm(got) * np.linalg.norm(want)) > 0.9999


def test_known_vectors_of_another_model_are_not_read(embedder: Any) -> None:
    texts = ["De huurder vordert ontbinding."]
    recorded = KnownVectors(embedder.model_id)
    recorded.add(texts, embedder.embed_passages(texts))
    other = KnownVectors("some-other-model@1", recorded.vectors)
    calls = embedder.encode_calls
    assert other.take(embedder, texts) == [None]
    assert embedder.encode_calls == calls and not other.checked


def test_the_shipped_demo_vectors_are_the_default_encoders_only(embedder: Any) -> None:
    """The suite's model (MiniLM) gets none; the file names the default encoder's id."""
    from app.embeddings import model_id_for
    from app.settings import DEFAULT_MODEL

    assert demo_vectors.load(embedder) is None
    with np.load(demo_vectors.FILE, allow_pickle=False) as data:
        assert str(data["model_id"]) == model_id_for(DEFAULT_MODEL)
        assert data["keys"].dtype == np.uint8 and data["keys"].shape[1] == 32
        assert data["vectors"].shape == (len(data["keys"]), 384)


def test_saved_vectors_load_with_every_key_whole(embedder: Any, tmp_path: Path) -> None:
    """A sha256 digest may end in zero bytes; the file keeps them (one demo input in 256
    would otherwise never be found)."""
    rng = np.random.default_rng(3)
    keys = [bytes(31) + b"\x01", b"\x07" + bytes(31), bytes(rng.integers(0, 256, 32, np.uint8))]
    known = KnownVectors(
        embedder.model_id, {k: rng.standard_normal(4).astype(np.float32) for k in keys}
    )
    demo_vectors.save(known, tmp_path / "v.npz")
    loaded = demo_vectors.load(embedder, tmp_path / "v.npz")
    assert loaded is not None and set(loaded.vectors) == set(keys)
    for key in keys:
        assert np.allclose(loaded.vectors[key], known.vectors[key], atol=1e-2)
