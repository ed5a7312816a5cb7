"""Code that may wait on a named pipe for ever (opening one for reading waits for a writer):
run it on a thread, and let a reader that waits go, so the thread ends either way."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

# a bound on a condition (the work ends), not a timing: the reads these tests make take
# milliseconds; on code that opens the pipe for reading they never end
FINISHES_WITHIN_S = 60


def release(fifo: Path) -> None:
    """Open the pipe's other end once, so a reader blocked on it reads an end of file."""
    with contextlib.suppress(OSError):  # no reader waits on it: nothing to release
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def waited_on(work: Callable[[], None], fifo: Path) -> bool:
    """Run ``work`` on a thread; True when it had not ended within FINISHES_WITHIN_S (it
    waited on ``fifo``, which is then released until the thread ends)."""
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(FINISHES_WITHIN_S)
    hung = worker.is_alive()
    while worker.is_alive():  # let the old code's reader go, so the thread ends
        release(fifo)
        worker.join(0.1)
    return hung
