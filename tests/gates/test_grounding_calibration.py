"""``ewall eval grounding``'s measurement on a small labelled set from the real corpus, with the
real encoder; and the calibration file the gate reads per model id."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from app.gates import calibrate
from app.gates.calibrate import choose, measure
from app.gates.calibration import calibration_for, store_calibration
from app.settings import Settings
from tests.fakes.rechtspraak import corpus_dir
from tests.shared_data import require


def test_measure_labels_and_chooses(embedder: Any) -> None:
    corpus = corpus_dir()
    require((corpus / "rechtspraak" / "xml").exists(), "../shared/corpus (Rechtspraak)")
    report = measure(
        lambda texts: embedder.embed_passages(texts, priority="bulk"),
        embedder.model_id,
        corpus,
        decisions=6,
        retrievals=4,
        weights=(0.8, 1.0),
        thresholds=(0.7, 0.8, 0.9),
    )
    after = report["after"]["kinds"]
    assert {"copied", "reworded", "unrelated", "marker_wrong", "marker_out_of_range"} <= set(after)
    assert after["copied"]["supported"] == 1.0
    assert after["marker_correct"]["supported"] == 1.0
    assert after["marker_out_of_range"]["recall"] == 1.0
    assert after["marker_wrong"]["recall"] == 1.0
    # the old gate read no markers
    assert report["before"]["kinds"]["marker_wrong"]["flagged"] == 0.0
    assert (report["threshold"], report["lexical_weight"]) == choose(report["grid"])
    json.dumps(report)  # what --json prints


def test_choose_takes_the_middle_of_the_widest_near_best_range() -> None:
    grid = [
        {"lexical_weight": w, "threshold": t, "objective": o}
        for w, t, o in [
            (0.5, 0.7, 1.990), (0.5, 0.8, 1.990), (0.5, 0.9, 1.993),
            (1.0, 0.6, 1.990), (1.0, 0.7, 1.990), (1.0, 0.8, 1.991), (1.0, 0.9, 1.990),
            (1.0, 0.95, 1.900),
        ]
    ]
    assert choose(grid) == (0.8, 1.0)


def test_the_calibration_of_the_configured_model_is_used(tmp_path: Path) -> None:
    bundled = Settings().embedding_model
    mine = calibration_for(bundled)
    assert mine.source == bundled
    assert calibration_for("no-such-model").source == "default"
    assert calibration_for(bundled, 0.5).threshold == 0.5
    path = store_calibration("m-1", {"threshold": 0.7, "lexical_weight": 0.9}, tmp_path / "c.json")
    assert json.loads(path.read_text())["models"]["m-1"]["threshold"] == 0.7


def test_a_swapped_value_replaces_the_value_itself() -> None:
    """The fact_swapped kind swaps the value where it stands, not the first text like it."""
    sentence = "De boete bedraagt 14% en de wettelijke rente 4%."
    chunk = "De contractuele rente bedraagt 9%."
    made = {calibrate.swap_fact(sentence, chunk, random.Random(seed)) for seed in range(20)}
    assert made == {
        "De boete bedraagt 9% en de wettelijke rente 4%.",
        "De boete bedraagt 14% en de wettelijke rente 9%.",
    }
