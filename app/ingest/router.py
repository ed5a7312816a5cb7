"""Document push/delete and ingest runs (admin)."""

from __future__ import annotations

import base64
import binascii
import uuid
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Response
from sqlalchemy import text

from app.deps import Admin, ConnDep, ResourcesDep
from app.errors import NotFound, Unprocessable
from app.ingest.pipeline import IngestPipeline, load_report
from app.ingest.runs import BackgroundRuns, ingest_connector, ingest_folder, ingest_rechtspraak
from app.ingest.schemas import DocumentIn, DocumentOut, RunIn, RunStarted
from app.resources import Resources
from app.walls.retag import mark_writer
from connectors.base import SourceAcl, SourceDocument

router = APIRouter(prefix="/v1", tags=["documents and ingestion"])


def pipeline_for(resources: Resources) -> IngestPipeline:
    pipeline = resources.extras.get("pipeline")
    if pipeline is None:
        pipeline = IngestPipeline(
            resources.database, resources.require_embedder(), resources.settings
        )
        resources.extras["pipeline"] = pipeline
    return pipeline


def _runs(resources: Resources) -> BackgroundRuns:
    runs = resources.extras.get("runs")
    if runs is None:
        runs = BackgroundRuns()
        resources.extras["runs"] = runs
    return runs


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


@router.post("/documents", response_model=DocumentOut)
def push_document(body: DocumentIn, principal: Admin, resources: ResourcesDep) -> DocumentOut:
    doc = to_source_document(body)
    pipeline = pipeline_for(resources)
    run = pipeline.start_run(
        "api", {"source": doc.source, "external_id": doc.external_id}, principal.person_id
    )
    outcome = pipeline.ingest(run, doc)
    report = pipeline.finish_run(run)
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
    source: str, external_id: str, principal: Admin, resources: ResourcesDep
) -> dict[str, Any]:
    pipeline = pipeline_for(resources)
    run = pipeline.start_run("api", {"delete": f"{source}/{external_id}"}, principal.person_id)
    deleted = pipeline.delete(run, source.lower(), external_id, "deleted through the API")
    pipeline.finish_run(run)
    if not deleted:
        raise NotFound("Document", f"{source}/{external_id}")
    return {
        "deleted": True,
        "source": source.lower(),
        "external_id": external_id,
        "run_id": str(run.run_id),
    }


@router.get("/documents/{source}/{external_id:path}")
def get_document(source: str, external_id: str, principal: Admin, conn: ConnDep) -> dict[str, Any]:
    mark_writer(conn)
    row = (
        conn.execute(
            text(
                "SELECT d.document_id, d.source, d.external_id, d.version, d.status, "
                "d.quarantine_reason, d.client_id, d.matter_id, d.client_raw, d.matter_raw, "
                "d.doc_type, d.title, d.author, d.modified_at, d.source_acl_id, d.search_state, "
                "d.ingested_at, d.updated_at, (SELECT count(*) FROM chunks c "
                "WHERE c.document_id = d.document_id) AS chunks "
                "FROM documents d WHERE d.source = :s AND d.external_id = :e"
            ),
            {"s": source.lower(), "e": external_id},
        )
        .mappings()
        .first()
    )
    if row is None:
        raise NotFound("Document", f"{source}/{external_id}")
    return dict(row)


@router.post("/ingest/runs", response_model=RunStarted, status_code=202)
def start_run(
    body: RunIn, principal: Admin, resources: ResourcesDep, response: Response
) -> RunStarted:
    pipeline = pipeline_for(resources)
    settings = resources.settings
    if body.connector in ("folder", "rechtspraak"):
        if not body.path:
            raise Unprocessable("path_required", "This connector needs a path.", field="path")
        path = Path(body.path).expanduser()
        if not path.is_dir():
            raise Unprocessable("path_not_found", f"No folder at {body.path}.", field="path")
    run = pipeline.start_run(body.connector, body.model_dump(), principal.person_id)
    if body.connector == "folder":
        work: Any = lambda: ingest_folder(pipeline, path, started_by=principal.person_id, run=run)  # noqa: E731
    elif body.connector == "rechtspraak":
        work = lambda: ingest_rechtspraak(pipeline, path, started_by=principal.person_id, run=run)  # noqa: E731
    else:
        work = lambda: ingest_connector(  # noqa: E731
            pipeline,
            settings,
            body.connector,
            mode=body.mode,
            started_by=principal.person_id,
            run=run,
        )
    _runs(resources).start(run, work)
    response.headers["Location"] = f"/v1/ingest/runs/{run.run_id}"
    return RunStarted(run_id=str(run.run_id), status="running", connector=body.connector)


@router.get("/ingest/runs/{run_id}")
def get_run(run_id: str, principal: Admin, conn: ConnDep) -> dict[str, Any]:
    try:
        parsed = uuid.UUID(run_id)
    except ValueError:
        raise NotFound("Ingest run", run_id) from None
    report = load_report(conn, parsed)
    if not report:
        raise NotFound("Ingest run", run_id)
    return report


@router.post("/ingest/runs/{run_id}/confirm-sweep")
def confirm_held_sweep(run_id: str, principal: Admin, resources: ResourcesDep) -> dict[str, Any]:
    """Apply the deletions a sync held (more than EWALL_SWEEP_MAX_FRACTION of a library or
    cabinet at once). Each held id is point-checked again; the report of the new run is
    returned. 404: no such run; 409: its sweep is not (or no longer) the one held."""
    from app.errors import Conflict
    from app.ingest.runs import confirm_sweep
    from connectors.http import ConnectorError
    from connectors.sync import SweepNotHeldError

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
