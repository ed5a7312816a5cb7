"""Two processes that start together export the ONNX query encoder once between them
(app/onnx_encoder.py ``ensure_export``: a file lock per export key).

Without the lock each pytest-xdist worker, `ewall serve --workers N` process or CLI beside
the service that started before the first export was in place made its own (about 4.5 s of
CPU each, on the cores the other was exporting on), and all but one were thrown away. Two
real processes, each with the real model loaded, are released at the same moment (a file
both wait for) into one empty cache folder: one exports, the other waits and loads it."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app import onnx_encoder
from app.embeddings import Embedder, _forward
from app.onnx_encoder import MODEL_FILE, OnnxQueryEncoder, complete
from tests.search.test_query_encoder import cosines

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json, sys, time
from pathlib import Path
from app import onnx_encoder
from app.embeddings import _load_model

name, root, ready, go = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
model = _load_model(name, "cpu")
exports = []
real = onnx_encoder._export_fp32

def counted(*args):  # the real export, counted
    exports.append(1)
    real(*args)

onnx_encoder._export_fp32 = counted
ready.touch()
while not go.exists():
    time.sleep(0.005)
folder = onnx_encoder.ensure_export(model, name, "onnx", root)
print(json.dumps({"folder": str(folder), "exports": len(exports)}))
"""


def _wait_for(paths: list[Path], procs: list[subprocess.Popen[str]]) -> None:
    while not all(p.exists() for p in paths):
        for proc in procs:
            assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)


@pytest.mark.timeout(600)
def test_two_processes_export_once_and_load_one_valid_file(
    embedder: Embedder, tmp_path: Path
) -> None:
    cache = tmp_path / "encoders"
    go = tmp_path / "go"
    ready = [tmp_path / f"ready-{i}" for i in range(2)]
    procs = [
        subprocess.Popen(  # noqa: S603 (our own interpreter and script)
            [sys.executable, "-c", CHILD, embedder.name, str(cache), str(r), str(go)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in ready
    ]
    try:
        _wait_for(ready, procs)  # both have the model loaded
        go.touch()
        outputs = [proc.communicate(timeout=540) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    answers = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert answers[0]["folder"] == answers[1]["folder"]
    assert sorted(a["exports"] for a in answers) == [0, 1]
    folder = Path(answers[0]["folder"])
    assert complete(folder)
    # one export in the cache, no temporary folder left, and it gives the torch vectors
    assert [p.name for p in cache.iterdir() if not p.name.startswith(".lock-")] == [folder.name]
    encoder = OnnxQueryEncoder(embedder._model, folder, "onnx", threads=1)
    text = "huurachterstand ontruiming"
    assert (folder / MODEL_FILE).stat().st_size > 0
    assert cosines(encoder.encode([text]), _forward(embedder._model, [text]))[0] >= 0.999


@pytest.mark.timeout(300)
def test_a_held_lock_delays_the_export_but_never_stops_it(
    embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A holder that is stuck or stopped (a CLI paused with Ctrl-Z in the middle of its
    export) held every other process's start for as long as it lived; past
    LOCK_WAIT_MAX_S the start exports on its own, as without the lock."""
    cache = tmp_path / "encoders"
    cache.mkdir()
    model = embedder._model
    key = onnx_encoder.export_key(embedder.name, "onnx", onnx_encoder.model_hash(model))
    monkeypatch.setattr(onnx_encoder, "LOCK_WAIT_MAX_S", 0.5)
    held = os.open(cache / f"{onnx_encoder.LOCK_PREFIX}{key}", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # another process's stuck export, as far as flock knows
        folder = onnx_encoder.ensure_export(model, embedder.name, "onnx", cache)
    finally:
        os.close(held)
    assert complete(folder) and folder.name == key
