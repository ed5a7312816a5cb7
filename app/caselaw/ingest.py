"""Case-law ingestion: a folder of Rechtspraak open-data XML into the open wall group.

Per file: parse the record, run the withdrawal state machine (``app.caselaw.state``) against
what ``case_law`` knew, optionally cross-check a second source, ingest the text through the
shared pipeline (public, with the derived ``search_state``), then write the ``case_law`` row
and the report entries in one transaction.

How the states land in the database:

====================  ==========================  ===========================================
case_law.state        documents.search_state      search
====================  ==========================  ===========================================
active                active                      found
withdrawn             withdrawn                   excluded (chunks.suppressed)
voided                withdrawn                   excluded
set_aside             withdrawn                   excluded
held                  held                        excluded until ``confirm_case``
====================  ==========================  ===========================================

Rules this module adds around the pure state machine:

- A record without any text (e.g. a voided ECLI published as metadata only) still gets its
  ``case_law`` row and a ``metadata_only`` report entry; an earlier stored version of its
  text follows the new state, so a decision voided later cannot stay searchable.
- A record that only a lenient XML parser could read may have lost a status marker. It is
  treated like an unreadable marker: a known state is kept by the machine's own rules, and a
  new decision that would be searchable is held instead (fail closed).
- Cross-check discrepancies are recorded (``case_law.crosscheck`` and report entries) and
  never resolved: the primary source decides the state, a person decides the discrepancy.
- Nothing a file contains can crash the run: unreadable files become report entries.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Connection, text

from app.caselaw.parse import RechtspraakRecord, document_title, parse_rechtspraak
from app.caselaw.state import (
    CaseLawState,
    NotHeldError,
    Status,
    Transition,
    confirm,
    crosscheck,
    next_state,
)
from app.db.engine import Database
from app.ecli import normalise_ecli
from app.ingest.pipeline import DocumentOutcome, IngestPipeline, IngestRun
from app.ingest.types import ExtractionError
from app.walls.retag import mark_writer
from connectors.base import SourceDocument

log = logging.getLogger("ewall.caselaw.ingest")

SOURCE = "rechtspraak"
DEEPLINK = "https://deeplink.rechtspraak.nl/uitspraak?id="
MAX_FILE_BYTES = 50 * 1024 * 1024  # the extractor's own limit; larger files are refused early
# The second source is asked once per record during a bulk run: a short timeout keeps a
# slow mirror from stretching a 160-record run into hours, and after this many transport
# failures in a row it is taken as down for the rest of the run (reported once).
CROSSCHECK_TIMEOUT_S = 5.0
CROSSCHECK_MAX_CONSECUTIVE_FAILURES = 3
CROSSCHECK_MAX_BYTES = MAX_FILE_BYTES
PROGRESS_EVERY = 25
# Metadata that a later record should not erase by leaving it out (see _keep_known).
_KEPT_FIELDS = ("court", "decision_date", "area_of_law", "procedure")

Progress = Callable[[int, int | None], None]


class CaseNotFoundError(LookupError):
    """No ``case_law`` row for this ECLI."""


# --- case_law rows <-> CaseLawState -----------------------------------------------------


_SELECT_CASE = (
    "SELECT ecli, court, decision_date, area_of_law, procedure, relations, withdrawn,"
    " replaced_by, set_aside_by, state, held_reason, crosscheck, updated_at"
    " FROM case_law WHERE ecli = :ecli"
)


def _state_from_row(row: Mapping[str, Any]) -> CaseLawState:
    """The state machine's view of a stored row.

    ``case_law`` has columns for the withdrawal marker, isReplacedBy and the set-aside target
    only; ``voided`` through a vervallenverklaring and "set aside by an unnamed decision" are
    read back from ``state``. That loses nothing the machine uses: a relation-based marker is
    re-observed on every ingestion (it never errors, so the previous value is never kept),
    and a held row always has every marker falsy (held means "the markers read active").
    """
    state = Status(row["state"])
    replaced_by = row["replaced_by"]
    set_aside_by = row["set_aside_by"]
    return CaseLawState(
        ecli=row["ecli"],
        state=state,
        withdrawn=row["withdrawn"],
        voided=True if replaced_by else None,
        replaced_by=replaced_by,
        vervallen=True if state is Status.VOIDED and not replaced_by else None,
        vervallen_by=None,
        set_aside=True if set_aside_by or state is Status.SET_ASIDE else None,
        set_aside_by=set_aside_by,
        held_reason=row["held_reason"],
    )


def _load_case(conn: Connection, ecli: str, *, lock: bool) -> dict[str, Any] | None:
    sql = _SELECT_CASE + (" FOR UPDATE" if lock else "")
    row = conn.execute(text(sql), {"ecli": ecli}).mappings().first()
    return dict(row) if row is not None else None


def _as_datetime(value: date | None) -> datetime | None:
    # decision_date is timestamptz; a date is midnight UTC so it reads back as the same day
    if value is None:
        return None
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def apply_search_state(conn: Connection, ecli: str, search_state: str) -> int:
    """Make the stored document of ``ecli`` (if any) follow its case-law state.

    Needed beyond what the pipeline writes because the state can change without a new text:
    a metadata-only record, a document whose text failed to ingest, a confirmation.
    Returns the number of chunks whose visibility changed.
    """
    mark_writer(conn)
    doc = conn.execute(
        text(
            "UPDATE documents SET search_state = :state, updated_at = now()"
            " WHERE source = :source AND external_id = :ecli AND search_state <> :state"
            " RETURNING document_id"
        ),
        {"state": search_state, "source": SOURCE, "ecli": ecli},
    ).first()
    if doc is None:
        return 0
    suppressed = search_state != "active"
    return conn.execute(
        text(
            "UPDATE chunks SET suppressed = :suppressed"
            " WHERE document_id = :document_id AND suppressed <> :suppressed"
        ),
        {"suppressed": suppressed, "document_id": doc.document_id},
    ).rowcount


# --- reading files ------------------------------------------------------------------------


def xml_files(folder: Path) -> list[Path]:
    """The records under ``folder`` (recursively), in a stable order; hidden files skipped."""
    out: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out.extend(
            Path(root) / name
            for name in sorted(files)
            if name.lower().endswith(".xml") and not name.startswith(".")
        )
    return out


def _read(path: Path) -> bytes:
    """The file's bytes; ExtractionError with a report-ready reason otherwise."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ExtractionError(f"file too large: {size} bytes (limit {MAX_FILE_BYTES})")
        data = path.read_bytes()
    except OSError as exc:
        raise ExtractionError(f"cannot read the file: {exc.strerror or exc}") from exc
    if not data.strip():
        raise ExtractionError("empty file")
    return data


def _has_text(record: RechtspraakRecord) -> bool:
    return bool(record.inhoudsindicatie.strip()) or any(s.text.strip() for s in record.sections)


# --- the second source ----------------------------------------------------------------------


@dataclass
class CrossChecker:
    """GET ``{url}?id=ECLI`` on the second source; one client for the whole run."""

    url: str
    timeout_s: float = CROSSCHECK_TIMEOUT_S
    failures_in_a_row: int = 0
    gave_up: bool = False
    _client: httpx.Client | None = field(default=None, repr=False)

    def _http(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout_s, follow_redirects=True)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def check(self, record: RechtspraakRecord) -> dict[str, Any]:
        """``{"status": "agree" | "discrepancies" | "unavailable", ...}`` for ``record``."""
        checked_at = datetime.now(UTC).isoformat()
        base: dict[str, Any] = {"source": self.url, "checked_at": checked_at}
        if self.gave_up:
            return {**base, "status": "unavailable",
                    "error": "skipped: the second source failed repeatedly in this run"}
        try:
            response = self._http().get(self.url, params={"id": record.ecli})
        except httpx.HTTPError as exc:
            self.failures_in_a_row += 1
            if self.failures_in_a_row >= CROSSCHECK_MAX_CONSECUTIVE_FAILURES:
                self.gave_up = True
            return {**base, "status": "unavailable",
                    "error": f"{type(exc).__name__}: {exc}"[:300]}
        self.failures_in_a_row = 0
        if response.status_code == 404:
            secondary: RechtspraakRecord | None = None
        elif response.status_code != 200:
            return {**base, "status": "unavailable", "error": f"HTTP {response.status_code}"}
        elif len(response.content) > CROSSCHECK_MAX_BYTES:
            return {**base, "status": "unavailable", "error": "answer too large"}
        else:
            try:
                secondary = parse_rechtspraak(response.content)
            except ExtractionError as exc:
                # the second source answered, but with something that is not this record:
                # that is a discrepancy a person should see, not a transport problem
                return {**base, "status": "discrepancies",
                        "discrepancies": [f"second source: unreadable record ({exc.reason})"]}
        found = crosscheck(record, secondary)
        return {**base, "status": "discrepancies" if found else "agree", "discrepancies": found}


def _merged_crosscheck(
    fresh: dict[str, Any] | None, previous: Any
) -> dict[str, Any] | None:
    """What goes into ``case_law.crosscheck``.

    No check configured: keep what was recorded. A check that could not run: keep the last
    known discrepancies (failing to ask is not an answer) and note the error.
    """
    if fresh is None:
        return previous if isinstance(previous, dict) else None
    if fresh["status"] == "unavailable" and isinstance(previous, dict):
        return {**previous, "last_error": fresh.get("error"),
                "last_attempt_at": fresh["checked_at"]}
    return fresh


# --- one record -----------------------------------------------------------------------------


@dataclass
class _RunContext:
    pipeline: IngestPipeline
    run: IngestRun
    checker: CrossChecker | None
    seen_files: dict[str, str] = field(default_factory=dict)  # ecli -> first file this run
    stats: Counter[str] = field(default_factory=Counter)

    def count(self, key: str, n: int = 1) -> None:
        with self.run.lock:
            self.run.counts[key] += n
        self.stats[key] += n


def _lenient_guard(
    record: RechtspraakRecord, previous: CaseLawState | None, transition: Transition
) -> Transition:
    """A record only a lenient parser could read may have lost a status marker: the same
    footing as an unreadable marker. With a known state the machine already does the right
    thing (a dead decision reading active is held, an active one stays active, so a person's
    confirmation sticks); on first sight there is nothing to keep, so it is held instead of
    becoming searchable unseen."""
    if (
        previous is not None
        or not record.recovered_leniently
        or transition.state.state is not Status.ACTIVE
    ):
        return transition
    reason = "the record is malformed XML recovered leniently and may have lost a status marker"
    held = replace(transition.state, state=Status.HELD, held_reason=reason)
    return Transition(
        state=held,
        previous=transition.previous,
        searchable=False,
        held=True,
        parse_errors=transition.parse_errors,
        changed=True,
    )


def _keep_known(
    incoming: dict[str, Any], before: Mapping[str, Any] | None
) -> tuple[dict[str, Any], list[str]]:
    """Fields the record left out keep their known values (tri-state: absent is not "none")."""
    if before is None:
        return incoming, []
    kept: list[str] = []
    out = dict(incoming)
    for name in _KEPT_FIELDS:
        if out[name] in (None, "") and before[name] not in (None, ""):
            out[name] = before[name]
            kept.append(name)
    return out, kept


def _source_document(record: RechtspraakRecord, data: bytes, file_label: str) -> SourceDocument:
    metadata: dict[str, Any] = {
        "ecli": record.ecli,
        "court": record.court,
        "decision_date": record.decision_date.isoformat() if record.decision_date else None,
        "area_of_law": "; ".join(record.areas_of_law) or None,
        "procedure": "; ".join(record.procedures) or None,
        "relations": [r.as_dict() for r in record.relations],
        "file": file_label,
    }
    return SourceDocument(
        source=SOURCE,
        external_id=record.ecli,
        title=document_title(record),
        doc_type="case_law",
        author=record.court,
        modified_at=_as_datetime(record.decision_date),
        source_url=DEEPLINK + record.ecli,
        content=data,
        mime_type="application/xml",
        metadata=metadata,
    )


def _ingest_file(ctx: _RunContext, path: Path, file_label: str) -> None:
    pipeline, run = ctx.pipeline, ctx.run
    try:
        data = _read(path)
        record = parse_rechtspraak(data)
    except ExtractionError as exc:
        pipeline.record_error(run, SOURCE, None, f"{file_label}: {exc.reason}",
                              {"file": file_label})
        return

    ecli = record.ecli
    first_file = ctx.seen_files.setdefault(ecli, file_label)
    duplicate_of = first_file if first_file != file_label else None

    with pipeline.database.transaction() as conn:
        before = _load_case(conn, ecli, lock=False)
    previous = _state_from_row(before) if before is not None else None
    transition = _lenient_guard(record, previous, next_state(previous, record))
    fresh_check = ctx.checker.check(record) if ctx.checker is not None else None

    outcome: DocumentOutcome | None = None
    if _has_text(record):
        outcome = pipeline.ingest(
            run, _source_document(record, data, file_label), public=True,
            search_state=transition.search_state,
        )
    else:
        with run.lock:
            run.counts["seen"] += 1
    _write_case(ctx, record, file_label=file_label, fresh_check=fresh_check, outcome=outcome,
                duplicate_of=duplicate_of)


def _write_case(
    ctx: _RunContext,
    record: RechtspraakRecord,
    *,
    file_label: str,
    fresh_check: dict[str, Any] | None,
    outcome: DocumentOutcome | None,
    duplicate_of: str | None,
) -> None:
    """The case_law row, the document's visibility and the report entries, atomically."""
    pipeline, run = ctx.pipeline, ctx.run
    ecli = record.ecli
    with pipeline.database.transaction() as conn:
        # Re-read under a row lock and re-run the (pure, cheap) machine: a confirmation or a
        # concurrent run may have changed the row since the first read.
        before = _load_case(conn, ecli, lock=True)
        previous = _state_from_row(before) if before is not None else None
        transition = _lenient_guard(record, previous, next_state(previous, record))
        new = transition.state
        row: dict[str, Any] = {
            "ecli": ecli,
            "court": record.court,
            "decision_date": _as_datetime(record.decision_date),
            "area_of_law": "; ".join(record.areas_of_law) or None,
            "procedure": "; ".join(record.procedures) or None,
            "relations": [r.as_dict() for r in record.relations],
            "withdrawn": new.withdrawn,
            "replaced_by": new.replaced_by,
            "set_aside_by": new.set_aside_by,
            "state": new.state.value,
            "held_reason": new.held_reason,
            "crosscheck": _merged_crosscheck(fresh_check, before["crosscheck"] if before else None),
        }
        row, kept = _keep_known(row, before)
        if before is None:
            _insert_case(conn, row)
            ctx.count("caselaw_new")
        elif any(before[k] != v for k, v in row.items()):
            _update_case(conn, row)
            ctx.count("caselaw_updated")
        else:
            ctx.count("caselaw_unchanged")
        moved = apply_search_state(conn, ecli, transition.search_state)
        ctx.count(f"caselaw_{new.state.value}")

        def event(kind: str, reason: str | None, details: dict[str, Any] | None = None) -> None:
            # The pipeline's event writer, inside this transaction: the row and its report
            # entries commit together.
            pipeline.record_event(conn, run, kind, SOURCE, ecli, reason,
                            {"file": file_label, **(details or {})})

        if duplicate_of is not None:
            event("duplicate", f"the same ECLI was already read from {duplicate_of} in this "
                  "run; the later file was ingested over it", {"first_file": duplicate_of})
            ctx.count("caselaw_duplicates")
        prev_label = previous.state.value if previous is not None else None
        for error in transition.parse_errors:
            if previous is None:
                outcome_note = "nothing was known yet" + (
                    ", so the decision is held" if new.state is Status.HELD
                    else f"; the other markers make it {new.state.value}"
                )
            else:
                outcome_note = (f"this marker kept its previous value (the decision was "
                                f"{prev_label}, now {new.state.value})")
            event("parse_error", f"{error}; {outcome_note}",
                  {"field": "status marker", "kept": prev_label})
            with run.lock:
                run.counts["parse_errors"] += 1
        for name in kept:
            event("parse_error", f"{name} absent in this record; kept the known value",
                  {"field": name, "kept": str(row[name])})
            with run.lock:
                run.counts["parse_errors"] += 1
        if (previous is None and new.state is not Status.ACTIVE) or (
            previous is not None and previous.state is not new.state
        ):
            event("state_change", f"{prev_label or 'new'} -> {new.state.value}",
                  {"from": prev_label, "to": new.state.value, "held_reason": new.held_reason,
                   "replaced_by": new.replaced_by, "set_aside_by": new.set_aside_by,
                   "chunks_changed": moved})
            ctx.count("caselaw_state_changes")
        if new.state is Status.HELD:
            event("held", new.held_reason, {"confirm": f"POST /v1/caselaw/{ecli}/confirm"})
        if outcome is None:
            note = "metadata only: no inhoudsindicatie and no body; state recorded in case_law"
            if before is not None and moved:
                note += "; the stored text of an earlier version follows the new state"
            event("metadata_only", note, {"state": new.state.value})
            ctx.count("caselaw_metadata_only")
            for warning in record.warnings:
                event("warning", warning)
        _crosscheck_events(ctx, event, fresh_check)


def _crosscheck_events(
    ctx: _RunContext,
    event: Callable[[str, str | None, dict[str, Any] | None], None],
    fresh: dict[str, Any] | None,
) -> None:
    if fresh is None:
        return
    if fresh["status"] == "discrepancies":
        found = list(fresh.get("discrepancies") or [])
        event("crosscheck", f"{len(found)} discrepancies with the second source (not resolved;"
              " the primary record decides the state)", {"discrepancies": found})
        ctx.count("caselaw_crosscheck_discrepancies")
    elif fresh["status"] == "unavailable":
        event("crosscheck_error", f"second source not checked: {fresh.get('error')}", None)
        ctx.count("caselaw_crosscheck_unavailable")
    else:
        ctx.count("caselaw_crosscheck_agree")


def _params(row: dict[str, Any]) -> dict[str, Any]:
    params = dict(row)
    params["relations"] = json.dumps(row["relations"], ensure_ascii=False)
    params["crosscheck"] = (
        json.dumps(row["crosscheck"], ensure_ascii=False) if row["crosscheck"] is not None
        else None
    )
    return params


def _insert_case(conn: Connection, row: dict[str, Any]) -> None:
    conn.execute(
        text(
            "INSERT INTO case_law (ecli, court, decision_date, area_of_law, procedure,"
            " relations, withdrawn, replaced_by, set_aside_by, state, held_reason, crosscheck)"
            " VALUES (:ecli, :court, :decision_date, :area_of_law, :procedure,"
            " CAST(:relations AS jsonb), :withdrawn, :replaced_by, :set_aside_by, :state,"
            " :held_reason, CAST(:crosscheck AS jsonb))"
        ),
        _params(row),
    )


def _update_case(conn: Connection, row: dict[str, Any]) -> None:
    conn.execute(
        text(
            "UPDATE case_law SET court = :court, decision_date = :decision_date,"
            " area_of_law = :area_of_law, procedure = :procedure,"
            " relations = CAST(:relations AS jsonb), withdrawn = :withdrawn,"
            " replaced_by = :replaced_by, set_aside_by = :set_aside_by, state = :state,"
            " held_reason = :held_reason, crosscheck = CAST(:crosscheck AS jsonb),"
            " updated_at = now() WHERE ecli = :ecli"
        ),
        _params(row),
    )


# --- the run --------------------------------------------------------------------------------


def held_cases(conn: Connection, limit: int = 1000) -> list[dict[str, Any]]:
    """Every held decision (not searchable until a person confirms it), oldest first."""
    rows = conn.execute(
        text(
            "SELECT ecli, held_reason, updated_at FROM case_law WHERE state = 'held'"
            " ORDER BY updated_at, ecli LIMIT :limit"
        ),
        {"limit": limit},
    ).mappings()
    return [
        {"ecli": r["ecli"], "reason": r["held_reason"], "since": r["updated_at"].isoformat(),
         "confirm": f"POST /v1/caselaw/{r['ecli']}/confirm"}
        for r in rows
    ]


def _events(conn: Connection, run: IngestRun, kinds: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    rows = conn.execute(
        text(
            "SELECT kind, external_id, reason, details FROM ingest_run_events"
            " WHERE run_id = :run_id AND kind = ANY(:kinds) ORDER BY seq LIMIT 5000"
        ),
        {"run_id": run.run_id, "kinds": list(kinds)},
    ).mappings()
    for r in rows:
        yield {"kind": r["kind"], "external_id": r["external_id"], "reason": r["reason"],
               "details": r["details"]}


def _caselaw_section(pipeline: IngestPipeline, run: IngestRun,
                     stats: Counter[str]) -> dict[str, Any]:
    """The case-law part of the delta report (the pipeline's report knows documents only)."""
    with pipeline.database.transaction() as conn:
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for ev in _events(conn, run, ("state_change", "held", "crosscheck", "crosscheck_error",
                                      "metadata_only", "duplicate")):
            by_kind.setdefault(ev["kind"], []).append(ev)
        pending = held_cases(conn)
    counts = {
        key: stats.get(f"caselaw_{key}", 0)
        for key in ("new", "updated", "unchanged", "active", "withdrawn", "voided",
                    "set_aside", "held", "metadata_only", "state_changes", "duplicates",
                    "crosscheck_agree", "crosscheck_discrepancies", "crosscheck_unavailable")
    }
    counts["held_pending"] = len(pending)
    return {
        "counts": counts,
        "held": pending,
        "state_changes": by_kind.get("state_change", []),
        "crosscheck": by_kind.get("crosscheck", []),
        "crosscheck_errors": by_kind.get("crosscheck_error", []),
        "metadata_only": by_kind.get("metadata_only", []),
        "duplicates": by_kind.get("duplicate", []),
    }


def ingest_rechtspraak_folder(
    pipeline: IngestPipeline,
    path: Path,
    *,
    started_by: str,
    on_progress: Progress | None = None,
    run: IngestRun | None = None,
) -> dict[str, Any]:
    """Ingest every ``*.xml`` under ``path``; returns the delta report plus a ``caselaw``
    section (state counts, held decisions awaiting confirmation, state changes, cross-check
    discrepancies, metadata-only records, duplicates)."""
    folder = Path(path).expanduser()
    run = run or pipeline.start_run(SOURCE, {"path": str(folder)}, started_by)
    if not folder.is_dir():
        return pipeline.finish_run(run, status="failed", error=f"no folder at {folder}")
    url = pipeline.settings.rechtspraak_crosscheck_url
    ctx = _RunContext(pipeline, run, CrossChecker(url) if url else None)
    done = 0
    try:
        files = xml_files(folder)
        total = len(files)
        pipeline.progress(run, total=total, done=0)
        for file in files:
            label = str(file.relative_to(folder))
            try:
                _ingest_file(ctx, file, label)
            except Exception as exc:  # one record must never take the whole run down
                log.exception("case-law record failed", extra={"file": label})
                pipeline.record_error(run, SOURCE, None,
                                      f"{label}: internal error: {type(exc).__name__}",
                                      {"file": label})
            done += 1
            if on_progress is not None:
                on_progress(done, total)
            if done % PROGRESS_EVERY == 0:
                pipeline.progress(run, total=total, done=done)
        pipeline.progress(run, total=total, done=done)
    except KeyboardInterrupt:
        # Ctrl-C in the CLI: the run must not stay "running" forever in ingest_runs
        pipeline.finish_run(run, status="failed", error="interrupted")
        raise
    except Exception as exc:
        log.exception("case-law ingest failed")
        report = pipeline.finish_run(run, status="failed", error=type(exc).__name__)
        report["caselaw"] = _safe_section(pipeline, run, ctx.stats)
        return report
    finally:
        if ctx.checker is not None:
            ctx.checker.close()
    report = pipeline.finish_run(run)
    report["caselaw"] = _safe_section(pipeline, run, ctx.stats)
    return report


def _safe_section(pipeline: IngestPipeline, run: IngestRun,
                  stats: Counter[str]) -> dict[str, Any]:
    try:
        return _caselaw_section(pipeline, run, stats)
    except Exception as exc:  # the run's own report must still come back
        log.exception("case-law report section failed")
        return {"counts": {}, "error": type(exc).__name__}


# --- reading and confirming one decision ------------------------------------------------------


def _case_dict(conn: Connection, row: Mapping[str, Any]) -> dict[str, Any]:
    mark_writer(conn)  # counting the document's chunks reads past the chunks RLS policy
    doc = conn.execute(
        text(
            "SELECT d.document_id, d.search_state, d.title, (SELECT count(*) FROM chunks c"
            " WHERE c.document_id = d.document_id) AS chunks, (SELECT count(*) FROM chunks c"
            " WHERE c.document_id = d.document_id AND NOT c.suppressed) AS searchable_chunks"
            " FROM documents d WHERE d.source = :source AND d.external_id = :ecli"
        ),
        {"source": SOURCE, "ecli": row["ecli"]},
    ).mappings().first()
    state = _state_from_row(row)
    decided = row["decision_date"]
    return {
        "ecli": row["ecli"],
        "state": row["state"],
        "searchable": state.searchable,
        "search_state": state.search_state,
        "held_reason": row["held_reason"],
        "court": row["court"],
        "decision_date": decided.date().isoformat() if decided is not None else None,
        "area_of_law": row["area_of_law"],
        "procedure": row["procedure"],
        "withdrawn": row["withdrawn"],
        "replaced_by": row["replaced_by"],
        "set_aside_by": row["set_aside_by"],
        "relations": row["relations"],
        "crosscheck": row["crosscheck"],
        "updated_at": row["updated_at"].isoformat(),
        "document": dict(doc) if doc is not None else None,
    }


def get_case(conn: Connection, ecli: str) -> dict[str, Any]:
    canonical = normalise_ecli(ecli) or ecli
    row = _load_case(conn, canonical, lock=False)
    if row is None:
        raise CaseNotFoundError(canonical)
    return _case_dict(conn, row)


def list_cases(conn: Connection, state: str | None, limit: int) -> list[dict[str, Any]]:
    rows = conn.execute(
        text(
            "SELECT ecli, state, held_reason, court, decision_date, updated_at FROM case_law"
            " WHERE CAST(:state AS text) IS NULL OR state = CAST(:state AS text)"
            " ORDER BY ecli LIMIT :limit"
        ),
        {"state": state, "limit": limit},
    ).mappings()
    return [
        {"ecli": r["ecli"], "state": r["state"], "held_reason": r["held_reason"],
         "court": r["court"],
         "decision_date": r["decision_date"].date().isoformat() if r["decision_date"] else None,
         "updated_at": r["updated_at"].isoformat()}
        for r in rows
    ]


def confirm_case_in(conn: Connection, ecli: str, actor: str) -> dict[str, Any]:
    """Confirm a held decision inside the caller's transaction (see ``confirm_case``)."""
    from app.walls import policy

    canonical = normalise_ecli(ecli) or ecli
    row = _load_case(conn, canonical, lock=True)
    if row is None:
        raise CaseNotFoundError(canonical)
    previous = _state_from_row(row)
    new = confirm(previous)  # NotHeldError when there is nothing to confirm
    conn.execute(
        text(
            "UPDATE case_law SET state = :state, held_reason = NULL, updated_at = now()"
            " WHERE ecli = :ecli"
        ),
        {"state": new.state.value, "ecli": canonical},
    )
    moved = apply_search_state(conn, canonical, new.search_state)
    # A person made a decision searchable again: that belongs in the hash-chained log. It is
    # not an access-policy change, so policy_version is not bumped (no cache needs flushing).
    policy.record_change(
        conn,
        actor=actor,
        action="caselaw.confirm",
        object_type="case_law",
        object_id=canonical,
        reason=previous.held_reason,
        details={"from": Status.HELD.value, "to": new.state.value, "chunks_changed": moved},
        version=policy.current_version(conn),
    )
    updated = _load_case(conn, canonical, lock=False)
    if updated is None:  # cannot happen: the row is locked by this transaction
        raise CaseNotFoundError(canonical)
    return _case_dict(conn, updated)


def confirm_case(database: Database, ecli: str, actor: str) -> dict[str, Any]:
    """A person confirmed a held decision: it takes the state its markers describe (active:
    searchable again). Raises CaseNotFoundError or NotHeldError."""
    with database.transaction() as conn:
        return confirm_case_in(conn, ecli, actor)


__all__ = [
    "CaseNotFoundError",
    "CrossChecker",
    "NotHeldError",
    "apply_search_state",
    "confirm_case",
    "get_case",
    "held_cases",
    "ingest_rechtspraak_folder",
    "list_cases",
    "xml_files",
]
