"""Bodies of the document and ingest-run routes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator
from pydantic.config import JsonDict

from app.types import (
    CONTROL,
    EXTERNAL_ID_MAX,
    AwareDatetime,
    Principal,
    ShortText,
    SourceKey,
    hidden,
)

# trimmed as a push stores it; GET and DELETE /v1/documents/{source}/{external_id} read the
# path's id alike (as written, " D-6" was a 404 for the D-6 a push had just stored)
ExternalId = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=EXTERNAL_ID_MAX)
]
MAX_TEXT = 5_000_000
MAX_BASE64 = 30_000_000


class AclIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    default: Literal["public", "view", "private"] = "private"
    allow: list[Principal] = Field(default_factory=list, max_length=10_000)
    deny: list[Principal] = Field(default_factory=list, max_length=10_000)


def _not_nullable(schema: JsonDict) -> None:
    # absent is public within the firm, null is refused (DocumentIn._acl_given): a client
    # generated from /openapi.json must not be told that null is allowed
    options = schema.pop("anyOf", None)
    if isinstance(options, list):
        schema.update(next(o for o in options if isinstance(o, dict) and o.get("type") != "null"))
    schema.pop("default", None)


class DocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: SourceKey
    external_id: ExternalId
    version: ShortText | None = None
    client_id: ShortText | None = None
    matter_id: ShortText | None = None
    doc_type: ShortText | None = None
    title: ShortText | None = None
    author: ShortText | None = None
    modified_at: AwareDatetime | None = None
    text: Annotated[str, StringConstraints(max_length=MAX_TEXT)] | None = None
    content_base64: Annotated[str, StringConstraints(max_length=MAX_BASE64)] | None = None
    mime_type: ShortText | None = None
    acl: AclIn | None = Field(default=None, json_schema_extra=_not_nullable)

    @field_validator("external_id")
    @classmethod
    def _printable(cls, value: str) -> str:
        # C0 and C1 controls ("\x9b" starts a terminal escape), and what does not show: a
        # direction override or a zero-width space makes an id look like another
        if CONTROL.search(value) or any(c in "\t\n\r\ufffd" for c in value) or hidden(value):
            raise ValueError("must not contain control, invisible or unassigned characters")
        return value

    @field_validator("acl", mode="before")
    @classmethod
    def _acl_given(cls, value: object) -> object:
        # absent: public within the firm (api.md); null is not "absent", and reading it as
        # public would open a private document to the firm (the source's rules unread)
        if value is None:
            raise ValueError("must be an object; leave acl out for public within the firm")
        return value


class DocumentOut(BaseModel):
    document_id: int | None
    status: str
    chunks: int
    added: int
    removed: int
    quarantined: bool
    reason: str | None = None
    run_id: str | None = None


class RunIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    connector: Literal["folder", "imanage", "netdocuments", "rechtspraak"]
    path: ShortText | None = None
    mode: Literal["full", "delta"] = "delta"


class RunStarted(BaseModel):
    run_id: str
    status: str
    connector: str
    job_id: int | None = None


class DocumentQueued(BaseModel):
    """202 for a document at or above EWALL_DOCUMENT_ASYNC_CHARS: follow the run."""

    run_id: str
    job_id: int
    status: str
    source: str
    external_id: str
