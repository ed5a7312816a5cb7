"""Document push/delete and ingest runs (admin)."""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from sqlalchemy import Connection

from app.deps import Admin, ConnDep, IngestTurn, ResourcesDep
from app.errors import AppError, Conflict, NotFound, RateLimited, Unprocessable
from app.ingest.document_write import access_until_written
from app.ingest.pipeline import STORE_FAILED, IngestPipeline
from app.ingest.preparation import extract_document
from app.ingest.report import load_report
from app.ingest.repository import (
    document_summary,
    reap_orphaned_run,
    stored_input,
    supersede_document_jobs,
)
from app.ingest.runs import confirm_sweep
from app.ingest.schemas import (
    DocumentIn,
    DocumentOut,
    DocumentQueued,
    ExternalId,
    RunIn,
    RunStarted,
)
from app.ingest.types import ExtractionError
from app.jobs.repository import enqueue, job_of_run, pending_for_person
from app.reembed.service import check_job_model
from app.resources import Resources
from app.types import NOBODY_ACL, SourceKey
from connectors import registry
from connectors.base import SourceAcl, SourceDocument, SourcePathError
from connectors.http import ConnectorError
from connectors.sync import SweepNotHeldError

router = APIRouter(prefix="/v1", tags=["documents and ingestion"])


def pipeline_for(resources: Resources) -> IngestPipeline:
    return resources.require_pipeline()  # built in the lifespan


DOCUMENT_JOB = "ingest.document"
RUN_JOB = "ingest.run"
_RATE_LIMITED: dict[int | str, dict[str, Any]] = {
    429: {"description": "Too many of your jobs are queued (see Retry-After)."}
}


def _queue_job(
    resources: Resources,
    *,
    kind: str,
    person_id: str,
    connector: str,
    params: dict[str, Any],
    payload: dict[str, Any],
    document: SourceDocument | None = None,
) -> tuple[uuid.UUID, int]:
    """A run and its job, committed together; the person's queue is bounded. ``document``:
    a background push, after which earlier ones never apply, and whose access the stored
    version takes at once when it only narrows it, else hides it until the job writes
    (app.ingest.document_write.access_until_written)."""
    settings = resources.settings
    pipeline = pipeline_for(resources)
    with resources.database.transaction() as conn:
        check_job_model(conn, resources.require_embedder().model_id)  # 503 after a switch
        _check_pending(conn, person_id, settings.job_max_pending_per_person)
        run = pipeline.start_run(
            connector, params, person_id, conn=conn, progress={"state": "queued"}
        )
        job_id = enqueue(
            conn,
            kind=kind,
            person_id=person_id,
            payload=payload,
            max_attempts=settings.job_max_attempts,
            run_id=run.run_id,
        )
        if document is not None:
            source, external_id = document.source, document.external_id
            supersede_document_jobs(conn, source, external_id, job_id, f"run {run.run_id}")
            acl_id = access_until_written(conn, document)
            if acl_id is not None:
                pipeline.record_event(
                    conn, run, "hidden" if acl_id == NOBODY_ACL else "acl_applied",
                    source, external_id,
                    "the queued push moves it, widens its rules or gives rules that admit "
                    "nobody: visible to nobody until written" if acl_id == NOBODY_ACL
                    else "the queued push's narrower rules, at once",
                )  # fmt: skip
    workers = resources.jobs
    if workers is not None:
        workers.wake()
    return run.run_id, job_id


def _check_pending(conn: Connection, person_id: str, limit: int) -> None:
    if pending_for_person(conn, person_id) >= limit:
        raise RateLimited(
            f"You have {limit} ingestion jobs queued or running; wait for one to finish.",
            retry_after_s=30,
            limit=limit,
            scope="jobs_pending",
        )


def text_size(doc: SourceDocument, threshold: int, unchanged: Callable[[], bool]) -> int:
    """What decides a push's path: characters of text, and for content under ``threshold``
    bytes the characters extracted from it, unless it is ``unchanged`` (the pipeline answers
    that at once). A 60 KB Word file unpacks to half a million characters and held its
    request for minutes of encoding (a check of 2026-12-06)."""
    if doc.content is None:
        return len(doc.text or "")
    if len(doc.content) >= threshold or unchanged():
        return len(doc.content)
    try:
        return len(extract_document(doc).text)
    except ExtractionError:
        return len(doc.content)  # the synchronous path reports why, as before


def _unchanged(resources: Resources, doc: SourceDocument) -> bool:
    """The document is stored, active, from this very input (the pipeline's own test)."""
    try:
        input_sha = pipeline_for(resources).input_fingerprint(doc, False, None)
    except (ValueError, OverflowError):
        return False  # what the pipeline reports as unreadable metadata
    with resources.database.transaction() as conn:
        stored = stored_input(conn, doc.source.strip(), doc.external_id.strip())
    return stored == ("active", input_sha)


def _tri_state(body: DocumentIn, name: str) -> str | None:
    """JSON null or "" is present-but-empty; a missing key is absent."""
    value = getattr(body, name)
    if name in body.model_fields_set and value is None:
        return ""
    return value  # type: ignore[no-any-return]


def to_source_document(body: DocumentIn) -> SourceDocument:
    if (body.text is None) == (body.content_base64 is None):
        raise Unprocessable(
            "content_required", "Give exactly one of text or content_base64.", field="text"
        )
    content: bytes | None = None
    if body.content_base64 is not None:
        if not body.mime_type:
            raise Unprocessable(
                "mime_type_required", "content_base64 needs a mime_type.", field="mime_type"
            )
        try:
            content = base64.b64decode(body.content_base64, validate=True)
        except (binascii.Error, ValueError):
            raise Unprocessable(
                "invalid_base64", "content_base64 is not valid base64.", field="content_base64"
            ) from None
    acl = None
    if body.acl is not None:
        acl = SourceAcl(
            default=body.acl.default, allow=frozenset(body.acl.allow), deny=frozenset(body.acl.deny)
        )
    return SourceDocument(
        source=body.source,
        external_id=body.external_id,
        version=body.version,
        client_id=_tri_state(body, "client_id"),
        matter_id=_tri_state(body, "matter_id"),
        doc_type=body.doc_type,
        title=body.title,
        author=body.author,
        modified_at=body.modified_at,
        text=body.text,
        content=content,
        mime_type=body.mime_type,
        acl=acl,
    )


@router.post(
    "/documents",
    response_model=DocumentOut,
    responses={
        202: {
            "model": DocumentQueued,
            "description": "Large document: ingested in the background.",
        },
        **_RATE_LIMITED,
    },
)
def push_document(
    body: DocumentIn, principal: Admin, turn: IngestTurn, resources: ResourcesDep
) -> Any:
    doc = to_source_document(body)
    threshold = resources.settings.document_async_chars
    if text_size(doc, threshold, lambda: _unchanged(resources, doc)) >= threshold:
        # A large document would hold this request (and the encoder) for minutes: it
        # becomes a background job whose run the caller follows.
        run_id, job_id = _queue_job(
            resources,
            kind=DOCUMENT_JOB,
            person_id=principal.person_id,
            connector="api",
            params={"source": doc.source, "external_id": doc.external_id, "queued": True},
            payload={"document": body.model_dump(mode="json", exclude_unset=True)},
            document=doc,
        )
        queued = DocumentQueued(
            run_id=str(run_id),
            job_id=job_id,
            status="queued",
            source=doc.source,
            external_id=doc.external_id,
        )
        return JSONResponse(
            queued.model_dump(),
            status_code=202,
            headers={"Location": f"/v1/ingest/runs/{run_id}"},
        )
    pipeline = pipeline_for(resources)
    run = pipeline.start_run(
        "api", {"source": doc.source, "external_id": doc.external_id}, principal.person_id
    )
    outcome = pipeline.ingest(run, doc)
    report = pipeline.finish_run(run)
    if outcome.status == "error" and outcome.reason == STORE_FAILED:
        # not the document's fault: the write did not go through (a lock not had in time, a
        # lost connection); the same push again may well succeed
        raise AppError(
            "ingest_unavailable",
            "Document not stored: the database did not take the write; push it again.",
            503,
            {"run_id": report.get("run_id")},
        )
    if outcome.status == "error":
        reason = outcome.reason or "the document could not be ingested"
        raise Unprocessable(
            "no_text" if reason.startswith("no text") else "unprocessable_document",
            f"Document not ingested: {reason}",
            field="content_base64" if body.content_base64 is not None else "text",
            run_id=report.get("run_id"),
        )
    return DocumentOut(**outcome.as_dict())


@router.delete("/documents/{source}/{external_id:path}")
def delete_document(
    source: SourceKey, external_id: ExternalId, principal: Admin, resources: ResourcesDep
) -> dict[str, Any]:
    pipeline = pipeline_for(resources)
    run = pipeline.start_run("api", {"delete": f"{source}/{external_id}"}, principal.person_id)
    deleted = pipeline.delete(run, source, external_id, "deleted through the API")
    pipeline.finish_run(run)
    if not deleted:
        raise NotFound("Document", f"{source}/{external_id}")
    return {
        "deleted": True,
        "source": source,
        "external_id": external_id,
        "run_id": str(run.run_id),
    }


@router.get("/documents/{source}/{external_id:path}")
def get_document(
    source: SourceKey, external_id: ExternalId, principal: Admin, conn: ConnDep
) -> dict[str, Any]:
    summary = document_summary(conn, source, external_id)
    if summary is None:
        raise NotFound("Document", f"{source}/{external_id}")
    return summary


@router.post("/ingest/runs", response_model=RunStarted, status_code=202, responses=_RATE_LIMITED)
def start_run(
    body: RunIn, principal: Admin, resources: ResourcesDep, response: Response
) -> RunStarted:
    payload: dict[str, Any] = {"connector": body.connector, "mode": body.mode}
    try:  # a DMS connector without its URL setting would only fail in the background
        registry.check_configured(body.connector, resources.settings)
    except registry.SourceNotConfiguredError as exc:
        raise Unprocessable("connector_not_configured", str(exc), field="connector") from None
    if registry.needs_path(body.connector):
        if not body.path:
            raise Unprocessable("path_required", "This connector needs a path.", field="path")
        try:  # "~nosuchuser/x", a name longer than the file system takes: no folder either
            path = Path(body.path).expanduser()
            found = path.is_dir()
            if found:  # an export folder without its sidecar: the job would only fail on it
                registry.check_path(body.connector, path)
        except SourcePathError as exc:
            raise Unprocessable(exc.code, f"{exc}.", field="path") from None
        except (OSError, RuntimeError, ValueError):
            found = False
        if not found:
            raise Unprocessable("path_not_found", f"No folder at {body.path}.", field="path")
        payload["path"] = str(path)
    run_id, job_id = _queue_job(
        resources,
        kind=RUN_JOB,
        person_id=principal.person_id,
        connector=body.connector,
        params=body.model_dump(),
        payload=payload,
    )
    response.headers["Location"] = f"/v1/ingest/runs/{run_id}"
    return RunStarted(run_id=str(run_id), status="queued", connector=body.connector, job_id=job_id)


@router.get("/ingest/runs/{run_id}")
def get_run(run_id: str, principal: Admin, conn: ConnDep) -> dict[str, Any]:
    try:
        parsed = uuid.UUID(run_id)
    except ValueError:
        raise NotFound("Ingest run", run_id) from None
    reap_orphaned_run(conn, parsed)  # a CLI run whose process died ends as failed here
    report = load_report(conn, parsed)
    if not report:
        raise NotFound("Ingest run", run_id)
    # background runs: the job's state, attempts and last error
    report["job"] = job_of_run(conn, parsed)
    return report


@router.post("/ingest/runs/{run_id}/confirm-sweep")
def confirm_held_sweep(run_id: str, principal: Admin, resources: ResourcesDep) -> dict[str, Any]:
    """Apply the deletions a sync held (more than EWALL_SWEEP_MAX_FRACTION of a library or
    cabinet at once). Each held id is point-checked again; the report of the new run is
    returned. 404: no such run; 409: its sweep is not (or no longer) the one held."""
    try:
        parsed = uuid.UUID(run_id)
    except ValueError:
        raise NotFound("Ingest run", run_id) from None
    try:
        return confirm_sweep(
            pipeline_for(resources), resources.settings, parsed, started_by=principal.person_id
        )
    except LookupError:
        raise NotFound("Ingest run", run_id) from None
    except SweepNotHeldError as exc:
        raise Conflict("sweep_not_held", str(exc)) from None
    except ConnectorError as exc:
        raise Unprocessable("connector_unavailable", str(exc)) from None
