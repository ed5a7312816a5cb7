"""Query encoding with ONNX Runtime, exported locally from the loaded sentence-transformers model.

Why: a search waits for its question to be encoded. PyTorch's eager forward pass of the small
bundled model spends most of its time in per-operator overhead; the same graph run by ONNX
Runtime gives the same vectors several times faster (docs/latency.md has the measurements).

The export is made on this machine from the weights already loaded (never downloaded), once,
into ``EWALL_QUERY_ENCODER_CACHE_DIR`` (default ``<EWALL_DATA_DIR>/encoders``), in a folder
named after the model, the backend and a hash of the weights, the model configuration and
the exporter's versions, so a changed model (or a new torch or ONNX Runtime) exports anew.
The export is written into a temporary folder next to it and renamed into place only when
complete; a folder is loaded only when its manifest names the SHA-256 of its ``model.onnx``
and the file matches, so a half-written or damaged export is never loaded (it is exported
again). Tokenisation and pooling stay those of the sentence-transformers model: only the
transformer's forward pass runs in ONNX Runtime.

``onnx-int8`` quantises the exported weights (dynamic, per channel). Its vectors differ
measurably from the torch ones (docs/latency.md); it is offered, not the default.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from app.settings import Settings

log = logging.getLogger("ewall.embeddings")

QueryBackend = Literal["torch", "onnx", "onnx-int8"]
# bump when the export's graph or files change: old exports are then left unused
EXPORT_FORMAT = 1
OPSET = 17
MODEL_FILE = "model.onnx"
MANIFEST = "manifest.json"
# a temporary export folder untouched for this long was left by a process that died
STALE_TMP_S = 3600.0
# the file locked while a key is exported (not matched by the temporary folders' ".<key>.*")
LOCK_PREFIX = ".lock-"
# how long a start waits for another process's export of the same key (one takes seconds to
# a minute on two busy cores); past it the start exports on its own, as without the lock (the
# rename keeps either file whole): a holder that is stuck or stopped (a CLI paused with
# Ctrl-Z) must not hold every other process's start
LOCK_WAIT_MAX_S = 300.0
LOCK_POLL_S = 0.1
_POOLING = ("mean", "cls")


class ExportUnavailable(RuntimeError):
    """The model cannot be served by ONNX Runtime here (package missing, unsupported model,
    export failed); the caller keeps the torch encoder."""


def cache_root(settings: Settings) -> Path:
    root = settings.query_encoder_cache_dir or settings.data_dir / "encoders"
    return root.expanduser().resolve()


def _versions() -> dict[str, str]:
    import onnxruntime
    import torch

    return {"torch": str(torch.__version__), "onnxruntime": str(onnxruntime.__version__)}


def _check_pipeline(model: Any) -> str:
    """The pooling mode, if the model is a transformer + pooling (+ normalize) pipeline that
    this module reproduces exactly; otherwise ExportUnavailable."""
    names = [type(module).__name__ for module in model]
    if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise ExportUnavailable(f"unsupported sentence-transformers pipeline {names}")
    config = model[1].get_config_dict()
    mode = config.get("pooling_mode")
    if mode not in _POOLING or not config.get("include_prompt", True):
        raise ExportUnavailable(f"unsupported pooling {config}")
    return str(mode)


def model_hash(model: Any) -> str:
    """SHA-256 over the transformer's weights and configuration and the exporter's versions."""
    transformer = model[0].auto_model
    digest = hashlib.sha256()
    digest.update(json.dumps(_versions(), sort_keys=True).encode())
    digest.update(f"format={EXPORT_FORMAT};opset={OPSET}".encode())
    digest.update(transformer.config.to_json_string(use_diff=False).encode())
    for name, tensor in sorted(transformer.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def export_key(name: str, backend: QueryBackend, digest: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[-60:] or "model"
    return f"{slug}-{backend}-{digest[:16]}"


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def complete(folder: Path) -> bool:
    """True when ``folder`` holds a finished export: a manifest whose SHA-256 matches."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        return bool(manifest["sha256"] == _file_sha256(folder / MODEL_FILE))
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _input_names(model: Any) -> list[str]:
    features = model.preprocess(["export"])
    return [name for name in ("input_ids", "attention_mask", "token_type_ids") if name in features]


def _export_fp32(model: Any, path: Path) -> None:
    import torch

    names = _input_names(model)
    transformer = model[0].auto_model

    class LastHiddenState(torch.nn.Module):  # type: ignore[misc]  # torch types as Any here
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            out = self.transformer(**dict(zip(names, inputs, strict=True)), return_dict=True)
            hidden: torch.Tensor = out.last_hidden_state
            return hidden

    # two texts of different length: the traced graph takes a padded attention mask
    features = model.preprocess(["een korte vraag", "een iets langere vraag over de huur"])
    device = next(transformer.parameters()).device
    example = tuple(features[name].to(device) for name in names)
    axes = {name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer and deprecation notes, not errors
        torch.onnx.export(
            LastHiddenState().eval(),
            example,
            str(path),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )


def _quantize(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # per channel: per tensor int8 moved query vectors to cosine ~0.93 of torch's. The
    # quantiser logs every tensor on the root logger; keep that out of the service's log.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(source, target, weight_type=QuantType.QInt8, per_channel=True)
    finally:
        root.setLevel(level)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_stale_tmp(root: Path, key: str) -> None:
    for leftover in root.glob(f".{key}.*"):
        try:
            if time.time() - leftover.stat().st_mtime > STALE_TMP_S:
                shutil.rmtree(leftover, ignore_errors=True)
        except OSError:
            continue


def _open_lock(path: Path) -> int | None:
    """A descriptor of the lock file ``path``, made if missing as any file is (0o666 less
    the umask): who else may use the cache is the cache folder's permissions' and the
    umask's to decide, not this file's. Made 0600, an OS user sharing the folder could not
    open it and used torch, the cause buried in a warning about the encoder. Someone who may
    read the file but not write it locks it read-only (flock needs no write access). None,
    with a warning naming the file and the cause, when it cannot be opened at all: the
    export then runs without the lock, as past ``LOCK_WAIT_MAX_S``. A link is not followed:
    in a folder others may write to, it could name any file of this user."""
    flags = os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | flags, 0o666)
    except PermissionError:
        pass
    except OSError as exc:
        _no_lock(path, exc)
        return None
    try:
        return os.open(path, os.O_RDONLY | flags)
    except OSError as exc:
        _no_lock(path, exc)
        return None


def _no_lock(path: Path, exc: OSError) -> None:
    log.warning(
        "cannot open the query encoder's export lock %s (%s): exporting without it; let "
        "every OS user that shares the cache folder read it (its mode, or the folder's owner "
        "and group)",
        path,
        exc.strerror or exc,
    )


def _new_tmp(root: Path, key: str) -> Path:
    """A new temporary folder for an export of ``key``, made as any folder is (0o777 less
    the umask), so that the export renamed into place is as shared as the cache folder:
    ``tempfile.mkdtemp`` makes 0700, and another OS user sharing the cache read the export
    as missing, exported its own, and put the first aside as damaged."""
    while True:
        tmp = root / f".{key}.{secrets.token_hex(8)}"
        try:
            tmp.mkdir(mode=0o777)
        except FileExistsError:
            continue
        return tmp


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[bool]:
    """An exclusive advisory lock on ``path`` (made if missing; never removed: removing a
    lock file another process is about to lock would let a third lock a new file beside
    it), held until the block ends. Waits up to ``LOCK_WAIT_MAX_S`` while another process
    holds it; yields whether it got the lock (False: the block runs without it)."""
    fd = _open_lock(path)
    if fd is None:
        yield False
        return
    try:
        deadline = time.monotonic() + LOCK_WAIT_MAX_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                got = True
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    got = False
                    break
                time.sleep(LOCK_POLL_S)
        yield got
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


def ensure_export(model: Any, name: str, backend: QueryBackend, root: Path) -> Path:
    """The folder of a complete export for ``model``, exporting it first when there is none."""
    if backend == "torch":
        raise ValueError("the torch backend has no export")
    try:
        import onnxruntime  # noqa: F401 (fail early, before an export nobody can run)
    except ImportError as exc:
        raise ExportUnavailable(f"onnxruntime is not installed ({exc})") from None
    _check_pipeline(model)
    key = export_key(name, backend, model_hash(model))
    final = root / key
    if complete(final):
        return final
    if final.is_dir() and not os.access(final, os.R_OK | os.X_OK):
        # another OS user's export, which this one may not read: not damaged, not ours to
        # put aside (the cache folder's permissions or that user's umask keep it private)
        raise ExportUnavailable(
            f"the export {final} is not readable by this OS user: share the cache folder "
            "(its group, and a umask that lets the group read) or give each user its own "
            "EWALL_QUERY_ENCODER_CACHE_DIR"
        )
    root.mkdir(parents=True, exist_ok=True)
    # one export at a time per key, across processes (pytest-xdist workers, `ewall serve
    # --workers N`, a CLI beside the service): without it each process that started before
    # the first export was renamed into place made its own (about 4.5 s of CPU each, on the
    # cores the others were exporting on) and all but one were thrown away. The lock is an
    # advisory lock (flock) on a file beside the exports, released by the kernel when its
    # process dies, so a crashed exporter holds no one up; whoever gets it second finds the
    # export complete and loads it.
    with _locked(root / f"{LOCK_PREFIX}{key}") as got:
        if complete(final):
            return final
        if not got:
            log.warning("another process has held the export lock of %s for %.0f s; exporting "
                        "without it", key, LOCK_WAIT_MAX_S)  # fmt: skip
        return _export(model, name, backend, root, key)


def _export(model: Any, name: str, backend: QueryBackend, root: Path, key: str) -> Path:
    """Export ``model`` into ``root / key`` (the caller holds the key's lock)."""
    final = root / key
    _remove_stale_tmp(root, key)
    started = time.monotonic()
    tmp = _new_tmp(root, key)
    try:
        fp32 = tmp / "fp32.onnx"
        _export_fp32(model, fp32)
        if backend == "onnx-int8":
            _quantize(fp32, tmp / MODEL_FILE)
            fp32.unlink()
        else:
            fp32.rename(tmp / MODEL_FILE)
        manifest = {
            "model": name,
            "backend": backend,
            "format": EXPORT_FORMAT,
            "sha256": _file_sha256(tmp / MODEL_FILE),
            "versions": _versions(),
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        # written by this exporter alone: others read it as the umask lets them, but no umask
        # (002 in a group-shared folder) lets another OS user edit in place the model that
        # this user's service then loads (the manifest's hash finds damage; it is no signature)
        for path in (*tmp.iterdir(), tmp):
            path.chmod(path.stat().st_mode & ~0o022)
        _fsync(tmp / MODEL_FILE)
        _fsync(tmp / MANIFEST)
        if final.exists() and not complete(final):
            # a damaged export (not ours to guess at: keep it aside, never load it)
            final.rename(root / f"{key}.damaged-{int(time.time())}")
        try:
            tmp.rename(final)
        except OSError:
            if not complete(final):  # not another process's finished export either
                raise
        log.info(
            "query encoder exported",
            extra={
                "backend": backend,
                "path": str(final),
                "seconds": round(time.monotonic() - started, 2),
            },
        )
        return final
    except ExportUnavailable:
        raise
    except Exception as exc:
        raise ExportUnavailable(
            f"the {backend} export failed: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


class OnnxQueryEncoder:
    """The loaded model's tokenizer and pooling around an ONNX Runtime session; ``encode``
    returns L2-normalised vectors, as ``SentenceTransformer.encode(normalize_embeddings=True)``
    does. Used by one thread at a time (the Embedder's query lane)."""

    def __init__(self, model: Any, folder: Path, backend: QueryBackend, *, threads: int) -> None:
        import onnxruntime as ort

        self.backend = backend
        self.folder = folder
        self._model = model
        self._pooling = _check_pipeline(model)
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            self._session = ort.InferenceSession(
                str(folder / MODEL_FILE), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise ExportUnavailable(f"ONNX Runtime could not load {folder}: {exc}") from exc
        self._inputs = [i.name for i in self._session.get_inputs()]

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        features = self._model.preprocess(texts)
        feeds = {name: features[name].cpu().numpy().astype(np.int64) for name in self._inputs}
        hidden = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        if self._pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = feeds["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return out


def load_query_encoder(model: Any, settings: Settings, *, threads: int) -> OnnxQueryEncoder | None:
    """The configured ONNX query encoder, or None for ``torch``. A failure (a missing package,
    an unsupported model, a failed export) is logged and answered with None: the service
    then encodes queries with torch, it never fails to start over this."""
    backend = settings.query_encoder_backend
    if backend == "torch":
        return None
    try:
        folder = ensure_export(model, settings.embedding_model, backend, cache_root(settings))
        return OnnxQueryEncoder(model, folder, backend, threads=threads)
    except Exception as exc:
        log.warning("query encoder %s unavailable, using torch: %s", backend, exc)
        return None
