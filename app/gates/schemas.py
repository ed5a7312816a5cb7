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
    follows: str | None = Field(
        default=None,
        description="When the text first cites this ECLI by its ordinal alone, listed after "
        "another ECLI of the same court and year (\"ECLI:NL:HR:2019:1278, 1279 en 1280\"): "
        "that ECLI. The ordinal is checked as the full ECLI in `ecli`.",
    )


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


class ReasonOut(BaseModel):
    kind: str = Field(
        description="no_support, fact_mismatch, negation, misattributed, marker_out_of_range "
        "or cited_unavailable"
    )
    detail: str = Field(description="The fact as written, the negation, the rank that holds it.")


class EvidenceOut(BaseModel):
    chunk_id: str
    rank: int = Field(description="The chunk's rank in this retrieval.")
    passage: str = Field(description="The sentence or window of the chunk that holds it best.")


class SentenceOut(BaseModel):
    text: str
    supported: bool
    best_chunk_id: str | None
    similarity: float | None = Field(
        description="Score of the evidence: lexical containment and cosine, weighted as calibrated."
    )
    reasons: list[ReasonOut] = Field(default_factory=list)
    evidence: EvidenceOut | None = None
    cited: list[int] | None = Field(default=None, description="Ranks its markers cite.")
    cited_supported: bool | None = Field(
        default=None, description="Does a cited result hold it? (null without markers)"
    )


class GroundingOut(BaseModel):
    ok: bool
    sentences: list[SentenceOut]
    threshold: float = Field(description="The calibrated threshold the score was held to.")
    retrieval_id: str
    checked_at: datetime
    trimmed_answer: str = Field(
        default="", description="The answer without unsupported sentences, markers kept."
    )


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
    cause: Literal["source_acl", "quarantined", "deleted", "withdrawn", "held"] | None = Field(
        default=None,
        description="source_acl: documents the session read whose source ACL no longer admits "
        "the person (no wall to name); quarantined: documents read that are visible to no one "
        "now (their matter unknown to the matrix, say); deleted: documents read that the firm "
        "no longer holds; withdrawn, held: decisions read that search no longer returns; null "
        "for a matter behind a wall.",
    )
    documents: list[str] | None = Field(
        default=None,
        description='With cause: those documents, as "<source>:<external_id>" (none named '
        "beside a matter the caller may not see now).",
    )


class SessionGateOut(BaseModel):
    session_id: str
    status: Literal["ok", "tainted"]
    reasons: list[SessionReason]
    people: list[str]
    checked_at: datetime
    policy_version: int
