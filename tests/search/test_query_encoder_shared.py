"""The ONNX query encoder's cache is as shared as its folder (app/onnx_encoder.py).

The export lock file was made 0600 and the export folder 0700 (``tempfile.mkdtemp``): an
OS user sharing the cache folder (a CLI run by an operator beside the service) could not
open the lock, or read the export, and fell back to torch with the cause buried in a
warning about the encoder. Both are now made as any file and folder (0o666 and 0o777 less
the umask), so the folder's permissions and the umask decide; a lock file that cannot be
opened all the same is a warning naming it, and the export goes on without the lock."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app import onnx_encoder
from app.embeddings import Embedder
from app.onnx_encoder import LOCK_PREFIX, complete

NOBODY = 65534

def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every OS user may enter (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="ewall-shared-", dir=tempfile.gettempdir()))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _as_nobody(work: Callable[[], str]) -> str:
    """``work()`` in a forked child that became another OS user (nobody) first; its answer,
    or the error it raised. Forked, not started anew: the interpreter lies under root's home,
    which that user may not enter."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        answer = "child failed"
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            answer = work()
        except BaseException as exc:  # reported to the parent
            answer = f"{type(exc).__name__}: {exc}"
        finally:
            os.write(write_end, answer.encode())
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        answer = pipe.read().decode()
    os.waitpid(pid, 0)
    return answer


def _lock_as_nobody(lock: Path) -> str:
    """Whether the lock was got, and the warnings logged meanwhile."""

    def work() -> str:
        said: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda record: said.append(record.getMessage())  # type: ignore[method-assign]
        logging.getLogger("ewall.embeddings").addHandler(handler)
        with onnx_encoder._locked(lock) as got:
            return f"{got} {' '.join(said)}".strip()

    return _as_nobody(work)


def test_the_lock_file_is_made_as_any_file(shared: Path) -> None:
    lock = shared / f"{LOCK_PREFIX}key"
    with onnx_encoder._locked(lock) as got:
        assert got
    assert lock.stat().st_mode & 0o777 == 0o666 & ~_umask()


@pytest.mark.skipif(os.geteuid() != 0, reason="another OS user needs root to become")
def test_another_os_user_locks_it_or_says_why_not(shared: Path) -> None:
    lock = shared / f"{LOCK_PREFIX}key"
    with onnx_encoder._locked(lock):
        pass
    # readable, not writable for them (umask 022): they lock it read-only
    assert _lock_as_nobody(lock) == "True"
    # a lock file kept from them: a warning that names it, and the export goes on
    lock.chmod(0o600)
    refused = _lock_as_nobody(lock)
    assert refused.startswith(f"False cannot open the query encoder's export lock {lock}"), (
        refused
    )


@pytest.mark.timeout(300)
def test_an_export_is_as_shared_as_its_folder(embedder: Embedder, shared: Path) -> None:
    folder = onnx_encoder.ensure_export(embedder._model, embedder.name, "onnx", shared)
    assert complete(folder)
    assert folder.stat().st_mode & 0o777 == 0o777 & ~_umask() & ~0o022  # nobody else writes
    if os.geteuid() == 0:
        assert _as_nobody(lambda: str(complete(folder))) == "True"


@pytest.mark.timeout(300)
def test_an_export_is_writable_by_its_exporter_alone(embedder: Embedder, shared: Path) -> None:
    """Made as any file, under a umask of 002 (a group-shared cache folder) the model file
    was group-writable: another member could edit the model this user's service loads, and
    recompute the manifest's hash. Still readable by whom the umask allows."""
    mask = os.umask(0o002)
    try:
        folder = onnx_encoder.ensure_export(embedder._model, embedder.name, "onnx", shared)
    finally:
        os.umask(mask)
    for path in (folder, *folder.iterdir()):
        mode = path.stat().st_mode
        assert mode & 0o022 == 0 and mode & 0o044 == 0o044, (path, oct(mode))
