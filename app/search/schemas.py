"""Search request and response bodies."""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from app.types import (
    AwareDatetime,
    AwareDatetimeRoundedUp,
    Identifier,
    NewSessionId,
    exact_instant,
    hidden,
    lookup_id,
    no_control,
)


# no control characters (tab and line breaks stay in a question): they would be stored in
# the audit row as sent, and a terminal or log reading it would run them
def _visible(value: str) -> str:
    """A question of only invisible characters (zero-width spaces, direction marks) is
    empty: it would search on nothing and return the dense leg's nearest chunks to nothing."""
    if all(c.isspace() or unicodedata.category(c) == "Cf" for c in value):
        raise ValueError("must contain visible text")
    return value


Query = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=2000),
    AfterValidator(no_control),
    AfterValidator(_visible),
]
def one_line(value: str) -> str:
    """A label (the model, the prompt version) is one line that shows as itself: a line
    break or a direction override in it reads as another label in the audit log and the
    console (a check of 2026-12-07 stored "gpt\u202e..." and "a\nb")."""
    if any(c in "\t\n\r" for c in value) or hidden(value):
        raise ValueError("must be one line of visible characters")
    return value


LABEL_MAX = 200  # a model or prompt-version label, from the body or a header
Label = Annotated[
    str,
    StringConstraints(strip_whitespace=True, max_length=LABEL_MAX),
    AfterValidator(no_control),
    AfterValidator(one_line),
]
FilterValue = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=500),
    AfterValidator(no_control),
]
# a matter id filter names the matter as the matrix and the documents store it (NFC): one
# spelt decomposed narrowed the search to nothing
MatterFilter = Annotated[FilterValue, AfterValidator(lookup_id)]


class Filters(BaseModel):
    """Each filter narrows; an empty list is refused rather than read as "no filter" (which
    would widen what the caller asked for: an agent sending the user's empty selection).

    The modified range against times stored in microseconds: ``modified_from``
    (``modified_at >=``) is rounded up to the microsecond, ``modified_to`` (``<=``) cut, so
    a bound finer than a microsecond admits exactly the rows inside it. Cut,
    ``modified_from=…00.0000001Z`` took a document modified at ``…00Z``, before it."""

    model_config = ConfigDict(extra="forbid")
    doc_types: list[FilterValue] | None = Field(default=None, min_length=1, max_length=100)
    sources: list[FilterValue] | None = Field(default=None, min_length=1, max_length=100)
    matter_ids: list[MatterFilter] | None = Field(default=None, min_length=1, max_length=10_000)
    modified_from: AwareDatetimeRoundedUp | None = None
    modified_to: AwareDatetime | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _range_not_inverted(cls, data: Any, handler: ModelWrapValidatorHandler[Filters]) -> Any:
        """A range that ends before it begins is a mistake (swapped dates), not a question
        whose answer is nothing. Compared as written, to the nanosecond: once rounded,
        ``…00.0000001Z`` to ``…00.0000005Z`` (a range inside one microsecond, which no stored
        time falls in: an empty answer) would read as one that ends before it begins.

        Reported beside the other fields' errors, as every 422 lists them (details.errors):
        checked before the fields, it was the only error of a body that had others too
        (``"doc_types": []`` as well), and a caller mended one to meet the next."""
        if not isinstance(data, dict):
            return handler(data)
        start = exact_instant(data.get("modified_from"))
        end = exact_instant(data.get("modified_to"))
        if start is None or end is None or end >= start:
            return handler(data)
        found: list[InitErrorDetails] = []
        try:
            handler(data)
        except ValidationError as exc:
            found = [
                InitErrorDetails(
                    type=PydanticCustomError(err["type"], err["msg"]),
                    loc=err["loc"],
                    input=err["input"],
                )
                for err in exc.errors()
            ]
        inverted = PydanticCustomError(
            "value_error", "Value error, must not be before modified_from"
        )
        found.append(
            InitErrorDetails(type=inverted, loc=("modified_to",), input=data["modified_to"])
        )
        raise ValidationError.from_exception_data(cls.__name__, found)


class SearchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: Query
    k: int = Field(default=10, ge=1, le=100, strict=True)  # not true, "1_0" or 10.0
    mode: Literal["hybrid", "dense", "sparse"] = "hybrid"
    filters: Filters | None = None
    model: Label | None = None
    prompt_version: Label | None = None
    session_id: NewSessionId | None = None
    # binds the session to a matter: its searches narrow to it plus public sources
    session_matter_id: Identifier | None = None
    # one search of a bound session searches everything the person may see (audited as such)
    session_widen: bool = Field(default=False, strict=True)  # not "yes", "t" or 1
    collapse: Literal["document"] | None = None

    @model_validator(mode="after")
    def _session_binding_needs_a_session(self) -> SearchIn:
        if self.session_matter_id is not None and self.session_id is None:
            raise ValueError("session_matter_id binds a session: give session_id too")
        if self.session_widen and self.session_id is None:
            # accepted before and nothing of it audited: a caller meant a session it did not name
            raise ValueError("session_widen widens a bound session: give session_id too")
        return self


class DocumentRef(BaseModel):
    source: str
    external_id: str
    title: str
    doc_type: str
    modified_at: datetime | None


class OtherSection(BaseModel):
    """Another matching chunk of a collapsed hit's document (fused rank order). Its text is
    not sent; the audit row records it under the hit's rank (a sub-rank) with this hash."""

    chunk_id: str
    section_path: str
    page_from: int | None
    page_to: int | None
    score: float
    content_sha256: str


class Hit(BaseModel):
    chunk_id: str
    rank: int
    score: float
    ranks: dict[str, int | None]
    document: DocumentRef
    matter_id: str | None
    client_id: str | None
    section_path: str
    page_from: int | None
    page_to: int | None
    text: str
    snippet: str
    content_sha256: str
    other_sections: list[OtherSection] | None = None


class SearchOut(BaseModel):
    retrieval_id: str
    policy_version: int
    took_ms: float
    strategy: str
    results: list[Hit]
    session_id: str | None = None
    session_matter_id: str | None = None
    session_scope: str | None = None
