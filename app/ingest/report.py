"""The delta report of an ingest run: its counts and the listed entries, by kind."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from sqlalchemy import Connection

from app.ingest import repository

_REPORTED_KINDS = frozenset(
    {
        "added",
        "updated",
        "deleted",
        "quarantined",
        "error",
        "no_text",
        "parse_error",
        "metadata_change",
        "warning",
        "sweep_held",
    }
)

_COUNTS = (
    "seen",
    "added",
    "updated",
    "unchanged",
    "deleted",
    "quarantined",
    "errors",
    "parse_errors",
    "metadata_changes",
    "held",
)


def load_report(conn: Connection, run_id: uuid.UUID, max_events: int = 1000) -> dict[str, Any]:
    """The delta report of one run (empty for an unknown run); at most ``max_events``
    entries of each kind are listed, ``listed_events`` counts them all."""
    run = repository.load_run(conn, run_id)
    if run is None:
        return {}
    by_kind: dict[str, list[dict[str, Any]]] = {}
    totals: Counter[str] = Counter()
    for event in repository.load_run_events(conn, run_id):
        totals[event.kind] += 1
        bucket = by_kind.setdefault(event.kind, [])
        if len(bucket) < max_events:
            bucket.append(
                {
                    "source": event.source,
                    "external_id": event.external_id,
                    "reason": event.reason,
                    "details": event.details,
                    "at": event.at.isoformat(),
                }
            )
    return {
        "run_id": str(run.run_id),
        "connector": run.connector,
        "status": run.status,
        "started_by": run.started_by,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "params": run.params,
        "progress": run.progress,
        "error": run.error,
        "counts": {name: run.counts.get(name, 0) for name in _COUNTS},
        "added": by_kind.get("added", []),
        "updated": by_kind.get("updated", []),
        "deleted": by_kind.get("deleted", []),
        "quarantined": by_kind.get("quarantined", []),
        "errors": by_kind.get("error", []) + by_kind.get("no_text", []),
        "parse_errors": by_kind.get("parse_error", []),
        "metadata_changes": by_kind.get("metadata_change", []),
        "warnings": by_kind.get("warning", []),
        "held": by_kind.get("sweep_held", []),
        # kinds written by particular sources (case-law state changes, held decisions, ...)
        "other_events": {
            kind: entries for kind, entries in by_kind.items() if kind not in _REPORTED_KINDS
        },
        "listed_events": dict(totals),
    }
