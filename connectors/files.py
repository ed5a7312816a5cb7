"""Reading a file that a folder we were pointed at names: an export's documents and its
metadata sidecar, a case-law folder's records.

Such a folder is written by others, and may be written while a run reads it. A name checked
first (``is_file()``) and opened after can be a named pipe by then, and opening a pipe for
reading waits for a writer for ever: the run, its sync lock and its job's lease stood still
(attack round of 2026-12-07, third). So a file is opened ``O_NONBLOCK`` and judged by the
descriptor it opened (``fstat``): only a regular file is read, and never more than the limit
the caller gives, even when it grows while it is read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


class NotReadError(Exception):
    """A file that is there but was not read; ``reason`` reads as a report entry's end."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NotRegularFileError(NotReadError):
    def __init__(self) -> None:
        super().__init__("not a regular file; not read")


class FileTooLargeError(NotReadError):
    def __init__(self, size: int | None, limit: int) -> None:
        """``size`` None: it grew past the limit while it was read."""
        super().__init__(
            f"too large: {size} bytes (limit {limit})"
            if size is not None
            else f"too large: more than {limit} bytes"
        )


@contextmanager
def open_regular(path: Path, limit: int) -> Iterator[BinaryIO]:
    """``path`` opened for reading, if the descriptor is a regular file of at most ``limit``
    bytes; `NotReadError` otherwise, OSError (FileNotFoundError, ...) as ``open`` raises it."""
    # O_NONBLOCK: opening a pipe returns at once instead of waiting for a writer; it changes
    # nothing for a regular file
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    # judged before open(), which refuses a folder with an error of its own (and leaves the
    # descriptor open)
    try:
        info = os.fstat(descriptor)
    except OSError:
        os.close(descriptor)
        raise
    refused = _refusal(info, limit)
    if refused is not None:
        os.close(descriptor)
        raise refused
    with open(descriptor, "rb") as handle:
        yield handle


def _refusal(info: os.stat_result, limit: int) -> NotReadError | None:
    if not stat.S_ISREG(info.st_mode):
        return NotRegularFileError()
    if info.st_size > limit:
        return FileTooLargeError(info.st_size, limit)
    return None


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (`open_regular`)."""
    with open_regular(path, limit) as handle:
        data = handle.read(limit + 1)  # one more tells a file that grew past the limit
    if len(data) > limit:
        raise FileTooLargeError(None, limit)
    return data
