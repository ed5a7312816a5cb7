"""Request and response bodies of the wall routes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.types import AwareDatetime, AwareDatetimeRoundedUp, Identifier, ShortText


class Protects(BaseModel):
    model_config = ConfigDict(extra="forbid")
    matters: list[Identifier] = Field(default_factory=list, max_length=100_000)
    clients: list[Identifier] = Field(default_factory=list, max_length=10_000)


class WallIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["exclusionary", "inclusionary"]
    title: ShortText
    reason: ShortText = ""
    protects: Protects
    screened: list[Identifier] = Field(default_factory=list, max_length=10_000)
    allowed: list[Identifier] = Field(default_factory=list, max_length=10_000)
    include_team: bool = Field(default=True, strict=True)  # not "no" or 0: access turns on it
    # finer than a microsecond: the start is cut, the end rounded up (the wall holds for at
    # least the window asked, app/types.py _rfc3339_rounded_up)
    effective_from: AwareDatetime | None = None
    effective_until: AwareDatetimeRoundedUp | None = None

    @field_validator("title")
    @classmethod
    def _titled(cls, value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        return value


class LiftIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: ShortText

    @field_validator("reason")
    @classmethod
    def _given(cls, value: str) -> str:
        if not value:
            raise ValueError("must not be empty: say why the wall is lifted")
        return value


class WallCreated(BaseModel):
    wall_id: str
    policy_version: int


class WallOut(BaseModel):
    wall_id: str
    kind: str
    title: str
    reason: str
    protects: Protects
    screened: list[str]
    allowed: list[str]
    include_team: bool
    effective_from: datetime | None
    effective_until: datetime | None
    created_by: str
    created_at: datetime
    lifted_at: datetime | None
    lifted_by: str | None
    lift_reason: str | None
    active: bool
    covered_matters: list[str] | None = None
    # title, status, client and parties of each matter named (GET /v1/walls/{id} only)
    matter_details: list[dict[str, Any]] | None = None


class WallList(BaseModel):
    items: list[WallOut]


class LiftOut(BaseModel):
    wall_id: str
    policy_version: int
    lifted_at: datetime
