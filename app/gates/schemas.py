"""Request and response bodies of the gate routes."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.types import SessionId

MAX_TEXT_CHARS = 200_000


class CitationsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(max_length=MAX_TEXT_CHARS, description="The draft; ECLIs are found in it.")
    session_id: SessionId | None = None


class CitationOut(BaseModel):
    ecli: str
    live: bool
    reason: str
    code: str = Field(description="live, withdrawn, replaced, vervallen, set_aside or unverifiable")
    by: str | None = Field(
        default=None, description="The ECLI that replaced, voided or set it aside, when known."
    )
    http_status: int | None = None
    cached: bool = False
    elapsed_ms: float = 0.0


class CitationsOut(BaseModel):
    ok: bool = Field(description="True when every citation is live (also when there is none).")
    citations: list[CitationOut]
    checked_at: datetime
    source: str = Field(description="The source the citations were checked against.")


class GroundingIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    retrieval_id: uuid.UUID
    answer: str = Field(max_length=MAX_TEXT_CHARS)
    session_id: SessionId | None = None

    @field_validator("answer")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must contain at least one sentence")
        return value


class SentenceOut(BaseModel):
    text: str
    supported: bool
    best_chunk_id: str | None
    similarity: float | None


class GroundingOut(BaseModel):
    ok: bool
    sentences: list[SentenceOut]
    threshold: float
    retrieval_id: str
    checked_at: datetime


class SessionGateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: SessionId


class SessionReason(BaseModel):
    kind: Literal["wall", "adverse"]
    matters: list[str] = Field(description="Only matters the caller may see now.")
    walls: list[str]
    person_id: str
    party: str | None = Field(
        default=None, description="The party that makes two matters adverse, when both show."
    )


class SessionGateOut(BaseModel):
    session_id: str
    status: Literal["ok", "tainted"]
    reasons: list[SessionReason]
    people: list[str]
    checked_at: datetime
    policy_version: int
