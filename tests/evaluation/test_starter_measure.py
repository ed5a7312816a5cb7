"""The starter set on the real corpus: ingest its 60 decisions, evaluate, calibrate.

Slow (minutes on two cores: most of it is embedding ~1,000 chunks). It guards what the
numbers of docs/quality.md promise: every query is answerable, the sparse leg finds what a
lawyer asks in the decision's own words, and hybrid at the configured weights is not worse than the
better single leg. With EWALL_EVAL_REPORT_DIR set, the run and the calibration are written
there as JSON (that is where those numbers come from).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from app.auth.service import TokenVerifier
from app.evaluation import runner
from app.evaluation.starter import (
    STARTER_ECLIS,
    STARTER_SET_NAME,
    load_starter_set,
    stage_starter_files,
    starter_documents,
    starter_files,
)
from app.resources import Resources
from app.search.service import SearchOverrides
from app.settings import CALIBRATED_DENSE_WEIGHTS, CALIBRATED_RRF_K, Settings
from app.walls.resolution import AccessResolver
from tests import known_vectors
from tests.conftest import DbHandle
from tests.shared_data import require

CORPUS = Path(os.environ.get("EWALL_CORPUS_DIR", "../shared/corpus"))

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _starter_decisions() -> None:
    require(
        len(starter_files(CORPUS)) >= len(STARTER_ECLIS),
        f"the starter decisions under {CORPUS}/rechtspraak",
    )


def _ingest(resources: Resources) -> dict[str, Any]:
    from app.ingest.pipeline import IngestPipeline

    embedder = resources.require_embedder()
    pipeline = IngestPipeline(resources.database, embedder, resources.settings)
    pipeline.known = known_vectors.load(embedder)  # the same vectors every run
    try:
        from app.caselaw.ingest import ingest_rechtspraak_folder
    except ImportError:  # the case-law importer is optional: the plain pipeline will do
        run = pipeline.start_run("rechtspraak", {"starter": True}, "test")
        for doc in starter_documents(CORPUS):
            pipeline.ingest(run, doc, public=True)
        return pipeline.finish_run(run)
    with tempfile.TemporaryDirectory() as folder:
        stage_starter_files(CORPUS, Path(folder))
        return ingest_rechtspraak_folder(pipeline, Path(folder), started_by="test")


@pytest.fixture(scope="module")
def starter(module_db: DbHandle, settings: Settings, embedder: Any) -> Resources:
    # the model's own calibrated weights, as a firm runs it (the suite's settings run both legs)
    model = settings.embedding_model
    settings = settings.model_copy(
        update={
            "dense_weight": CALIBRATED_DENSE_WEIGHTS.get(model, 0.0),
            "rrf_k": CALIBRATED_RRF_K.get(model, Settings.model_fields["rrf_k"].default),
        }
    )
    resources = Resources(
        settings=settings,
        database=module_db.database,
        verifier=TokenVerifier(settings),
        embedder=embedder,
        resolver=AccessResolver(),
    )
    encoded = embedder.encoded_texts
    report = _ingest(resources)
    assert report["counts"]["added"] == len(STARTER_ECLIS), report
    # the shipped vectors covered the load: only the check against the live encoder ran
    assert embedder.encoded_texts - encoded <= 1, f"stale test vectors: {known_vectors.REBUILD}"
    load_starter_set(module_db.database, created_by="test")
    return resources


def _write(name: str, data: dict[str, Any]) -> None:
    folder = os.environ.get("EWALL_EVAL_REPORT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / name).write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")


def test_starter_set_evaluates_on_the_real_corpus(starter: Resources) -> None:
    report = runner.run_eval(starter, STARTER_SET_NAME)
    data = report.as_dict()
    _write("starter_eval.json", data)
    metrics = data["metrics"]
    assert all(m["queries"] == 47 for m in metrics.values())
    assert all(q["unavailable"] == 0 for q in data["per_query"]["hybrid"])
    own = [
        q["scores"]["ndcg_10"] for q in data["per_query"]["sparse"] if q["key"].startswith("own-")
    ]
    assert sum(own) / len(own) >= 0.9  # the decision's own words: the sparse leg finds it
    assert metrics["sparse"]["ndcg_10"] >= 0.7
    best_leg = max(metrics["dense"]["ndcg_10"], metrics["sparse"]["ndcg_10"])
    assert metrics["hybrid"]["ndcg_10"] >= best_leg - 1e-9, metrics


def test_calibration_reports_and_changes_nothing(starter: Resources) -> None:
    before = starter.settings.model_dump()
    report = runner.calibrate(starter, STARTER_SET_NAME)
    data = report.as_dict()
    _write("starter_calibration.json", data)
    assert starter.settings.model_dump() == before
    assert len(data["grid"]) == len(runner.DENSE_WEIGHTS) * len(runner.DEPTHS)
    best = data["best"]["metrics"]["ndcg_10"]
    assert best >= data["current"]["metrics"]["ndcg_10"]
    assert data["current_beats_single_legs"]

    # where the best setting wins and loses against the current one, query by query
    b = report.best
    tried = runner.run_eval(
        starter,
        STARTER_SET_NAME,
        modes=["hybrid"],
        overrides=SearchOverrides(
            dense_weight=b.dense_weight,
            sparse_weight=b.sparse_weight,
            dense_candidates=b.dense_depth,
            sparse_candidates=b.sparse_depth,
        ),
    ).as_dict()
    current = runner.run_eval(starter, STARTER_SET_NAME, modes=["hybrid"]).as_dict()
    comparison = runner.compare_runs(current, tried)[0].as_dict()
    _write(
        "starter_best_vs_current.json",
        {"best": data["best"], "comparison": comparison, "best_run": tried},
    )
    assert comparison["mean_b"] == pytest.approx(best)
