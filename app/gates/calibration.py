"""The grounding gate's calibrated thresholds, per encoder.

``ewall eval grounding`` (app/gates/calibrate.py) measures the gate on a labelled set built
from real decisions and writes, for the encoder's model id, the lexical weight and the
threshold that separate faithful sentences from unsupported ones best. They live in
``grounding_calibration.json`` beside this module, keyed by model id, so that the threshold a
response names is the one measured for the encoder that scored it. An encoder with no entry
gets the ``default`` entry, measured with containment alone (encoder-free).
``EWALL_GROUNDING_THRESHOLD`` overrides the threshold (the weight stays).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources as package_files
from pathlib import Path
from typing import Any

from app.gates.judge import Calibration

CALIBRATION_FILE = "grounding_calibration.json"
DEFAULT_KEY = "default"


def calibration_path() -> Path:
    return Path(str(package_files.files("app.gates").joinpath(CALIBRATION_FILE)))


@cache
def _entries() -> dict[str, Any]:
    path = calibration_path()
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return dict(data.get("models", {}))


def calibration_for(model_id: str | None, threshold_override: float | None = None) -> Calibration:
    """The calibration of ``model_id`` (the default entry when it has none)."""
    entries = _entries()
    key = model_id if model_id in entries else DEFAULT_KEY
    entry = entries.get(key, {"threshold": 0.6, "lexical_weight": 1.0})
    threshold = float(entry["threshold"])
    source = key
    if threshold_override is not None:
        threshold, source = float(threshold_override), "EWALL_GROUNDING_THRESHOLD"
    return Calibration(threshold, float(entry["lexical_weight"]), source)


def store_calibration(model_id: str, entry: dict[str, Any], path: Path | None = None) -> Path:
    """Write (or replace) the entry of ``model_id``; returns the file written."""
    target = path or calibration_path()
    data: dict[str, Any] = {"models": {}}
    if target.exists():
        data = json.loads(target.read_text(encoding="utf-8"))
    data.setdefault("models", {})[model_id] = entry
    data["models"] = dict(sorted(data["models"].items()))
    target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    _entries.cache_clear()
    return target
