"""Request and response bodies of the conflict-matrix routes."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from app.types import GroupSource, Identifier, Principal, ShortText, UserPrincipal, principal_key


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PersonIn(Strict):
    # left out: a known person keeps the name they have and a new one is named by their id
    # (an empty name is no one's: a PUT of {} to deactivate someone used to erase it)
    name: ShortText | None = None
    active: bool = Field(default=True, strict=True)  # not "yes", "no" or 0: access turns on it
    aliases: list[UserPrincipal] = Field(default_factory=list, max_length=200)

    @field_validator("name")
    @classmethod
    def _named(cls, value: str | None) -> str:
        if value is None:  # the default is not validated: only an explicit null comes here
            raise ValueError("must be a string (leave it out to keep a known person's name)")
        if not value:
            raise ValueError("must not be empty")
        return value


class PersonImport(PersonIn):
    person_id: Identifier


class GroupIn(Strict):
    members: list[Principal] = Field(default_factory=list, max_length=100_000)


class Named(Strict):
    """A body whose ``name`` is required and must not be empty."""

    name: ShortText

    @field_validator("name")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        return value


class ClientIn(Named):
    parent_id: Identifier | None = None


class ClientImport(ClientIn):
    client_id: Identifier


class PartyIn(Named):
    role: Literal["adverse", "related"]


def party_key(name: str) -> str:
    """When two party names are one: alike after NFKC, case folding and white space runs
    read as one space ("ACME  B.V." is "Acme B.V.", "Ａｃｍｅ" is "Acme")."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


class MatterIn(Strict):
    client_id: Identifier
    title: ShortText = ""
    status: Literal["open", "closed", "on_hold"] = "open"
    parties: list[PartyIn] = Field(default_factory=list, max_length=1000)
    team: list[Identifier] = Field(default_factory=list, max_length=5000)

    @field_validator("parties")
    @classmethod
    def _once_each(cls, parties: list[PartyIn]) -> list[PartyIn]:
        """A party named twice in one role is one party (the first spelling kept), as a
        team member named twice is one member: stored twice, a matter listed it twice.
        Not folded as the conflict search folds names (``normalize_name`` drops legal
        forms: "Acme B.V." and "Acme N.V." are two companies, both kept); the same name in
        another role stays too."""
        seen: dict[tuple[str, str], PartyIn] = {}
        for party in parties:
            seen.setdefault((party_key(party.name), party.role), party)
        return list(seen.values())


class MatterImport(MatterIn):
    matter_id: Identifier


class MatrixImport(Strict):
    people: list[PersonImport] = Field(default_factory=list, max_length=200_000)
    clients: list[ClientImport] = Field(default_factory=list, max_length=200_000)
    matters: list[MatterImport] = Field(default_factory=list, max_length=500_000)
    groups: list[GroupImport] = Field(default_factory=list, max_length=100_000)


class GroupImport(GroupIn):
    # folded as the principals that name the group are ("<source>:group:<id>"): an import of
    # "IMANAGE"/"LIT" was stored as written and matched no access list
    source: GroupSource
    group_id: Annotated[Identifier, AfterValidator(principal_key)]


MatrixImport.model_rebuild()


class PersonOut(BaseModel):
    person_id: str
    name: str
    active: bool
    aliases: list[str]
    policy_version: int | None = None


class ClientOut(BaseModel):
    client_id: str
    name: str
    parent_id: str | None
    policy_version: int | None = None


class MatterOut(BaseModel):
    matter_id: str
    client_id: str
    title: str
    status: str
    parties: list[PartyIn]
    team: list[str]
    wall_group_id: str | None = None
    policy_version: int | None = None


class GroupOut(BaseModel):
    source: str
    group_id: str
    members: list[str]
    policy_version: int | None = None


class ImportOut(BaseModel):
    policy_version: int
    changed: bool
    counts: dict[str, int]
