"""Fine-tune the embedding model on corpus pairs (``ewall model adapt``), on CPU.

A small plain torch loop (sentence-transformers' trainer needs ``datasets`` and
``accelerate``, which are not installed): each step encodes a batch of anchors and their
positives with the model in training mode and minimises the cross-entropy of each anchor's
scaled cosine similarities against all positives of the batch (in-batch negatives, the
MultipleNegativesRankingLoss objective). Seeded: the same pairs, options and seed give the
same weights on the same machine.

The model is written under ``<data dir>/models/<model id>/``, where the id is the stable
``name`` plus a short hash of the saved weights and tokenizer, by saving to a temporary
folder in the same directory and renaming it: a killed run leaves no model folder, only a
``.tmp-`` folder that the next run removes. Point ``EWALL_EMBEDDING_MODEL`` at the folder to
use it (``ewall reembed`` switches a live database).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.embeddings import model_source
from app.model.pairs import Pair, batches, pairs_digest

MODELS_DIR = "models"
TMP_PREFIX = ".tmp-"
INFO_FILE = "ewall_adapt.json"


@dataclass(frozen=True)
class AdaptOptions:
    epochs: int = 1
    batch_size: int = 16
    max_seconds: float | None = None
    learning_rate: float = 2e-5
    warmup: float = 0.1  # share of the steps with a rising learning rate
    scale: float = 20.0  # cosine similarities are multiplied by this before the softmax
    max_tokens: int = 128  # word pieces per text during training
    seed: int = 0
    threads: int | None = None


@dataclass
class Progress:
    step: int
    steps: int
    epoch: int
    loss: float
    mean_loss: float
    elapsed_s: float
    eta_s: float


@dataclass
class AdaptResult:
    model_id: str
    path: Path
    steps: int
    pairs: int
    stopped_early: bool
    first_loss: float | None
    last_loss: float | None
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)


def models_dir(data_dir: Path) -> Path:
    return data_dir.expanduser().resolve() / MODELS_DIR


def saved_models(data_dir: Path) -> list[dict[str, Any]]:
    """The finished models under the data directory (temporary folders are not models)."""
    root = models_dir(data_dir)
    out: list[dict[str, Any]] = []
    if not root.is_dir():
        return out
    for path in sorted(root.iterdir()):
        if path.name.startswith(TMP_PREFIX) or not path.is_dir():
            continue
        info_file = path / INFO_FILE
        info = json.loads(info_file.read_text(encoding="utf-8")) if info_file.is_file() else {}
        out.append({"model_id": path.name, "path": str(path), **info})
    return out


def remove_stale_temporaries(root: Path) -> list[Path]:
    """Remove ``.tmp-`` folders whose writing process is gone (a killed run)."""
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    for path in root.iterdir():
        if not path.name.startswith(TMP_PREFIX):
            continue
        pid = path.name.removeprefix(TMP_PREFIX).split("-", 1)[0]
        if pid.isdigit() and _alive(int(pid)) and int(pid) != os.getpid():
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def content_hash(folder: Path) -> str:
    """sha256 over the saved files (names and bytes), leaving out the run record."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel == INFO_FILE or rel.endswith("README.md"):
            continue  # the run record and the generated model card carry dates
        h.update(rel.encode() + b"\0")
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def _learning_rate(step: int, steps: int, options: AdaptOptions) -> float:
    """Linear warm-up, then linear decay to zero."""
    warm = max(1, int(steps * options.warmup))
    if step < warm:
        return options.learning_rate * (step + 1) / warm
    return options.learning_rate * max(0.0, (steps - step) / max(1, steps - warm))


def adapt(
    pairs: Sequence[Pair],
    *,
    base_model: str,
    data_dir: Path,
    name: str = "ewall-adapted",
    options: AdaptOptions | None = None,
    progress: Callable[[Progress], None] | None = None,
    record: dict[str, Any] | None = None,
    before_publish: Callable[[Path], None] | None = None,
) -> AdaptResult:
    """Fine-tune ``base_model`` on ``pairs`` and save it under ``data_dir/models``.

    ``before_publish`` runs on the finished temporary folder just before the rename (the
    tests use it to stand for a run killed at the last moment)."""
    import torch
    from sentence_transformers import SentenceTransformer

    options = options or AdaptOptions()
    if len(pairs) < 2:
        raise ValueError("at least two training pairs are needed (in-batch negatives)")
    if options.batch_size < 2:
        raise ValueError("the batch size must be at least 2 (in-batch negatives)")
    root = models_dir(data_dir)
    root.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(root)

    random.seed(options.seed)
    torch.manual_seed(options.seed)
    if options.threads:
        torch.set_num_threads(options.threads)
    model: Any = SentenceTransformer(model_source(base_model), device="cpu", local_files_only=True)
    served_length = int(model.max_seq_length or 512)
    model.max_seq_length = min(served_length, options.max_tokens)
    plan = [
        batches(pairs, options.batch_size, options.seed + epoch) for epoch in range(options.epochs)
    ]
    steps = sum(len(p) for p in plan)
    optimiser = torch.optim.AdamW(model.parameters(), lr=options.learning_rate)
    loss_fn = torch.nn.CrossEntropyLoss()
    model.train()
    started = time.monotonic()
    losses: list[float] = []
    step = 0
    stopped_early = False
    for epoch, epoch_batches in enumerate(plan):
        for batch in epoch_batches:
            if options.max_seconds is not None and time.monotonic() - started > options.max_seconds:
                stopped_early = True
                break
            for group in optimiser.param_groups:
                group["lr"] = _learning_rate(step, steps, options)
            anchors = _embed(model, [p.anchor for p in batch])
            positives = _embed(model, [p.positive for p in batch])
            scores = anchors @ positives.T * options.scale
            loss = loss_fn(scores, torch.arange(len(batch)))
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            step += 1
            losses.append(float(loss.item()))
            if progress is not None:
                elapsed = time.monotonic() - started
                recent = losses[-20:]
                progress(
                    Progress(
                        step=step,
                        steps=steps,
                        epoch=epoch + 1,
                        loss=losses[-1],
                        mean_loss=sum(recent) / len(recent),
                        elapsed_s=elapsed,
                        eta_s=elapsed / step * (steps - step),
                    )
                )
        if stopped_early:
            break
    model.eval()
    # the training length is a training option: the saved model encodes (and the chunker
    # sizes chunks) with the base model's length
    model.max_seq_length = served_length
    seconds = time.monotonic() - started
    info: dict[str, Any] = {
        "name": name,
        "base_model": base_model,
        "created_at": datetime.now(UTC).isoformat(),
        "pairs": len(pairs),
        "pairs_sha256": pairs_digest(pairs),
        "pair_kinds": _count(p.kind for p in pairs),
        "documents": len({p.document_key for p in pairs}),
        "steps": step,
        "steps_planned": steps,
        "stopped_early": stopped_early,
        "seconds": round(seconds, 1),
        "first_loss": _mean(losses[:10]),
        "last_loss": _mean(losses[-10:]),
        "options": asdict(options),
        **(record or {}),
    }
    tmp = root / f"{TMP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        model.save(str(tmp), create_model_card=False)
        model_id = f"{name}-{content_hash(tmp)[:12]}"
        info["model_id"] = model_id
        (tmp / INFO_FILE).write_text(
            json.dumps(info, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        if before_publish is not None:
            before_publish(tmp)
        final = root / model_id
        if final.exists():  # the same weights were saved before: keep that folder
            shutil.rmtree(tmp)
        else:
            os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return AdaptResult(
        model_id=model_id,
        path=final,
        steps=step,
        pairs=len(pairs),
        stopped_early=stopped_early,
        first_loss=info["first_loss"],
        last_loss=info["last_loss"],
        seconds=seconds,
        info=info,
    )


def _embed(model: Any, texts: list[str]) -> Any:
    features = model.preprocess(texts)
    features = {k: v for k, v in features.items() if hasattr(v, "to")}
    return model(features)["sentence_embedding"]


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def format_progress(p: Progress) -> str:
    def clock(seconds: float) -> str:
        whole = max(0, math.ceil(seconds))
        return f"{whole // 60}m{whole % 60:02d}s"

    return (
        f"epoch {p.epoch} step {p.step}/{p.steps}  loss {p.loss:.4f} (mean of last 20 "
        f"{p.mean_loss:.4f})  elapsed {clock(p.elapsed_s)}  eta {clock(p.eta_s)}"
    )
