"""Case-law ingestion: a folder of Rechtspraak open-data XML into the open wall group, as the
`RechtspraakSource` that the one run loop (`connectors.sync.run_source`) drives.

Per file: parse the record (the source's full load), run the withdrawal state machine
(``app.caselaw.state``) against what ``case_law`` knew, optionally cross-check a second
source, ingest the text through the shared pipeline (public, with the derived
``search_state``), then write the ``case_law`` row and the report entries in one transaction
(the source's ``ingest`` step).

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

import logging
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx

from app.caselaw import repository
from app.caselaw.cases import SOURCE, held_cases, state_from_row
from app.caselaw.parse import RechtspraakRecord, document_title, parse_rechtspraak
from app.caselaw.repository import CaseFields, StoredCase
from app.caselaw.state import CaseLawState, Status, Transition, crosscheck, next_state
from app.ingest.pipeline import DocumentOutcome, IngestPipeline, IngestRun
from app.ingest.types import ExtractionError
from connectors.base import (
    BaseSource,
    Checkpoint,
    DocumentFailure,
    OutcomeLike,
    Pipeline,
    SourceDocument,
    SourceItem,
    SourcePathError,
    SourceUnavailableError,
)
from connectors.files import NotReadError, read_regular
from connectors.http.allowlist import same_server
from connectors.sync import ProgressCallback, run_source

log = logging.getLogger("ewall.caselaw.ingest")

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
# The report sections of case-law events (see _caselaw_section).
_REPORTED_KINDS = (
    "state_change",
    "held",
    "crosscheck",
    "crosscheck_error",
    "metadata_only",
    "duplicate",
)


def _as_datetime(value: date | None) -> datetime | None:
    # decision_date is timestamptz; a date is midnight UTC so it reads back as the same day
    if value is None:
        return None
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


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


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path``, its links followed, is a file under ``root``: a record that links
    out of the folder was read and ingested as public case law, whatever it was."""
    try:
        return root in path.resolve().parents
    except (OSError, RuntimeError):  # a loop of links: reading it says why it cannot be read
        return True


def _read(path: Path) -> bytes:
    """The file's bytes; ExtractionError with a report-ready reason otherwise."""
    try:
        # a named pipe called x.xml (os.walk lists it as a file) hung the whole run
        data = read_regular(path, MAX_FILE_BYTES)
    except NotReadError as exc:
        raise ExtractionError(exc.reason) from exc
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
            return {
                **base,
                "status": "unavailable",
                "error": "skipped: the second source failed repeatedly in this run",
            }
        try:
            response = self._http().get(self.url, params={"id": record.ecli})
        except httpx.HTTPError as exc:
            self.failures_in_a_row += 1
            if self.failures_in_a_row >= CROSSCHECK_MAX_CONSECUTIVE_FAILURES:
                self.gave_up = True
            return {**base, "status": "unavailable", "error": f"{type(exc).__name__}: {exc}"[:300]}
        self.failures_in_a_row = 0
        if not all(same_server(self.url, hop.url) for hop in [*response.history, response]):
            # a record served elsewhere is not the second source's (as in the citation gate)
            return {**base, "status": "unavailable", "error": "redirected to another server"}
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
                return {
                    **base,
                    "status": "discrepancies",
                    "discrepancies": [f"second source: unreadable record ({exc.reason})"],
                }
        found = crosscheck(record, secondary)
        return {**base, "status": "discrepancies" if found else "agree", "discrepancies": found}


def _merged_crosscheck(fresh: dict[str, Any] | None, previous: Any) -> dict[str, Any] | None:
    """What goes into ``case_law.crosscheck``.

    No check configured: keep what was recorded. A check that could not run: keep the last
    known discrepancies (failing to ask is not an answer) and note the error.
    """
    if fresh is None:
        return previous if isinstance(previous, dict) else None
    if fresh["status"] == "unavailable" and isinstance(previous, dict):
        return {
            **previous,
            "last_error": fresh.get("error"),
            "last_attempt_at": fresh["checked_at"],
        }
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


def _keep_known(incoming: CaseFields, before: StoredCase | None) -> tuple[CaseFields, list[str]]:
    """Fields the record left out keep their known values (tri-state: absent is not "none")."""
    if before is None:
        return incoming, []
    kept = [
        name
        for name in _KEPT_FIELDS
        if getattr(incoming, name) in (None, "") and getattr(before, name) not in (None, "")
    ]
    return replace(incoming, **{name: getattr(before, name) for name in kept}), kept


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


def _ingest_record(
    ctx: _RunContext, record: RechtspraakRecord, data: bytes, file_label: str
) -> OutcomeLike:
    pipeline, run = ctx.pipeline, ctx.run
    ecli = record.ecli
    first_file = ctx.seen_files.setdefault(ecli, file_label)
    duplicate_of = first_file if first_file != file_label else None

    with pipeline.database.transaction() as conn:
        before = repository.load_case(conn, ecli, lock=False)
    previous = state_from_row(before) if before is not None else None
    transition = _lenient_guard(record, previous, next_state(previous, record))
    fresh_check = ctx.checker.check(record) if ctx.checker is not None else None

    outcome: DocumentOutcome | None = None
    if _has_text(record):
        outcome = pipeline.ingest(
            run,
            _source_document(record, data, file_label),
            public=True,
            search_state=transition.search_state,
        )
    else:
        with run.lock:
            run.counts["seen"] += 1
    _write_case(
        ctx,
        record,
        file_label=file_label,
        fresh_check=fresh_check,
        outcome=outcome,
        duplicate_of=duplicate_of,
    )
    return outcome if outcome is not None else _Outcome("metadata_only")


@dataclass(frozen=True)
class _Outcome:
    status: str


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
        before = repository.load_case(conn, ecli, lock=True)
        previous = state_from_row(before) if before is not None else None
        transition = _lenient_guard(record, previous, next_state(previous, record))
        new = transition.state
        incoming = CaseFields(
            ecli=ecli,
            court=record.court,
            decision_date=_as_datetime(record.decision_date),
            area_of_law="; ".join(record.areas_of_law) or None,
            procedure="; ".join(record.procedures) or None,
            relations=[r.as_dict() for r in record.relations],
            withdrawn=new.withdrawn,
            replaced_by=new.replaced_by,
            set_aside_by=new.set_aside_by,
            state=new.state.value,
            held_reason=new.held_reason,
            crosscheck=_merged_crosscheck(fresh_check, before.crosscheck if before else None),
        )
        row, kept = _keep_known(incoming, before)
        if before is None:
            repository.insert_case(conn, row)
            ctx.count("caselaw_new")
        elif any(getattr(before, f.name) != getattr(row, f.name) for f in fields(CaseFields)):
            repository.update_case(conn, row)
            ctx.count("caselaw_updated")
        else:
            ctx.count("caselaw_unchanged")
        moved = repository.set_document_search_state(conn, SOURCE, ecli, transition.search_state)
        ctx.count(f"caselaw_{new.state.value}")

        def event(kind: str, reason: str | None, details: dict[str, Any] | None = None) -> None:
            # The pipeline's event writer, inside this transaction: the row and its report
            # entries commit together.
            pipeline.record_event(
                conn, run, kind, SOURCE, ecli, reason, {"file": file_label, **(details or {})}
            )

        if duplicate_of is not None:
            event(
                "duplicate",
                f"the same ECLI was already read from {duplicate_of} in this "
                "run; the later file was ingested over it",
                {"first_file": duplicate_of},
            )
            ctx.count("caselaw_duplicates")
        prev_label = previous.state.value if previous is not None else None
        for error in transition.parse_errors:
            if previous is None:
                outcome_note = "nothing was known yet" + (
                    ", so the decision is held"
                    if new.state is Status.HELD
                    else f"; the other markers make it {new.state.value}"
                )
            else:
                outcome_note = (
                    f"this marker kept its previous value (the decision was "
                    f"{prev_label}, now {new.state.value})"
                )
            event(
                "parse_error",
                f"{error}; {outcome_note}",
                {"field": "status marker", "kept": prev_label},
            )
            with run.lock:
                run.counts["parse_errors"] += 1
        for name in kept:
            event(
                "parse_error",
                f"{name} absent in this record; kept the known value",
                {"field": name, "kept": str(getattr(row, name))},
            )
            with run.lock:
                run.counts["parse_errors"] += 1
        if (previous is None and new.state is not Status.ACTIVE) or (
            previous is not None and previous.state is not new.state
        ):
            event(
                "state_change",
                f"{prev_label or 'new'} -> {new.state.value}",
                {
                    "from": prev_label,
                    "to": new.state.value,
                    "held_reason": new.held_reason,
                    "replaced_by": new.replaced_by,
                    "set_aside_by": new.set_aside_by,
                    "chunks_changed": moved,
                },
            )
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
        event(
            "crosscheck",
            f"{len(found)} discrepancies with the second source (not resolved;"
            " the primary record decides the state)",
            {"discrepancies": found},
        )
        ctx.count("caselaw_crosscheck_discrepancies")
    elif fresh["status"] == "unavailable":
        event("crosscheck_error", f"second source not checked: {fresh.get('error')}", None)
        ctx.count("caselaw_crosscheck_unavailable")
    else:
        ctx.count("caselaw_crosscheck_agree")


# --- the report -------------------------------------------------------------------------------


def _caselaw_section(
    pipeline: IngestPipeline, run: IngestRun, stats: Counter[str]
) -> dict[str, Any]:
    """The case-law part of the delta report (the pipeline's report knows documents only)."""
    with pipeline.database.transaction() as conn:
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for ev in repository.run_events_of_kinds(conn, run.run_id, _REPORTED_KINDS):
            by_kind.setdefault(ev.kind, []).append(
                {
                    "kind": ev.kind,
                    "external_id": ev.external_id,
                    "reason": ev.reason,
                    "details": ev.details,
                }
            )
        pending = held_cases(conn)
    counts = {
        key: stats.get(f"caselaw_{key}", 0)
        for key in (
            "new",
            "updated",
            "unchanged",
            "active",
            "withdrawn",
            "voided",
            "set_aside",
            "held",
            "metadata_only",
            "state_changes",
            "duplicates",
            "crosscheck_agree",
            "crosscheck_discrepancies",
            "crosscheck_unavailable",
        )
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


# --- the source -------------------------------------------------------------------------------


class RechtspraakSource(BaseSource):
    """A folder of Rechtspraak XML (searched recursively) as a `Source`: a full load of
    every record, each ingested with its withdrawal state (fail closed), plus a ``caselaw``
    section in the run's report. It never sweeps: a record missing from the folder is not
    a withdrawn decision. Built for one run with the pipeline that ingests it."""

    kind = SOURCE
    name = SOURCE

    def __init__(self, path: Path | str, pipeline: IngestPipeline) -> None:
        self.folder = Path(path).expanduser()
        self.scope = f"path={self.folder}"
        self.pipeline = pipeline
        url = pipeline.settings.rechtspraak_crosscheck_url
        self.checker = CrossChecker(url) if url else None
        self._files: list[Path] | None = None
        self._current: tuple[SourceDocument, RechtspraakRecord, str] | None = None
        self._context: _RunContext | None = None

    def run_params(self) -> dict[str, Any]:
        return {"path": str(self.folder)}

    @staticmethod
    def check_path(path: Path | str) -> None:
        """FileNotFoundError when there is no folder, `SourcePathError` when it holds no
        record: the run loaded nothing and said nothing, a success."""
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise FileNotFoundError(f"no folder at {folder}")
        if not xml_files(folder):
            raise SourcePathError(f"no Rechtspraak records (*.xml files) in {folder}", "no_records")

    def warnings(self) -> list[str]:
        """A folder emptied since the run was asked for: nothing was loaded, said here."""
        if self._files == []:
            return [f"no Rechtspraak records (*.xml files) in {self.folder}: nothing was loaded"]
        return []

    def _listed(self) -> list[Path]:
        if self._files is None:
            if not self.folder.is_dir():
                raise SourceUnavailableError(f"no folder at {self.folder}")
            self._files = xml_files(self.folder)
        return self._files

    def total(self) -> int | None:
        return len(self._files) if self._files is not None else None

    def full(self, resume: Checkpoint | None) -> Iterator[SourceItem]:
        files = self._listed()
        root = self.folder.resolve()
        for file in files:
            label = str(file.relative_to(self.folder))
            if not _inside(file, root):  # a link out of the folder the admin named: not read
                yield DocumentFailure(
                    SOURCE, None, f"{label}: links outside the folder; not read",
                    details={"file": label},
                )  # fmt: skip
                continue
            try:
                data = _read(file)
                record = parse_rechtspraak(data)
            except ExtractionError as exc:
                yield DocumentFailure(
                    SOURCE, None, f"{label}: {exc.reason}", details={"file": label}
                )
                continue
            except Exception as exc:  # one record must never take the whole run down
                log.exception("case-law record failed", extra={"file": label})
                yield DocumentFailure(
                    SOURCE,
                    None,
                    f"{label}: internal error: {type(exc).__name__}",
                    details={"file": label},
                )
                continue
            doc = _source_document(record, data, label)
            self._current = (doc, record, label)
            yield doc

    def _ctx(self, run: IngestRun) -> _RunContext:
        if self._context is None or self._context.run is not run:
            self._context = _RunContext(self.pipeline, run, self.checker)
        return self._context

    def ingest(self, pipeline: Pipeline[Any], run: Any, doc: SourceDocument) -> OutcomeLike:
        if pipeline is not self.pipeline or not isinstance(run, IngestRun):
            raise TypeError("a RechtspraakSource ingests through the pipeline it was built with")
        current = self._current
        if current is None or current[0] is not doc:
            raise ValueError(f"{doc.external_id} is not the record this source just read")
        _, record, label = current
        try:
            return _ingest_record(self._ctx(run), record, doc.content or b"", label)
        except Exception as exc:  # one record must never take the whole run down
            log.exception("case-law record failed", extra={"file": label})
            self.pipeline.record_error(
                run, SOURCE, None, f"{label}: internal error: {type(exc).__name__}", {"file": label}
            )
            return _Outcome("error")

    def report(self, pipeline: Pipeline[Any], run: Any) -> dict[str, Any]:
        if not isinstance(run, IngestRun):
            return {}
        stats = self._context.stats if self._context is not None else Counter[str]()
        try:
            return {"caselaw": _caselaw_section(self.pipeline, run, stats)}
        except Exception as exc:  # the run's own report must still come back
            log.exception("case-law report section failed")
            return {"caselaw": {"counts": {}, "error": type(exc).__name__}}

    def close(self) -> None:
        if self.checker is not None:
            self.checker.close()


def ingest_rechtspraak_folder(
    pipeline: IngestPipeline,
    path: Path,
    *,
    started_by: str,
    on_progress: ProgressCallback | None = None,
    run: IngestRun | None = None,
) -> dict[str, Any]:
    """Ingest every ``*.xml`` under ``path`` through the run loop; returns the delta report
    plus a ``caselaw`` section (state counts, held decisions awaiting confirmation, state
    changes, cross-check discrepancies, metadata-only records, duplicates)."""
    source = RechtspraakSource(path, pipeline)
    try:
        return run_source(
            source,
            pipeline,
            None,
            mode="full",
            started_by=started_by,
            on_progress=on_progress,
            run=run,
            progress_every=PROGRESS_EVERY,
        )
    finally:
        source.close()


__all__ = [
    "CROSSCHECK_MAX_CONSECUTIVE_FAILURES",
    "CrossChecker",
    "RechtspraakSource",
    "ingest_rechtspraak_folder",
    "xml_files",
]
