"""``ewall eval grounding``'s measurement on a small labelled set from the real corpus, with the
real encoder; and the calibration file the gate reads per model id."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.evaluation.cli import _weights
from app.gates import calibrate
from app.gates.calibrate import choose, measure
from app.gates.calibration import calibration_for, store_calibration
from app.gates.judge import Calibration, ReturnedChunk, judge_sentences
from app.gates.passages import build_passages, chunk_sentences
from app.settings import Settings
from tests.fakes.rechtspraak import corpus_dir
from tests.shared_data import require


def test_measure_labels_and_chooses(embedder: Any) -> None:
    corpus = corpus_dir()
    require((corpus / "rechtspraak" / "xml").exists(), "../shared/corpus (Rechtspraak)")
    written = calibrate.load_written("dev")
    report = measure(
        lambda texts: embedder.embed_passages(texts, priority="bulk"),
        embedder.model_id,
        corpus,
        decisions=6,
        retrievals=4,
        weights=(0.8, 1.0),
        thresholds=(0.7, 0.8, 0.9),
        written={"dev": written[:2], "heldout": written[2:3]},
    )
    after = report["after"]["kinds"]
    assert {"copied", "reworded", "unrelated", "marker_wrong", "marker_out_of_range"} <= set(after)
    # the written answers: measured (dev) and reported with the pair chosen (held-out)
    assert {"written:paraphrase", "written:invented"} <= set(after)
    held = report["heldout"]
    assert held["sentences"] == len(written[2][1]) > 0
    assert held["chosen"]["threshold"] == report["threshold"]
    assert sum(e["n"] for e in held["chosen"]["kinds"].values()) == held["sentences"]
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


def test_the_shipped_calibration_holds_a_checker_s_own_words() -> None:
    """Calibrated on answers written by checks (2026-12-06): containment alone at 0.7, where
    0.8 judged about half of their faithful paraphrases unsupported. Two of them (0.71 and
    0.75 of their content words held) are supported now; what they invent is not."""
    chunk = (
        "3.4. De middelen kunnen derhalve niet tot cassatie leiden. 4. Proceskosten De Hoge "
        "Raad acht geen termen aanwezig voor een veroordeling in de proceskosten als bedoeld "
        "in artikel 5a van de Wet administratieve rechtspraak belastingzaken. 5. Beslissing De "
        "Hoge Raad verwerpt het beroep. Voor wat betreft het beroep op artikel 1 van de "
        "Grondwet faalt het reeds hierom, omdat de onderhavige tijdvakken zijn gelegen vóór de "
        "datum van inwerkingtreding van dit artikel."
    )
    faithful = [
        "De Hoge Raad verwierp het cassatieberoep en zag geen reden voor een "
        "proceskostenveroordeling.",
        "Het beroep op artikel 1 van de Grondwet faalt al omdat de betrokken tijdvakken vóór "
        "de inwerkingtreding van dat artikel liggen.",
    ]
    invented = [
        "De Hoge Raad verwierp het cassatieberoep en zag geen reden voor een "
        "proceskostenveroordeling op grond van artikel 7 van die wet.",
        "Het beroep op artikel 14 van de Grondwet faalt al omdat de betrokken tijdvakken vóór "
        "de inwerkingtreding van dat artikel liggen.",
    ]
    calibration = calibration_for(Settings().embedding_model)
    assert calibration.lexical_weight == 1.0  # no vector read: zeros stand in for them
    parts = chunk_sentences(chunk)
    returned = [
        ReturnedChunk("c1", 1, build_passages(parts, np.zeros((len(parts), 4), np.float32)))
    ]
    sentences = faithful + invented
    results = judge_sentences(
        sentences, np.zeros((len(sentences), 4), np.float32), returned, 1, calibration
    )
    assert [r.supported for r in results] == [True, True, False, False], [
        (r.text, r.similarity, r.reasons) for r in results
    ]
    at_before = judge_sentences(
        faithful, np.zeros((2, 4), np.float32), returned, 1, Calibration(0.8, 1.0)
    )
    assert not any(r.supported for r in at_before)  # what the calibration changed


def test_a_copied_sentence_carries_no_long_clause_of_its_own() -> None:
    """A review: at 0.7 of the content words held, a long copied sentence could carry a
    clause of its own (8 beside 20 copied content words). More than UNHELD_MAX unheld words
    fall short."""
    chunk = (
        "Belanghebbende woonde gedurende het onderhavige jaar, evenals zijn echtgenote en "
        "hun drie minderjarige kinderen, in België, waar hij ook een onderneming dreef in "
        "de handel in landbouwwerktuigen en onroerende zaken."
    )
    copied = chunk
    # 6 content words of its own beside the 15 copied: 0.71 held
    added = chunk[:-1] + ", en verzweeg opzettelijk buitenlands vermogen en inkomsten voor de fiscus."
    parts = chunk_sentences(chunk)
    returned = [
        ReturnedChunk("c1", 1, build_passages(parts, np.zeros((len(parts), 4), np.float32)))
    ]
    results = judge_sentences(
        [copied, added], np.zeros((2, 4), np.float32), returned, 1, Calibration(0.7, 1.0)
    )
    assert results[0].supported
    assert not results[1].supported
    assert results[1].similarity is not None and results[1].similarity < 0.7


def test_weights_are_checked_and_counted_once() -> None:
    """``--weights``: a repeated weight would widen its own plateau in ``choose`` (a review);
    a bad value is an argparse error, not a traceback."""
    assert _weights("0.9,1,1") == [0.9, 1.0]
    for bad in ("2", "abc", "nan", "-0.5", ",", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            _weights(bad)
